# SPDX-License-Identifier: MIT
"""call_soon and the round of handles in C (cpython/soon.c and handles.c, bound on each
loop by EventLoop.__init__): twin tests of what a program sees of
call_soon from Python and from asyncio's own C Future and of its callbacks
running, and libloop-only tests of what the C side must get right itself:
references, the loop's lifetime, the Python fallback."""

import asyncio
import contextlib
import contextvars
import functools
import gc
import signal
import subprocess
import sys
import threading
import time
import unittest
import weakref

import libloop
from libloop import _hotpath
from libloop.scheduling import SchedulingMixin

from .base import LibloopLoop, LoopCase, twin

var = contextvars.ContextVar('var', default='unset')


class Hung(KeyboardInterrupt):
    """Raised in the main thread by watchdog()'s SIGINT: a
    KeyboardInterrupt subclass, so that both loops let it out of
    run_forever wherever the handler raises it."""


@contextlib.contextmanager
def watchdog(case, timeout):
    """Fail case, rather than hang, if the block has not ended within
    timeout seconds: a thread then sends SIGINT to the main thread, whose
    handler (here) raises Hung; a loop blocked in its poll wakes through
    the signal wake-up fd and lets it out. A loop that misses a wake-up
    (the broken round these tests look for) would otherwise sleep for
    good: no timer of its own could end the wait, the timer's callback
    being queued the same way."""
    armed = threading.Event()
    bitten = threading.Event()
    main = threading.main_thread().ident

    def on_sigint(signum, frame):
        if armed.is_set():
            armed.clear()
            raise Hung

    def bite():
        bitten.set()
        signal.pthread_kill(main, signal.SIGINT)
    old = signal.signal(signal.SIGINT, on_sigint)
    dog = threading.Timer(timeout, bite)
    armed.set()
    dog.start()
    try:
        yield
    except Hung:
        case.fail(f'still waiting after {timeout} s: the loop was not woken')
    finally:
        dog.cancel()
        dog.join()
        if armed.is_set() and bitten.is_set():
            # The bite came as the block ended: let its handler run here,
            # disarmed, before the old handler is back.
            armed.clear()
            time.sleep(0.05)
        armed.clear()
        signal.signal(signal.SIGINT, old)


