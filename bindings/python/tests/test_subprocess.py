# SPDX-License-Identifier: MIT
"""Subprocesses: asyncio.subprocess streams, protocols, signals, reaping."""

import asyncio
import os
import signal
import subprocess
import sys
import time
import unittest

import libloop

from .base import LibloopLoop, LoopCase, twin

PIPE = asyncio.subprocess.PIPE


class Proto(asyncio.SubprocessProtocol):
    def __init__(self, loop):
        self.events = []
        self.out = {1: b'', 2: b''}
        self.done = loop.create_future()

    def connection_made(self, transport):
        self.events.append('made')

    def pipe_data_received(self, fd, data):
        self.out[fd] += data

    def pipe_connection_lost(self, fd, exc):
        self.events.append(('pipe lost', fd, exc))

    def process_exited(self):
        self.events.append('exited')

    def connection_lost(self, exc):
        self.events.append('lost')
        self.done.set_result(exc)


class SubprocessTests(LoopCase):

    def test_communicate_and_returncode(self):
        async def main():
            p = await asyncio.create_subprocess_exec(
                'sh', '-c', 'cat; echo err >&2; exit 7', stdin=PIPE, stdout=PIPE, stderr=PIPE)
            self.assertIsInstance(p.pid, int)
            out, err = await p.communicate(b'to cat')
            self.assertEqual((out, err, p.returncode), (b'to cat', b'err\n', 7))
        self.run_coro(main())

    def test_shell_stderr_to_stdout_cwd_env(self):
        async def main():
            p = await asyncio.create_subprocess_shell(
                'echo "$GREETING" "$PWD"; echo oops >&2', stdout=PIPE,
                stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL,
                cwd='/', env={'GREETING': 'hello', 'PATH': os.environ['PATH']})
            out, err = await p.communicate()
            self.assertEqual((out, err), (b'hello /\noops\n', None))
            self.assertEqual(await p.wait(), 0)
        self.run_coro(main())

    def test_killed_child_returncode_is_minus_signal(self):
        async def main():
            p = await asyncio.create_subprocess_exec('sleep', '30')
            p.terminate()
            self.assertEqual(await p.wait(), -signal.SIGTERM)
            p = await asyncio.create_subprocess_exec('sleep', '30')
            p.send_signal(signal.SIGKILL)
            self.assertEqual(await p.wait(), -signal.SIGKILL)
            with self.assertRaises(ProcessLookupError):
                p.kill()
        self.run_coro(main())

    def test_no_zombie_after_exit(self):
        async def main():
            p = await asyncio.create_subprocess_exec('true')
            self.assertEqual(await p.wait(), 0)
            with self.assertRaises(ChildProcessError):
                os.waitpid(p.pid, os.WNOHANG)
        self.run_coro(main())

    def test_stdin_backpressure_4mib_through_cat(self):
        async def main():
            data = os.urandom(4 << 20)
            p = await asyncio.create_subprocess_exec('cat', stdin=PIPE, stdout=PIPE)
            reader = self.loop.create_task(p.stdout.read())
            t0 = self.loop.time()
            p.stdin.write(data)      # returns at once: the transport buffers
            self.assertLess(self.loop.time() - t0, 1.0)
            await p.stdin.drain()    # waits for cat to take it (pause/resume)
            p.stdin.close()
            self.assertEqual(await reader, data)
            self.assertEqual(await p.wait(), 0)
        self.run_coro(main(), timeout=30)

    def test_missing_program(self):
        async def main():
            with self.assertRaises(FileNotFoundError) as cm:
                await asyncio.create_subprocess_exec('/nonexistent/program-xyz')
            self.assertEqual(cm.exception.filename, '/nonexistent/program-xyz')
            with self.assertRaises(FileNotFoundError):
                await asyncio.create_subprocess_exec('no-such-program-xyz', stdout=PIPE)
        self.run_coro(main())

    def test_protocol_order(self):
        async def main():
            t, p = await self.loop.subprocess_exec(
                lambda: Proto(self.loop), 'sh', '-c', 'echo out; echo err >&2',
                stdin=subprocess.DEVNULL)
            self.assertIsNone(t.get_pipe_transport(0))
            self.assertIsNotNone(t.get_pipe_transport(1))
            self.assertIsNone(await p.done)
            self.assertEqual(p.out, {1: b'out\n', 2: b'err\n'})
            self.assertEqual(p.events[0], 'made')
            self.assertEqual(p.events[-1], 'lost')
            self.assertEqual(sorted(map(str, p.events[1:-1])),
                             sorted(map(str, ['exited', ('pipe lost', 1, None), ('pipe lost', 2, None)])))
            self.assertEqual(t.get_returncode(), 0)
            t.close()
        self.run_coro(main())

    def test_close_kills_running_child(self):
        async def main():
            t, p = await self.loop.subprocess_exec(
                lambda: Proto(self.loop), 'sleep', '30', stdin=None, stdout=None, stderr=None)
            t.close()
            self.assertTrue(t.is_closing())
            await p.done
            self.assertEqual(t.get_returncode(), -signal.SIGKILL)
        self.run_coro(main())

    def test_start_new_session(self):
        async def main():
            p = await asyncio.create_subprocess_exec(
                sys.executable, '-c', 'import os; print(os.getsid(0) == os.getpid())',
                stdout=PIPE, start_new_session=True)
            out, _ = await p.communicate()
            self.assertEqual(out, b'True\n')
        self.run_coro(main())

    def test_asyncio_checks(self):
        async def main():
            with self.assertRaisesRegex(ValueError, 'bufsize must be 0'):
                await self.loop.subprocess_exec(asyncio.SubprocessProtocol, 'true', bufsize=1)
            with self.assertRaisesRegex(ValueError, 'cmd must be a string'):
                await self.loop.subprocess_shell(asyncio.SubprocessProtocol, ['true'])
        self.run_coro(main())


class LibloopOnlySubprocessTests(LoopCase, LibloopLoop, unittest.TestCase):
    """What ll_spawn cannot do is refused clearly (asyncio's loop can)."""

    def test_pass_fds_is_refused(self):
        async def main():
            with self.assertRaisesRegex(ValueError, 'pass_fds.*not supported'):
                await asyncio.create_subprocess_exec('true', pass_fds=(0,))
            with self.assertRaisesRegex(ValueError, 'preexec_fn.*not supported'):
                await asyncio.create_subprocess_exec('true', preexec_fn=print)
        self.run_coro(main())

    def test_loop_close_with_a_running_child(self):
        # close() lets go of every registered transport, a child's too;
        # libloop still reaps the child when it ends (no zombie).
        async def main():
            return await self.loop.subprocess_exec(
                lambda: Proto(self.loop), 'sleep', '30', stdin=None, stdout=None, stderr=None)
        t, p = self.run_coro(main())
        pid = t.get_pid()
        self.loop.close()
        self.assertTrue(self.loop.is_closed())
        os.kill(pid, signal.SIGKILL)
        for _ in range(500):  # reaped: the pid is gone
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.01)
        else:
            self.fail(f'child {pid} still exists after loop.close()')

    def test_child_watcher_api(self):
        policy = libloop.EventLoopPolicy()
        watcher = policy.get_child_watcher()
        self.assertIs(policy.get_child_watcher(), watcher)
        self.assertTrue(watcher.is_active())
        policy.set_child_watcher(None)


twin(SubprocessTests, globals())
