# SPDX-License-Identifier: MIT
"""Task corner cases (cancellation races, bad yields, exits), run on all
three flavours: libloop.Task must give exactly asyncio.Task's outcomes."""

import asyncio
import sys
import gc
import contextvars
import unittest

from .base import LoopCase, twin

cvar = contextvars.ContextVar('edge_cvar', default='unset')


class TaskEdgesTests(LoopCase):

    def test_inner_task_ignores_cancellation(self):
        # asyncio: cancelling the outer task cancels the inner one it
        # awaits; if the inner swallows it, the outer gets its result.
        async def inner():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                await asyncio.sleep(0)
                await asyncio.sleep(0.001)
                return 'swallowed'

        async def outer(t):
            return await t

        async def main():
            ti = self.loop.create_task(inner())
            to = self.loop.create_task(outer(ti))
            await asyncio.sleep(0.001)
            self.assertTrue(to.cancel('go'))
            self.assertTrue(to.cancel('again'))
            res = await to
            return res, to.cancelled(), to.cancelling(), ti.cancelling()
        self.assertEqual(self.run_coro(main()), ('swallowed', False, 2, 2))

    def test_self_cancel_then_return_ends_cancelled(self):
        async def body():
            asyncio.current_task().cancel('self')
            return 'value'

        async def main():
            t = self.loop.create_task(body())
            with self.assertRaises(asyncio.CancelledError) as cm:
                await t
            return t.cancelled(), cm.exception.args
        self.assertEqual(self.run_coro(main()), (True, ('self',)))

    def test_self_cancel_then_await(self):
        async def body():
            asyncio.current_task().cancel()
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                return 'caught'
            return 'slept'

        async def main():
            t = self.loop.create_task(body())
            return await t, t.cancelling()
        self.assertEqual(self.run_coro(main()), ('caught', 1))

    def test_cancel_before_first_step(self):
        ran = []

        async def body():
            ran.append(1)

        async def main():
            t = self.loop.create_task(body())
            t.cancel('early')
            with self.assertRaises(asyncio.CancelledError) as cm:
                await t
            return t.cancelled(), cm.exception.args, ran
        self.assertEqual(self.run_coro(main()), (True, ('early',), []))

    def test_cancel_after_waiter_done(self):
        # The awaited future is done but the task has not woken yet:
        # cancel() must still throw CancelledError in (waiter refuses).
        async def main():
            fut = self.loop.create_future()

            async def body():
                try:
                    await fut
                except asyncio.CancelledError:
                    return 'cancelled', fut.result()
                return 'result'
            t = self.loop.create_task(body())
            await asyncio.sleep(0)
            fut.set_result(5)
            self.assertTrue(t.cancel())
            return await t
        self.assertEqual(self.run_coro(main()), ('cancelled', 5))

    def test_cancel_during_bare_yield(self):
        async def body():
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError as exc:
                return exc.args
            return 'no'

        async def main():
            t = self.loop.create_task(body())
            await asyncio.sleep(0)
            t.cancel('y')
            return await t
        self.assertEqual(self.run_coro(main()), ('y',))

    def test_uncancel_and_cancelling_after_done(self):
        async def main():
            t = self.loop.create_task(asyncio.sleep(1))
            await asyncio.sleep(0)
            t.cancel()
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)
            out = [t.cancelling(), t.uncancel(), t.uncancel(), t.uncancel()]
            out.append(t.cancel())
            return out
        self.assertEqual(self.run_coro(main()), [2, 1, 0, 0, False])

    def test_exception_and_exit_paths(self):
        async def boom():
            await asyncio.sleep(0)
            raise KeyError('k')

        async def main():
            t = self.loop.create_task(boom())
            with self.assertRaises(KeyError):
                await t
            return type(t.exception()).__name__, t.done(), t.cancelled()
        self.assertEqual(self.run_coro(main()), ('KeyError', True, False))

        async def leave():
            await asyncio.sleep(0)
            raise SystemExit(3)
        with self.assertRaises(SystemExit):
            self.loop.run_until_complete(leave())

    def test_bad_yields(self):
        async def main():
            class Bad:
                def __await__(self):
                    yield 'not a future'
            with self.assertRaises(RuntimeError) as cm:
                await Bad()
            msg1 = str(cm.exception)

            async def self_await():
                await asyncio.current_task()
            t = self.loop.create_task(self_await())
            with self.assertRaises(RuntimeError) as cm:
                await t
            msg2 = str(cm.exception).split(':')[0]
            other = asyncio.new_event_loop()
            try:
                with self.assertRaises(RuntimeError) as cm:
                    await other.create_future()
                msg3 = 'different loop' in str(cm.exception)
            finally:
                other.close()
            return msg1, msg2, msg3
        self.assertEqual(self.run_coro(main()),
                         ("Task got bad yield: 'not a future'",
                          'Task cannot await on itself', True))

    def test_task_api_surface(self):
        async def sleeper():
            await asyncio.sleep(10)

        async def main():
            t = self.loop.create_task(sleeper(), name='s1')
            await asyncio.sleep(0)
            r = repr(t)
            with self.assertRaises(RuntimeError):
                t.set_result(1)
            with self.assertRaises(RuntimeError):
                t.set_exception(ValueError())
            stack = t.get_stack()
            t.set_name('s2')
            t.cancel()
            await asyncio.gather(t, return_exceptions=True)
            return ('s1' in r, 'wait_for=' in r, len(stack) >= 1,
                    t.get_name(), t.get_coro().__name__, repr(t).split()[1])
        self.assertEqual(self.run_coro(main()),
                         (True, True, True, 's2', 'sleeper', 'cancelled'))

    def test_contexts_are_isolated(self):
        async def child():
            cvar.set('child')
            await asyncio.sleep(0)
            return cvar.get()

        async def main():
            cvar.set('main')
            t = self.loop.create_task(child())
            res = await t
            seen = []
            t.add_done_callback(lambda _: seen.append(
                (cvar.get(), asyncio.current_task())))
            await asyncio.sleep(0)
            return res, cvar.get(), seen
        self.assertEqual(self.run_coro(main()),
                         ('child', 'main', [('main', None)]))

    def test_create_task_needs_a_coroutine(self):
        with self.assertRaises(TypeError):
            self.loop.create_task(123)

    def test_create_task_follows_factory_debug_and_close(self):
        # Every way create_task can go: name and context by keyword, a task
        # factory set and reset, debug mode (the source traceback ends at
        # the caller), and a closed loop (RuntimeError).
        loop = self.loop
        ctx = contextvars.copy_context()
        ctx.run(cvar.set, 'in ctx')

        async def value():
            return cvar.get()
        t = loop.create_task(value(), name='named', context=ctx)
        self.assertEqual(t.get_name(), 'named')
        self.assertEqual(loop.run_until_complete(t), 'in ctx')
        made = []

        def factory(loop, coro, **kw):
            made.append(coro)
            return asyncio.Task(coro, loop=loop, **kw)
        loop.set_task_factory(factory)
        t = loop.create_task(value())
        self.assertEqual(len(made), 1)
        loop.run_until_complete(t)
        loop.set_task_factory(None)
        loop.run_until_complete(loop.create_task(value()))
        self.assertEqual(len(made), 1)
        loop.set_debug(True)
        t = loop.create_task(value())
        self.assertIsNotNone(t._source_traceback)
        if type(t) is asyncio.Task:  # (libloop.Task's ends one frame deeper)
            self.assertEqual(t._source_traceback[-1].filename, __file__)
        loop.run_until_complete(t)
        loop.set_debug(False)
        t = loop.create_task(value())
        self.assertIsNone(t._source_traceback)
        loop.run_until_complete(t)
        loop.close()
        coro = value()
        with self.assertRaisesRegex(RuntimeError, 'Event loop is closed'):
            loop.create_task(coro)
        coro.close()

    def test_wakeup_takes_one_iteration(self):
        # A task awaiting a future wakes in the iteration after the future
        # completes, as asyncio's Task.__wakeup (call_soon) does.
        async def main():
            order = []
            fut = self.loop.create_future()

            async def waiter():
                await fut
                order.append('woke')
            t = self.loop.create_task(waiter())
            await asyncio.sleep(0)
            fut.set_result(1)
            for i in range(3):
                order.append(i)
                await asyncio.sleep(0)
            await t
            return order
        self.assertEqual(self.run_coro(main()), [0, 'woke', 1, 2])

    def test_wait_for_cancels_inner_task(self):
        async def main():
            inner = self.loop.create_task(asyncio.sleep(10))
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(inner, 0.01)
            return inner.cancelled(), asyncio.current_task().cancelling()
        self.assertEqual(self.run_coro(main()), (True, 0))


    def test_a_never_retrieved_exception_is_reported_at_once(self):
        # The task is freed when its last step's handle goes, and its
        # exception reported then, without waiting for the garbage
        # collector (3.12 runs the handler in the task's context); in
        # debug mode too, where more frames hold on to the handle.
        name = contextvars.ContextVar('name', default='outside')

        async def failing():
            name.set('inside')
            1 / 0

        async def main():
            loop = asyncio.get_running_loop()
            seen = []
            loop.set_exception_handler(
                lambda loop, ctx: seen.append((type(ctx.get('exception')).__name__, name.get())))
            gc.disable()
            try:
                for debug in (False, True):
                    loop.set_debug(debug)
                    asyncio.ensure_future(failing())
                    await asyncio.sleep(0)
                    await asyncio.sleep(0)
            finally:
                gc.enable()
                loop.set_debug(False)
            return seen
        want_ctx = 'inside' if sys.version_info >= (3, 12) else 'outside'
        self.assertEqual(self.run_coro(main()), [('ZeroDivisionError', want_ctx)] * 2)


twin(TaskEdgesTests, globals(), task_machine=True)

if __name__ == '__main__':
    unittest.main()