class CallSoonTests(LoopCase):

    def test_arguments_and_context(self):
        out = []

        def cb(*args):
            out.append((args, var.get()))
        ctx = contextvars.copy_context()
        ctx.run(var.set, 'given')

        def schedule():   # in a context of its own, where var is 'caller'
            var.set('caller')
            self.loop.call_soon(cb)
            self.loop.call_soon(cb, 1)
            self.loop.call_soon(cb, 1, 2, 3, context=ctx)
            self.loop.call_soon(cb, *range(12))
            self.loop.call_soon(self.loop.stop)
        contextvars.copy_context().run(schedule)
        self.loop.run_forever()
        self.assertEqual(out, [((), 'caller'), ((1,), 'caller'), ((1, 2, 3), 'given'),
                               (tuple(range(12)), 'caller')])

    def test_handle_is_asyncios_and_cancels(self):
        out = []
        h = self.loop.call_soon(out.append, 'cancelled')
        self.assertIsInstance(h, asyncio.Handle)
        self.assertFalse(h.cancelled())
        self.assertIn('append', repr(h))
        h.cancel()
        self.assertTrue(h.cancelled())
        self.loop.call_soon(out.append, 'ran')
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, ['ran'])

    def test_a_callback_that_cancels_its_own_handle_lives_until_it_returns(self):
        # Handle.cancel() drops the handle's callback and arguments; the
        # round of handles must hold them while the callback runs, as
        # asyncio's Context.run(callback, *args) holds them on its stack.
        # The callback is a partial, which no Python frame keeps alive.
        seen = []
        handles = []

        def body(payload):
            handles[0].cancel()
            gc.collect()
            seen.append(('alive during the call', probe() is not None, payload[0]))
        cb = functools.partial(body, ['payload'])
        probe = weakref.ref(cb, lambda _ref: seen.append('freed'))
        handles.append(self.loop.call_soon(cb))
        del cb
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        gc.collect()
        self.assertEqual(seen, [('alive during the call', True, 'payload'), 'freed'])

    def test_bad_calls_raise(self):
        with self.assertRaises(TypeError):
            self.loop.call_soon()
        with self.assertRaises(TypeError):
            self.loop.call_soon(print, bad=1)
        with self.assertRaises(TypeError):
            self.loop.call_soon(print, *range(20), context=None, bad=1)
        self.loop.set_debug(True)
        with self.assertRaises(TypeError):
            self.loop.call_soon(42)
        self.loop.close()
        with self.assertRaisesRegex(RuntimeError, 'closed'):
            self.loop.call_soon(print)

    def test_future_callbacks_in_order_and_context(self):
        # asyncio's C Future schedules its done callbacks with
        # loop.call_soon(cb, fut, context=ctx) from C.
        out = []
        fut = self.loop.create_future()
        ctx = contextvars.copy_context()
        ctx.run(var.set, 'ctx')
        fut.add_done_callback(lambda f: out.append(('a', var.get())))
        fut.add_done_callback(lambda f: out.append(('b', var.get())), context=ctx)
        fut.set_result(None)
        self.loop.run_until_complete(asyncio.sleep(0))
        self.assertEqual(out, [('a', 'unset'), ('b', 'ctx')])

    def test_errors_reported_and_the_round_goes_on(self):
        # (the round of handles runs in C on libloop: run_handles)
        seen, out = [], []
        self.loop.set_exception_handler(lambda loop, ctx: seen.append(ctx))

        def bad():
            raise ValueError('bad')
        h = self.loop.call_soon(bad)
        self.loop.call_soon(out.append, 'after')
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, ['after'])
        self.assertEqual(len(seen), 1)
        self.assertIsInstance(seen[0]['exception'], ValueError)
        self.assertIs(seen[0]['handle'], h)
        self.assertIsNotNone(seen[0]['exception'].__traceback__)

    def test_keyboard_interrupt_raised_and_the_rest_kept(self):
        out = []

        def interrupt():
            raise KeyboardInterrupt
        self.loop.call_soon(interrupt)
        self.loop.call_soon(out.append, 'later')
        with self.assertRaises(KeyboardInterrupt):
            self.loop.run_forever()
        self.assertEqual(out, [])
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, ['later'])

    def test_debug_handles_record_their_source(self):
        self.loop.set_debug(True)
        h = self.loop.call_soon(print)
        self.assertTrue(h._source_traceback)
        self.assertEqual(h._source_traceback[-1].name, 'test_debug_handles_record_their_source')
        h.cancel()


twin(CallSoonTests, globals())


