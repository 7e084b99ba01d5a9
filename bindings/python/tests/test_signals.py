# SPDX-License-Identifier: MIT
"""add_signal_handler / remove_signal_handler, on both loops."""

import asyncio
import os
import signal
import sys
import threading
import unittest

from .base import LibloopLoop, LoopCase, twin


class SignalTests(LoopCase):

    def tearDown(self):
        super().tearDown()
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def test_handler_runs_once_per_delivery(self):
        got = []

        async def main():
            self.loop.add_signal_handler(signal.SIGUSR1, got.append, 'usr1')
            os.kill(os.getpid(), signal.SIGUSR1)
            for _ in range(100):
                if got:
                    break
                await asyncio.sleep(0.01)
            os.kill(os.getpid(), signal.SIGUSR1)
            await asyncio.sleep(0.05)
        self.run_coro(main())
        self.assertEqual(got, ['usr1', 'usr1'])

    def test_delivered_while_loop_is_busy(self):
        got = []

        def spin():      # keeps the loop's ready queue non-empty
            if not got:
                self.loop.call_soon(spin)

        async def main():
            self.loop.add_signal_handler(signal.SIGUSR1, got.append, 1)
            spin()
            await asyncio.sleep(0)
            threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGUSR1)).start()
            deadline = self.loop.time() + 2
            while not got and self.loop.time() < deadline:
                await asyncio.sleep(0)     # never idle: the loop never blocks
            return self.loop.time() < deadline
        self.assertTrue(self.run_coro(main()), 'not delivered while the loop was busy')
        self.assertEqual(got, [1])

    def test_added_before_run(self):
        got = []
        self.loop.add_signal_handler(signal.SIGUSR1, got.append, 'early')
        os.kill(os.getpid(), signal.SIGUSR1)   # the loop is not running yet
        self.loop.run_until_complete(asyncio.sleep(0.05))
        self.assertEqual(got, ['early'])

    def test_remove_restores_python_handlers(self):
        self.loop.add_signal_handler(signal.SIGINT, lambda: None)
        self.assertNotEqual(signal.getsignal(signal.SIGINT), signal.default_int_handler)
        self.assertTrue(self.loop.remove_signal_handler(signal.SIGINT))
        self.assertFalse(self.loop.remove_signal_handler(signal.SIGINT))
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)
        self.loop.add_signal_handler(signal.SIGUSR1, lambda: None)
        self.loop.remove_signal_handler(signal.SIGUSR1)
        self.assertEqual(signal.getsignal(signal.SIGUSR1), signal.SIG_DFL)

        async def interrupted():
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(5)
        with self.assertRaises(KeyboardInterrupt):
            self.loop.run_until_complete(interrupted())

    def test_close_removes_handlers(self):
        self.loop.add_signal_handler(signal.SIGUSR1, lambda: None)
        self.loop.close()
        self.assertEqual(signal.getsignal(signal.SIGUSR1), signal.SIG_DFL)

    def test_errors(self):
        async def coro():
            pass
        with self.assertRaisesRegex(TypeError, 'coroutines cannot be used with add_signal_handler'):
            self.loop.add_signal_handler(signal.SIGUSR1, coro)
        with self.assertRaisesRegex(TypeError, 'sig must be an int'):
            self.loop.add_signal_handler('SIGUSR1', print)
        with self.assertRaisesRegex(ValueError, 'invalid signal number'):
            self.loop.add_signal_handler(10_000, print)
        with self.assertRaisesRegex(RuntimeError, f'sig {signal.SIGKILL:d} cannot be caught'):
            self.loop.add_signal_handler(signal.SIGKILL, print)
        errors = []

        def in_thread():
            try:
                self.loop.add_signal_handler(signal.SIGUSR1, print)
            except RuntimeError as exc:
                errors.append(exc)
        t = threading.Thread(target=in_thread)
        t.start()
        t.join()
        self.assertEqual(len(errors), 1)
        self.loop.close()
        with self.assertRaisesRegex(RuntimeError, 'Event loop is closed'):
            self.loop.add_signal_handler(signal.SIGUSR1, print)

    def test_with_runner_sigint(self):
        got = []

        async def main():
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGINT, got.append, 'mine')
            os.kill(os.getpid(), signal.SIGINT)     # ours, not the Runner's
            await asyncio.sleep(0.05)
            loop.remove_signal_handler(signal.SIGINT)
            return 'done'
        self.loop.close()
        with asyncio.Runner(loop_factory=self.new_loop) as runner:
            self.assertEqual(runner.run(main()), 'done')
        self.assertEqual(got, ['mine'])
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)


twin(SignalTests, globals())


class HandlerAnywhereTests(LibloopLoop, LoopCase, unittest.TestCase):
    """A Python signal handler runs between any two calls of the loop's own
    Python code (CPython checks for signals at calls). What it schedules
    with call_soon must run in the next iteration, not wait for an unrelated
    event: asyncio.Runner's SIGINT handler cancels the main task with
    call_soon, and a handler installed with signal.signal may too.
    (libloop-only: asyncio's selector loop can lose such a call_soon itself,
    when the handler runs between choosing its select timeout and the
    select.)"""

    def test_call_soon_from_a_handler_after_each_call_of_an_idle_iteration(self):
        # A profile hook stands for the handler: after the k-th builtin call
        # of the host-queue trampoline's code (scheduling.py) that finds
        # nothing queued, in the trampoline call that then goes idle, it
        # schedules one callback; the loop then has nothing to do but a 10 s
        # sleep, which the callback cancels. Lost, it would run only when the
        # sleep ends. k runs over every such call.
        from libloop import scheduling
        loop = self.loop
        code_file = scheduling.__file__
        late = []
        k = 0
        while True:
            shot = {'n': 0, 'at': None, 'ran': None, 'sleeper': None, 'armed': True}

            def ran(shot=shot):
                shot['ran'] = loop.time()
                shot['sleeper'].cancel()

            def hook(frame, event, arg, shot=shot, k=k):
                if not shot['armed'] or frame.f_code.co_filename != code_file:
                    return
                if event == 'c_return' and not loop._ready:
                    if shot['n'] == k:
                        shot['at'] = loop.time()
                        shot['where'] = (frame.f_code.co_name, frame.f_lineno)
                        loop.call_soon(ran)
                    shot['n'] += 1
                elif event == 'return' and frame.f_code.co_name == '_host_run':
                    # the trampoline call that goes idle is over
                    shot['armed'] = False
                    if shot['at'] is None:      # no k-th call: end the sleep
                        loop.call_soon(shot['sleeper'].cancel)

            async def main(shot=shot, hook=hook):
                shot['sleeper'] = asyncio.ensure_future(asyncio.sleep(10))
                sys.setprofile(hook)
                try:
                    await shot['sleeper']
                except asyncio.CancelledError:
                    pass
                finally:
                    sys.setprofile(None)
            self.run_coro(main(), timeout=30)
            if shot['at'] is None:
                break       # no k-th call: every one was tried
            if shot['ran'] is None or shot['ran'] - shot['at'] > 5:
                late.append(shot['where'])
            k += 1
        self.assertGreater(k, 0, 'the hook never ran in the trampoline')
        self.assertEqual(late, [])
