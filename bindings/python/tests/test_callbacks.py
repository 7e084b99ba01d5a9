# SPDX-License-Identifier: MIT
"""call_soon/call_later/call_at/call_soon_threadsafe, time, run/stop/close."""

import asyncio
import contextvars
import sys
import threading
import time
import unittest

from .base import LoopCase, twin

cvar = contextvars.ContextVar('cvar', default='unset')


class SchedulingTests(LoopCase):

    def test_call_soon_order(self):
        out = []
        for i in range(10):
            self.loop.call_soon(out.append, i)
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, list(range(10)))

    def test_call_soon_next_iteration(self):
        out = []

        def first():
            out.append('first')
            self.loop.call_soon(out.append, 'nested')
        self.loop.call_soon(first)
        self.loop.call_soon(out.append, 'second')
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, ['first', 'second'])
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, ['first', 'second', 'nested'])

    def test_handle_cancel(self):
        out = []
        h = self.loop.call_soon(out.append, 1)
        self.assertIsInstance(h, asyncio.Handle)
        h.cancel()
        self.assertTrue(h.cancelled())
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, [])

    def test_call_later_order_and_cancel(self):
        out = []
        self.loop.call_later(0.03, out.append, 3)
        self.loop.call_later(0.01, out.append, 1)
        t = self.loop.call_later(0.02, out.append, 'cancelled')
        self.loop.call_later(0.02, out.append, 2)
        self.assertIsInstance(t, asyncio.TimerHandle)
        t.cancel()
        self.assertTrue(t.cancelled())
        self.loop.call_later(0.05, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, [1, 2, 3])

    def test_timer_never_early(self):
        seen = []
        start = self.loop.time()
        for d in (0.001, 0.005, 0.01, 0.02):
            when = start + d
            self.loop.call_at(when, lambda w=when: seen.append(
                self.loop.time() - w))
        self.loop.call_at(start + 0.03, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(len(seen), 4)
        for late in seen:
            self.assertGreaterEqual(late, -1e-6)

    def test_time_is_monotonic_clock(self):
        t0 = self.loop.time()
        m0 = time.monotonic()
        time.sleep(0.01)
        dt = self.loop.time() - t0
        self.assertAlmostEqual(dt, time.monotonic() - m0, delta=0.005)
        self.assertIsInstance(self.loop.time(), float)

    def test_time_reads_time_monotonic(self):
        # asyncio's loop.time() is time.monotonic(): a program may mix the
        # two (a deadline taken from one, checked against the other).
        m0 = time.monotonic()
        t = self.loop.time()
        m1 = time.monotonic()
        self.assertLessEqual(m0, t)
        self.assertLessEqual(t, m1)

    def test_timer_when(self):
        when = self.loop.time() + 10
        h = self.loop.call_at(when, lambda: None)
        self.assertEqual(h.when(), when)
        h.cancel()

    def test_many_cancelled_timers(self):
        out = []
        hs = [self.loop.call_later(0.001 * (i % 10), out.append, i)
              for i in range(500)]
        for h in hs[::2]:
            h.cancel()
        self.loop.call_later(0.03, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(sorted(out), list(range(1, 500, 2)))

    def test_debug_source_traceback_ends_at_the_caller(self):
        # Debug mode records where each handle was made: the last frame is
        # the line that called the loop, never a frame inside libloop.
        self.loop.set_debug(True)

        def check(h):
            line = sys._getframe(1).f_lineno - 1
            self.assertEqual(tuple(h._source_traceback[-1])[:3],
                             (__file__, line, 'test_debug_source_traceback_ends_at_the_caller'))
            h.cancel()
        h = self.loop.call_soon(lambda: None)
        check(h)
        h = self.loop.call_soon_threadsafe(lambda: None)
        check(h)
        h = self.loop.call_later(0, lambda: None)
        check(h)
        h = self.loop.call_at(self.loop.time(), lambda: None)
        check(h)

    def test_call_soon_threadsafe(self):
        out = []

        def worker():
            for i in range(1000):
                self.loop.call_soon_threadsafe(out.append, i)
            self.loop.call_soon_threadsafe(self.loop.stop)
        th = threading.Thread(target=worker)
        self.loop.call_soon(th.start)
        self.loop.run_forever()
        th.join()
        self.assertEqual(out, list(range(1000)))

    def test_threadsafe_wakes_blocked_loop(self):
        fut = self.loop.create_future()
        t = threading.Timer(0.05, self.loop.call_soon_threadsafe,
                            (fut.set_result, 'woke'))
        t.start()
        t0 = time.monotonic()
        self.assertEqual(self.loop.run_until_complete(fut), 'woke')
        self.assertLess(time.monotonic() - t0, 2)
        t.join()

    def test_run_until_complete(self):
        async def coro():
            await asyncio.sleep(0.01)
            return 'done'
        self.assertEqual(self.loop.run_until_complete(coro()), 'done')
        fut = self.loop.create_future()
        self.loop.call_soon(fut.set_exception, ValueError('boom'))
        with self.assertRaisesRegex(ValueError, 'boom'):
            self.loop.run_until_complete(fut)

    def test_stop_before_complete(self):
        fut = self.loop.create_future()
        self.loop.call_soon(self.loop.stop)
        with self.assertRaisesRegex(RuntimeError, 'Event loop stopped before'):
            self.loop.run_until_complete(fut)

    def test_stop_when_not_running_runs_one_iteration(self):
        out = []
        self.loop.call_soon(out.append, 1)
        self.loop.stop()
        self.loop.run_forever()
        self.assertEqual(out, [1])

    def test_is_running_and_nested_run(self):
        out = []

        # asyncio 3.13's run_forever runs its cleanup when its own checks
        # fail, which unsets the running loop: that loop then cannot go on.
        breaks_on_nested_run_forever = (
            sys.version_info[:2] == (3, 13)
            and isinstance(self.loop, asyncio.base_events.BaseEventLoop))

        async def inner():
            out.append(self.loop.is_running())
            if not breaks_on_nested_run_forever:
                with self.assertRaisesRegex(RuntimeError, 'already running'):
                    self.loop.run_forever()
            coro = asyncio.sleep(0)
            with self.assertRaisesRegex(RuntimeError, 'already running'):
                self.loop.run_until_complete(coro)
            coro.close()
        self.assertFalse(self.loop.is_running())
        self.loop.run_until_complete(inner())
        self.assertEqual(out, [True])

    def test_other_loop_running(self):
        other = self.new_loop()
        coro = asyncio.sleep(0)

        async def main():
            with self.assertRaisesRegex(
                    RuntimeError, 'Cannot run the event loop while another'):
                other.run_until_complete(coro)
        try:
            self.loop.run_until_complete(main())
        finally:
            coro.close()
            other.close()

    def test_close(self):
        self.assertFalse(self.loop.is_closed())
        self.loop.close()
        self.assertTrue(self.loop.is_closed())
        self.loop.close()  # idempotent
        for call in (lambda: self.loop.call_soon(print),
                     lambda: self.loop.call_later(1, print),
                     lambda: self.loop.call_soon_threadsafe(print),
                     self.loop.run_forever):
            with self.assertRaisesRegex(RuntimeError, 'Event loop is closed'):
                call()
        coro = asyncio.sleep(0)
        with self.assertRaisesRegex(RuntimeError, 'Event loop is closed'):
            self.loop.run_until_complete(coro)
        coro.close()

    def test_close_running_loop(self):
        async def main():
            with self.assertRaisesRegex(RuntimeError,
                                        'Cannot close a running event loop'):
                self.loop.close()
        self.loop.run_until_complete(main())

    def test_type_errors(self):
        self.loop.set_debug(True)

        async def coro():
            pass
        for bad in (1, None, 'str'):
            with self.assertRaises(TypeError):
                self.loop.call_soon(bad)
            with self.assertRaises(TypeError):
                self.loop.call_later(0, bad)
        c = coro()
        with self.assertRaisesRegex(TypeError, 'coroutines cannot be used'):
            self.loop.call_soon(c)
        with self.assertRaisesRegex(TypeError, 'coroutines cannot be used'):
            self.loop.call_soon(coro)
        c.close()
        with self.assertRaises(TypeError):
            self.loop.call_later(None, print)
        with self.assertRaises(TypeError):
            self.loop.call_at(None, print)

    def test_contextvars(self):
        out = []
        ctx = contextvars.copy_context()
        ctx.run(cvar.set, 'in-ctx')
        self.loop.call_soon(lambda: out.append(cvar.get()), context=ctx)
        cvar.set('outer')
        try:
            self.loop.call_soon(lambda: out.append(cvar.get()))
            self.loop.call_later(0.001, lambda: out.append(cvar.get()))
        finally:
            cvar.set('unset')

        def setter():
            cvar.set('changed-in-callback')
        self.loop.call_soon(setter)
        self.loop.call_soon(lambda: out.append(cvar.get()))
        self.loop.call_later(0.01, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, ['in-ctx', 'outer', 'unset', 'outer'])

    def test_busy_chain_does_not_starve_timers_io_threadsafe(self):
        import socket
        r, w = socket.socketpair()
        fired = {}
        spins = [0]
        t0 = time.monotonic()

        def chain():
            spins[0] += 1
            if len(fired) == 3 or time.monotonic() - t0 > 5:
                self.loop.stop()
            else:
                self.loop.call_soon(chain)

        def on_read():
            r.recv(10)
            self.loop.remove_reader(r)
            fired['io'] = spins[0]
        self.loop.add_reader(r, on_read)
        self.loop.call_later(0.01, lambda: fired.setdefault('timer', spins[0]))
        threading.Timer(0.02, w.send, (b'x',)).start()
        threading.Timer(0.03, self.loop.call_soon_threadsafe,
                        (lambda: fired.setdefault('ts', spins[0]),)).start()
        self.loop.call_soon(chain)
        try:
            self.loop.run_forever()
        finally:
            r.close()
            w.close()
        self.assertEqual(set(fired), {'timer', 'io', 'ts'})
        self.assertLess(time.monotonic() - t0, 1)

    def test_busy_chain_timer_only(self):
        t0 = time.monotonic()
        fired = []

        def chain():
            if fired or time.monotonic() - t0 > 5:
                self.loop.stop()
            else:
                self.loop.call_soon(chain)
        self.loop.call_later(0.01, fired.append, 'timer')
        self.loop.call_soon(chain)
        self.loop.run_forever()
        self.assertEqual(fired, ['timer'])
        self.assertLess(time.monotonic() - t0, 1)

    def test_get_running_loop_in_callbacks(self):
        out = []
        self.loop.call_soon(lambda: out.append(asyncio.get_running_loop()))
        self.loop.call_later(0, lambda: out.append(asyncio.get_running_loop()))
        self.loop.call_later(0.01, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, [self.loop, self.loop])
        with self.assertRaises(RuntimeError):
            asyncio.get_running_loop()

    def test_get_debug_follows_set_debug_for_new_futures(self):
        # asyncio's Future and Task ask loop.get_debug() as each is made:
        # in debug mode they record where they were made.
        loop = self.loop
        loop.set_debug(False)
        self.assertFalse(loop.get_debug())
        self.assertIsNone(loop.create_future()._source_traceback)
        loop.set_debug(True)
        self.assertTrue(loop.get_debug())
        fut = loop.create_future()
        self.assertTrue(fut._source_traceback)
        loop.set_debug(False)
        self.assertFalse(loop.get_debug())
        self.assertIsNone(loop.create_future()._source_traceback)

    def test_create_future_is_a_pending_future_of_this_loop(self):
        loop = self.loop
        fut = loop.create_future()
        self.assertIsInstance(fut, asyncio.Future)
        self.assertIs(fut.get_loop(), loop)
        self.assertFalse(fut.done())
        loop.call_soon(fut.set_result, 7)
        self.assertEqual(loop.run_until_complete(fut), 7)
        self.assertIsNot(loop.create_future(), fut)
        loop.close()
        # (asyncio makes futures on a closed loop too)
        self.assertIs(loop.create_future().get_loop(), loop)

    def test_timer_cancel_drops_callback_and_keeps_debug_repr(self):
        loop = self.loop
        out = []

        def marker_callback(x):
            out.append(x)

        loop.set_debug(False)
        plain = loop.call_later(0.001, marker_callback, 'plain')
        loop.set_debug(True)
        kept = loop.call_later(0.001, marker_callback, 'kept')
        loop.set_debug(False)
        for h in (plain, kept):
            h.cancel()
            h.cancel()   # a second cancel changes nothing
            self.assertTrue(h.cancelled())
            self.assertIsNone(h._callback)
            self.assertIsNone(h._args)
            self.assertIn('cancelled', repr(h))
        # Cancelled in debug mode (on at the cancel, not at the call):
        # the repr made at the cancel keeps the callback.
        loop.set_debug(True)
        plain.cancel()
        self.assertNotIn('marker_callback', repr(plain))
        late = loop.call_later(0.001, marker_callback, 'late')
        late.cancel()
        self.assertIn('marker_callback', repr(late))
        # (made in debug mode, cancelled out of it: where it was made only)
        self.assertNotIn('marker_callback', repr(kept))
        self.assertIn('created at', repr(kept))
        loop.set_debug(False)
        loop.call_later(0.01, loop.stop)
        loop.run_forever()
        self.assertEqual(out, [])

    def test_create_task_source_traceback_follows_debug_mode(self):
        # In debug mode a task records where it was made, ending at the
        # caller of create_task; out of it, nothing. Each switch counts.
        loop = self.loop

        async def coro():
            return 1

        def made_here(task):
            line = sys._getframe(1).f_lineno - 1
            self.assertEqual(tuple(task._source_traceback[-1])[:3],
                             (__file__, line, 'test_create_task_source_traceback_follows_debug_mode'))

        loop.set_debug(True)
        t1 = loop.create_task(coro())
        made_here(t1)
        loop.set_debug(False)
        t2 = loop.create_task(coro())
        self.assertIsNone(t2._source_traceback)
        loop.set_debug(True)
        t3 = loop.create_task(coro())
        made_here(t3)
        loop.set_debug(False)
        self.assertEqual(loop.run_until_complete(asyncio.gather(t1, t2, t3)), [1, 1, 1])

    def test_create_task_name_context_and_factory(self):
        loop = self.loop
        var = contextvars.ContextVar('var', default='outer')
        ctx = contextvars.copy_context()
        ctx.run(var.set, 'inner')

        async def read():
            return var.get()

        task = loop.create_task(read(), name='reader', context=ctx)
        self.assertIsInstance(task, asyncio.Task)
        self.assertEqual(task.get_name(), 'reader')
        self.assertEqual(loop.run_until_complete(task), 'inner')
        made = []

        def factory(loop, coro, **kwargs):
            made.append(coro)
            return asyncio.Task(coro, loop=loop, **kwargs)

        loop.set_task_factory(factory)
        self.assertEqual(loop.run_until_complete(loop.create_task(read())), 'outer')
        self.assertEqual(len(made), 1)
        loop.set_task_factory(None)
        self.assertEqual(loop.run_until_complete(loop.create_task(read())), 'outer')
        self.assertEqual(len(made), 1)
        loop.close()
        coro = read()
        with self.assertRaisesRegex(RuntimeError, 'closed'):
            loop.create_task(coro)
        coro.close()

    def test_timer_cancelled_from_its_own_callback_round(self):
        # A timer cancelled by an earlier timer of the same due batch does
        # not run; the others run in deadline order.
        loop = self.loop
        out = []
        now = loop.time()
        victims = []
        loop.call_at(now + 0.001, lambda: (out.append('a'), victims[0].cancel()))
        victims.append(loop.call_at(now + 0.002, out.append, 'cancelled'))
        loop.call_at(now + 0.003, out.append, 'c')
        loop.call_at(now + 0.02, loop.stop)
        time.sleep(0.005)   # all three due at the first look
        loop.run_forever()
        self.assertEqual(out, ['a', 'c'])


twin(SchedulingTests, globals(), task_machine=True)


class TimeOverrideTests(unittest.TestCase):
    """libloop only: loop.time is bound to time.monotonic per loop (no
    Python frame per call), but never over a subclass's own time()."""

    def test_subclass_time_is_kept(self):
        import libloop

        class Shifted(libloop.EventLoop):
            def time(self):
                return time.monotonic() + 1000.0

        loop = Shifted()
        try:
            self.assertGreater(loop.time() - time.monotonic(), 999.0)
            out = []
            loop.call_later(0.01, lambda: out.append('fired'))
            loop.call_later(0.02, loop.stop)
            loop.run_forever()
            self.assertEqual(out, ['fired'])
        finally:
            loop.close()

class BoundBuiltinsTests(unittest.TestCase):
    """libloop only: get_debug and create_future are bound per loop as C
    callables (no Python frame per call), never over a subclass's own,
    and close() drops them (they hold the loop)."""

    def test_subclass_methods_are_kept(self):
        import libloop

        class MyFuture(asyncio.Future):
            pass

        class Custom(libloop.EventLoop):
            def get_debug(self):
                return 'custom'

            def create_future(self):
                return MyFuture(loop=self)

        loop = Custom()
        try:
            self.assertEqual(loop.get_debug(), 'custom')
            fut = loop.create_future()
            self.assertIsInstance(fut, MyFuture)
            loop.call_soon(fut.set_result, 1)
            self.assertEqual(loop.run_until_complete(fut), 1)
        finally:
            loop.close()

    def test_subclass_create_task_is_kept(self):
        import libloop
        made = []

        class Custom(libloop.EventLoop):
            def create_task(self, coro, **kwargs):
                made.append(coro)
                return super().create_task(coro, **kwargs)

        async def one():
            return 1

        loop = Custom()
        try:
            loop.set_debug(True)
            loop.set_debug(False)
            self.assertNotIn('create_task', vars(loop))
            self.assertEqual(loop.run_until_complete(one()), 1)
            self.assertEqual(len(made), 1)
        finally:
            loop.close()

    def test_close_drops_the_bound_callables(self):
        import libloop
        loop = libloop.EventLoop()
        self.assertIn('get_debug', vars(loop))
        self.assertIn('create_future', vars(loop))
        self.assertIn('create_task', vars(loop))
        loop.close()
        for name in ('call_soon', 'get_debug', 'create_future', 'create_task'):
            self.assertNotIn(name, vars(loop))
        self.assertFalse(loop.get_debug())
        self.assertIs(loop.create_future().get_loop(), loop)


if __name__ == '__main__':
    unittest.main()