class HostRoundTests(LoopCase):
    """The orderings at the end of a round that the loop's round (in C on
    libloop: host.c's host_round) must keep: what is queued while a round
    runs, from a signal handler or from another thread, runs without
    waiting for another event (the loop is otherwise idle in each test, so
    a lost wake-up shows as a timeout)."""

    def test_signal_handler_queues_a_callback_during_the_round(self):
        # The handler runs inside the callback that raises the signal, at
        # each place of a round of three (the last: just before the round's
        # end); its callback must run in the next iteration.
        loop = self.loop
        for at in range(3):
            fut = loop.create_future()
            order = []

            def handler(signum, frame, fut=fut, order=order):
                order.append('handler')
                loop.call_soon(lambda: fut.done() or fut.set_result(order))

            def step(i, at=at, order=order):
                order.append(i)
                if i == at:
                    signal.raise_signal(signal.SIGUSR1)
            old = signal.signal(signal.SIGUSR1, handler)
            try:
                for i in range(3):
                    loop.call_soon(step, i)
                got = self.run_coro(asyncio.wait_for(fut, 5))
            finally:
                signal.signal(signal.SIGUSR1, old)
            expected = [0, 1, 2]
            expected.insert(at + 1, 'handler')
            self.assertEqual(got, expected)

    def test_thread_safe_posts_racing_the_end_of_a_round(self):
        # A callback that releases the GIL for a while, and a post from
        # another thread made while it runs, at its end or after it: the
        # posted callback runs, whichever side of the round's end it lands.
        loop = self.loop
        ran = threading.Event()
        missed = []

        def poster():
            for i in range(150):
                ran.clear()
                loop.call_soon_threadsafe(time.sleep, 0.0003)
                time.sleep((i % 15) * 0.00004)
                loop.call_soon_threadsafe(ran.set)
                if not ran.wait(5):
                    missed.append(i)
                    return
            loop.call_soon_threadsafe(done.set_result, None)

        done = loop.create_future()
        t = threading.Thread(target=poster)
        t.start()
        try:
            self.run_coro(asyncio.wait_for(done, 60), timeout=70)
        finally:
            t.join()
        self.assertEqual(missed, [])

    def test_signal_handler_after_a_round_wakes_the_idle_loop(self):
        # A plain signal.signal handler that calls call_soon (not the
        # thread-safe form) once the loop has finished a round and sleeps:
        # the loop wakes through its signal wake-up fd (installed here by
        # add_signal_handler, on both loops), the handler runs, and its
        # callback must run at once. A round that left the loop believing
        # the host queue was already signalled would leave it queued until
        # another event (here the 5 s timeout; with the round's flags left
        # up for good, as a broken C round would leave them, nothing runs:
        # the watchdog ends the wait after 10 s, and the test fails).
        loop = self.loop
        loop.add_signal_handler(signal.SIGUSR2, lambda: None)
        main = threading.main_thread().ident
        waits = []
        try:
            for i in range(10):
                fut = loop.create_future()

                def handler(signum, frame, fut=fut, i=i):
                    loop.call_soon(lambda: fut.done() or fut.set_result(i))
                old = signal.signal(signal.SIGUSR1, handler)
                try:
                    for _ in range(3):   # a round of work before the sleep
                        loop.call_soon(len, ())
                    kill = threading.Timer(0.02, signal.pthread_kill, (main, signal.SIGUSR1))
                    t0 = time.monotonic()
                    kill.start()
                    try:
                        with watchdog(self, 10):
                            self.assertEqual(self.run_coro(asyncio.wait_for(fut, 5)), i)
                    finally:
                        kill.join()
                    waits.append(time.monotonic() - t0)
                finally:
                    signal.signal(signal.SIGUSR1, old)
        finally:
            loop.remove_signal_handler(signal.SIGUSR2)
        self.assertLess(max(waits), 2.0, waits)

    def test_system_exit_in_a_callback_then_thread_safe_posts_wake_the_loop(self):
        # SystemExit leaves run_forever; the loop's flags are back down
        # after the round all the same: a post from another thread wakes
        # the idle loop.
        loop = self.loop
        out = []

        def leave():
            raise SystemExit(3)
        loop.call_soon(leave)
        loop.call_soon(out.append, 'kept')
        with self.assertRaises(SystemExit):
            loop.run_forever()
        fut = loop.create_future()
        timer = threading.Timer(0.05, loop.call_soon_threadsafe, (fut.set_result, 'woken'))
        timer.start()
        try:
            self.assertEqual(self.run_coro(asyncio.wait_for(fut, 5)), 'woken')
        finally:
            timer.join()
        self.assertEqual(out, ['kept'])


twin(HostRoundTests, globals())


