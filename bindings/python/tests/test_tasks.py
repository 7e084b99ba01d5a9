# SPDX-License-Identifier: MIT
"""Tasks and real asyncio code on top of the loop."""

import asyncio
import contextvars
import threading
import unittest

from .base import LoopCase, twin

cvar = contextvars.ContextVar('cvar', default=None)


class TasksTests(LoopCase):

    def test_create_task_name_context(self):
        async def coro():
            return cvar.get(), asyncio.current_task().get_name()
        ctx = contextvars.copy_context()
        ctx.run(cvar.set, 'ctx-value')

        async def main():
            t = self.loop.create_task(coro(), name='worker', context=ctx)
            self.assertEqual(t.get_name(), 'worker')
            self.assertIsNotNone(t.get_coro())
            return await t
        self.assertEqual(self.loop.run_until_complete(main()),
                         ('ctx-value', 'worker'))

    def test_cancel_cancelling_uncancel(self):
        async def main():
            started = asyncio.Event()

            async def sleeper():
                started.set()
                await asyncio.sleep(10)
            t = self.loop.create_task(sleeper())
            await started.wait()
            self.assertTrue(t.cancel('stop it'))
            self.assertEqual(t.cancelling(), 1)
            t.cancel()
            self.assertEqual(t.cancelling(), 2)
            self.assertEqual(t.uncancel(), 1)
            with self.assertRaises(asyncio.CancelledError) as cm:
                await t
            self.assertTrue(t.cancelled())
            return cm.exception.args
        self.assertEqual(self.run_coro(main()), ('stop it',))

    def test_current_and_all_tasks(self):
        async def child():
            await asyncio.sleep(0.01)

        async def main():
            me = asyncio.current_task()
            kids = [self.loop.create_task(child()) for _ in range(3)]
            tasks = asyncio.all_tasks()
            self.assertIn(me, tasks)
            for k in kids:
                self.assertIn(k, tasks)
            await asyncio.gather(*kids)
            self.assertEqual(asyncio.all_tasks(), {me})
            return me
        t = self.loop.run_until_complete(main())
        self.assertIsInstance(t, asyncio.Task)
        self.assertIsNone(asyncio.current_task(self.loop))

    def test_done_callbacks_with_context(self):
        out = []
        ctx = contextvars.copy_context()
        ctx.run(cvar.set, 'cb-ctx')

        async def main():
            fut = self.loop.create_future()
            fut.add_done_callback(lambda f: out.append((f.result(),
                                                        cvar.get())),
                                  context=ctx)
            self.loop.call_later(0.001, fut.set_result, 7)
            await fut
            await asyncio.sleep(0)
        self.loop.run_until_complete(main())
        self.assertEqual(out, [(7, 'cb-ctx')])

    def test_invalid_state(self):
        fut = self.loop.create_future()
        with self.assertRaises(asyncio.InvalidStateError):
            fut.result()
        fut.set_result(1)
        with self.assertRaises(asyncio.InvalidStateError):
            fut.set_result(2)

    def test_task_factory(self):
        seen = []

        def factory(loop, coro, **kw):
            seen.append(kw)
            return asyncio.Task(coro, loop=loop, **kw)
        self.assertIsNone(self.loop.get_task_factory())
        self.loop.set_task_factory(factory)
        self.assertIs(self.loop.get_task_factory(), factory)
        self.assertEqual(self.loop.run_until_complete(asyncio.sleep(0, 'x')),
                         'x')
        self.assertEqual(len(seen), 1)
        with self.assertRaises(TypeError):
            self.loop.set_task_factory(1)
        self.loop.set_task_factory(None)

    def test_gather_wait_for_timeout(self):
        async def val(d, v):
            await asyncio.sleep(d)
            return v

        async def main():
            res = await asyncio.gather(val(0.02, 'a'), val(0.01, 'b'),
                                       val(0, 'c'))
            try:
                await asyncio.wait_for(val(1, 'late'), 0.01)
                timed_out = False
            except asyncio.TimeoutError:
                timed_out = True
            try:
                async with asyncio.timeout(0.01):
                    await asyncio.sleep(1)
                ctx_timed_out = False
            except TimeoutError:
                ctx_timed_out = True
            fast = await asyncio.wait_for(val(0, 'fast'), 1)
            errs = await asyncio.gather(val(0, 1), asyncio.sleep('x'),
                                        return_exceptions=True)
            return res, timed_out, ctx_timed_out, fast, type(errs[1]).__name__
        self.assertEqual(self.run_coro(main()),
                         (['a', 'b', 'c'], True, True, 'fast', 'TypeError'))

    def test_taskgroup(self):
        async def main():
            out = []

            async def work(i):
                await asyncio.sleep(0.001 * i)
                out.append(i)
            async with asyncio.TaskGroup() as tg:
                for i in (3, 1, 2):
                    tg.create_task(work(i))

            async def boom():
                await asyncio.sleep(0)
                raise ValueError('tg failure')
            try:
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(asyncio.sleep(1))
                    tg.create_task(boom())
            except* ValueError as eg:
                failed = [str(e) for e in eg.exceptions]
            return out, failed
        # The group waits for all three. Their order is the timers' (tested
        # with the timers); here the 1 ms steps can swap when the loaded
        # machine preempts between the tasks' first steps.
        out, failed = self.run_coro(main())
        self.assertEqual((sorted(out), failed), ([1, 2, 3], ['tg failure']))

    def test_queue_lock_event_semaphore(self):
        async def main():
            q = asyncio.Queue(maxsize=2)
            got = []

            async def producer():
                for i in range(5):
                    await q.put(i)
                await q.put(None)

            async def consumer():
                while (item := await q.get()) is not None:
                    got.append(item)
            await asyncio.gather(producer(), consumer())

            lock = asyncio.Lock()
            order = []

            async def locked(i):
                async with lock:
                    order.append(('in', i))
                    await asyncio.sleep(0.001)
                    order.append(('out', i))
            await asyncio.gather(*(locked(i) for i in range(3)))

            ev = asyncio.Event()
            waiters = [self.loop.create_task(ev.wait()) for _ in range(3)]
            await asyncio.sleep(0)
            ev.set()
            woke = await asyncio.gather(*waiters)

            sem = asyncio.Semaphore(2)
            active = peak = 0

            async def limited():
                nonlocal active, peak
                async with sem:
                    active += 1
                    peak = max(peak, active)
                    await asyncio.sleep(0.001)
                    active -= 1
            await asyncio.gather(*(limited() for _ in range(6)))
            return got, order, woke, peak
        got, order, woke, peak = self.run_coro(main())
        self.assertEqual(got, [0, 1, 2, 3, 4])
        self.assertEqual(order, [('in', 0), ('out', 0), ('in', 1), ('out', 1),
                                 ('in', 2), ('out', 2)])
        self.assertEqual(woke, [True, True, True])
        self.assertEqual(peak, 2)

    def test_to_thread(self):
        async def main():
            cvar.set('propagated')
            return await asyncio.to_thread(
                lambda: (threading.current_thread() is not
                         threading.main_thread(), cvar.get()))
        self.assertEqual(self.run_coro(main()), (True, 'propagated'))

    def test_async_generators(self):
        async def agen(n):
            for i in range(n):
                await asyncio.sleep(0)
                yield i

        async def main():
            res = [x async for x in agen(5)]
            g = agen(10)
            first = await anext(g)
            await g.aclose()
            return res, first
        self.assertEqual(self.run_coro(main()), ([0, 1, 2, 3, 4], 0))

    def test_sleep_ordering(self):
        out = []

        async def s(d, tag):
            await asyncio.sleep(d)
            out.append(tag)

        async def main():
            await asyncio.gather(s(0.03, 'c'), s(0.01, 'a'), s(0.02, 'b'),
                                 s(0, 'zero'))
        self.run_coro(main())
        self.assertEqual(out, ['zero', 'a', 'b', 'c'])

    def test_shield_and_wait(self):
        async def main():
            inner = self.loop.create_task(asyncio.sleep(0.02, 'inner'))
            outer = asyncio.ensure_future(asyncio.shield(inner))
            await asyncio.sleep(0)
            outer.cancel()
            r = await inner
            done, pending = await asyncio.wait(
                [self.loop.create_task(asyncio.sleep(0, 1)),
                 self.loop.create_task(asyncio.sleep(1))],
                return_when=asyncio.FIRST_COMPLETED)
            for p in pending:
                p.cancel()
            return r, outer.cancelled(), len(done), len(pending)
        self.assertEqual(self.run_coro(main()), ('inner', True, 1, 1))


twin(TasksTests, globals(), task_machine=True)

if __name__ == '__main__':
    unittest.main()