class TestCallSoonInC(LoopCase, LibloopLoop, unittest.TestCase):
    """libloop only."""

    def setUp(self):
        super().setUp()
        if not _hotpath.ENABLED:
            self.skipTest('LIBLOOP_PY_HOTPATH=0: call_soon is Python (TestWithoutHotPath)')

    def test_call_soon_is_the_builtin(self):
        for fn in (self.loop.call_soon, self.loop._run_handles):
            self.assertEqual(type(fn).__name__, 'builtin_function_or_method')
            self.assertIs(fn.__self__, self.loop)

    def test_the_round_is_the_builtin(self):
        self.assertEqual(type(self.loop._host_call).__name__, 'builtin_function_or_method')
        self.assertIs(self.loop._host_call.__self__, self.loop)

    def test_the_round_counts_callbacks_run_and_not_cancelled(self):
        before = self.loop.stats().callbacks
        for i in range(20):
            h = self.loop.call_soon(len, ())
            if i % 4 == 0:
                h.cancel()
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(self.loop.stats().callbacks - before, 16)   # 15 + stop

    def test_debug_and_subclass_rounds_are_python(self):
        # Debug mode: the builtin hands the call to _host_run (it times
        # each handle); a subclass's own _host_run is the loop's round.
        calls = []
        self.loop.set_debug(True)
        self.loop.slow_callback_duration = 0
        self.loop.call_soon(calls.append, 'ran')
        self.loop.call_soon(self.loop.stop)
        with self.assertLogs('asyncio', 'WARNING') as logs:
            self.loop.run_forever()
        self.loop.set_debug(False)
        self.assertEqual(calls, ['ran'])
        self.assertTrue(any('Executing' in m for m in logs.output))

        class Own(libloop.EventLoop):
            def _host_run(self, *args):
                calls.append('own')
                return super()._host_run(*args)
        loop = Own()
        try:
            self.assertNotEqual(type(loop._host_call).__name__, 'builtin_function_or_method')
            loop.call_soon(loop.stop)
            loop.run_forever()
        finally:
            loop.close()
        self.assertIn('own', calls)

    def test_references_given_back(self):
        cb = lambda *a: None  # noqa: E731
        arg = object()
        ctx = contextvars.copy_context()
        before = [sys.getrefcount(o) for o in (cb, arg, ctx, self.loop)]
        def bad(*a):
            raise ValueError(a)
        self.loop.set_exception_handler(lambda loop, context: None)
        for _ in range(1000):
            self.loop.call_soon(cb, arg)
            self.loop.call_soon(cb, arg, context=ctx)
            self.loop.call_soon(bad, arg, context=ctx)
            h = self.loop.call_soon(cb)
            h.cancel()
        del h
        fut = self.loop.create_future()
        for _ in range(100):
            fut.add_done_callback(cb, context=ctx)
        fut.set_result(arg)
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        del fut
        gc.collect()
        after = [sys.getrefcount(o) for o in (cb, arg, ctx, self.loop)]
        self.assertEqual(after, before)

    def test_loop_freed(self):
        # The builtin holds its loop: close() lets go of it, and a loop
        # dropped without close() goes with the garbage collector.
        loop = libloop.new_event_loop()
        ref = weakref.ref(loop)
        loop.call_soon(print)
        loop.close()
        self.assertNotIn('call_soon', vars(loop))
        del loop
        gc.collect()
        self.assertIsNone(ref())

        loop = libloop.new_event_loop()
        ref = weakref.ref(loop)
        loop._closed = loop._soon_slow = True   # (no unclosed-loop warning)
        del loop
        gc.collect()
        self.assertIsNone(ref())

    def test_subclass_call_soon_is_kept(self):
        class Counting(libloop.EventLoop):
            calls = 0

            def call_soon(self, *args, **kwargs):
                Counting.calls += 1
                return super().call_soon(*args, **kwargs)

        loop = Counting()
        try:
            self.assertNotIn('call_soon', vars(loop))
            loop.call_soon(loop.stop)
            loop.run_forever()
            self.assertEqual(Counting.calls, 1)
        finally:
            loop.close()

    def test_fallback_is_the_python_method(self):
        self.assertIs(_hotpath._soon['keep'][1], SchedulingMixin.call_soon)


class TestWithoutHotPath(unittest.TestCase):
    """LIBLOOP_PY_HOTPATH=0 (a subprocess): call_soon is the Python method."""

    def test_python_call_soon(self):
        code = ('import libloop; l = libloop.new_event_loop(); '
                'print(type(l.call_soon).__name__); l.close()')
        env = dict(__import__('os').environ, LIBLOOP_PY_HOTPATH='0')
        out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.stdout.strip(), 'method', out.stderr)


if __name__ == '__main__':
    unittest.main()
