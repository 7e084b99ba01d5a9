# SPDX-License-Identifier: MIT
"""Subprocesses: asyncio.subprocess streams, protocols, signals, reaping."""

import asyncio
import errno
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

    def test_empty_cwd_is_no_directory(self):
        # Popen: cwd='' names no directory (FileNotFoundError, the cwd as
        # its filename), not the inherited one.
        async def main():
            with self.assertRaises(FileNotFoundError) as cm:
                await asyncio.create_subprocess_exec('true', cwd='')
            self.assertEqual(cm.exception.filename, '')
        self.run_coro(main())

    def test_seventy_thousand_arguments(self):
        # Any argument list execve takes runs (no count limit of the loop's).
        async def main():
            p = await asyncio.create_subprocess_exec(
                'sh', '-c', 'echo $#', 'sh', *(['a'] * 70000), stdout=PIPE)
            out, _ = await p.communicate()
            self.assertEqual((out, p.returncode), (b'70000\n', 0))
        self.run_coro(main(), timeout=30)

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

    def test_close_kills_a_child_that_would_end_at_eof(self):
        # close() kills a running child before its stdin closes: asyncio
        # closes a pipe's fd a round later, so the child never reads EOF
        # first and exits on its own (this echo would, with status 0).
        echo = ('import os\n'
                'while True:\n'
                '    b = os.read(0, 1024)\n'
                '    if not b:\n'
                '        break\n'
                '    os.write(1, b)\n')

        async def once():
            t, p = await self.loop.subprocess_exec(
                lambda: Proto(self.loop), sys.executable, '-c', echo,
                stdin=PIPE, stdout=PIPE, stderr=PIPE)
            t.get_pipe_transport(0).write(b'ping')
            while p.out[1] != b'ping':
                await asyncio.sleep(0.001)
            t.close()
            await p.done
            return t.get_returncode()

        async def main():
            return [await once() for _ in range(50)]
        self.assertEqual(self.run_coro(main(), timeout=60), [-signal.SIGKILL] * 50)

    def test_start_new_session(self):
        async def main():
            p = await asyncio.create_subprocess_exec(
                sys.executable, '-c', 'import os; print(os.getsid(0) == os.getpid())',
                stdout=PIPE, start_new_session=True)
            out, _ = await p.communicate()
            self.assertEqual(out, b'True\n')
        self.run_coro(main())

    def test_extra_info_subprocess(self):
        # get_extra_info('subprocess'): a Popen whose poll/wait look at
        # the child, and whose kill close() uses.
        async def main():
            t, p = await self.loop.subprocess_exec(
                lambda: Proto(self.loop), 'sleep', '30', stdin=None, stdout=None, stderr=None)
            popen = t.get_extra_info('subprocess')
            self.assertEqual(popen.pid, t.get_pid())
            self.assertIsNone(popen.poll())
            with self.assertRaises(subprocess.TimeoutExpired):
                popen.wait(0.01)
            t.close()
            await p.done
            self.assertEqual(t.get_returncode(), -signal.SIGKILL)
            self.assertEqual(popen.poll(), -signal.SIGKILL)
        self.run_coro(main())

    def test_asyncio_checks(self):
        async def main():
            with self.assertRaisesRegex(ValueError, 'bufsize must be 0'):
                await self.loop.subprocess_exec(asyncio.SubprocessProtocol, 'true', bufsize=1)
            with self.assertRaisesRegex(ValueError, 'cmd must be a string'):
                await self.loop.subprocess_shell(asyncio.SubprocessProtocol, ['true'])
        self.run_coro(main())


def _is_open(fd):
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


class PopenExtrasTests(LoopCase):
    """Popen's pass_fds, close_fds, user, group, extra_groups, umask,
    process_group and pipesize, as asyncio's own loop passes them on."""

    def run_py(self, code, **kwargs):
        async def main():
            p = await asyncio.create_subprocess_exec(sys.executable, '-c', code, stdout=PIPE, **kwargs)
            out, _ = await p.communicate()
            self.assertEqual(p.returncode, 0)
            return out.decode()
        return self.run_coro(main())

    def test_pass_fds_reads_a_pipe(self):
        r, w = os.pipe()   # not inheritable, as Python makes every fd
        self.addCleanup(os.close, r)
        os.write(w, b'through pass_fds')
        os.close(w)
        out = self.run_py(f'import os; print(os.read({r}, 100).decode())', pass_fds=(r,))
        self.assertEqual(out, 'through pass_fds\n')
        self.assertFalse(os.get_inheritable(r))   # the parent's fd is as it was

    def test_close_fds_false_inherits_inheritable_fds(self):
        fds = os.pipe()
        for fd in fds:
            self.addCleanup(os.close, fd)
        os.set_inheritable(fds[0], True)
        code = ('import os\n'
                f'for fd in {fds!r}:\n'
                '    try:\n'
                '        os.fstat(fd); print("open")\n'
                '    except OSError:\n'
                '        print("closed")\n')
        self.assertEqual(self.run_py(code, close_fds=False), 'open\nclosed\n')
        self.assertEqual(self.run_py(code), 'closed\nclosed\n')

    def test_umask(self):
        self.assertEqual(self.run_py('import os; print(oct(os.umask(0)))', umask=0o027), '0o27\n')

    @unittest.skipIf(sys.version_info < (3, 11), 'Popen has process_group since 3.11')
    def test_process_group_joins_a_group(self):
        async def main():
            leader = await asyncio.create_subprocess_exec('sleep', '30', process_group=0)
            try:
                self.assertEqual(os.getpgid(leader.pid), leader.pid)
                p = await asyncio.create_subprocess_exec(
                    sys.executable, '-c', 'import os; print(os.getpgid(0))', stdout=PIPE,
                    process_group=leader.pid)
                out, _ = await p.communicate()
                self.assertEqual(int(out), leader.pid)
            finally:
                leader.kill()
                await leader.wait()
        self.run_coro(main())

    @unittest.skipUnless(sys.platform.startswith('linux'), 'F_SETPIPE_SZ is Linux\'s')
    def test_pipesize(self):
        code = 'import fcntl; print(fcntl.fcntl(1, fcntl.F_GETPIPE_SZ))'
        self.assertEqual(self.run_py(code, pipesize=256 * 1024), f'{256 * 1024}\n')

    @unittest.skipUnless(os.geteuid() == 0, 'needs root')
    def test_user_group_extra_groups_as_root(self):
        async def main():
            p = await asyncio.create_subprocess_shell(
                'id -u; id -g; id -G', stdout=PIPE, user=65534, group=65534, extra_groups=[4242])
            out, _ = await p.communicate()
            self.assertEqual(out, b'65534\n65534\n65534 4242\n')
        self.run_coro(main())

    def test_user_by_name(self):
        import pwd
        me = pwd.getpwuid(os.geteuid()).pw_name
        self.assertEqual(self.run_py('import os; print(os.getuid())', user=me), f'{os.geteuid()}\n')

    @unittest.skipIf(os.geteuid() == 0, 'root may change its uid')
    def test_user_refused_when_not_root(self):
        async def main():
            with self.assertRaises(PermissionError):
                await asyncio.create_subprocess_exec('true', user=os.geteuid() + 1)
        self.run_coro(main())

    def test_bad_values(self):
        async def main():
            with self.assertRaisesRegex(ValueError, 'fds_to_keep'):
                await asyncio.create_subprocess_exec('true', pass_fds=(-1,))
            with self.assertRaisesRegex(ValueError, 'cannot be negative'):
                await asyncio.create_subprocess_exec('true', user=-5)
            with self.assertRaisesRegex(TypeError, 'extra_groups'):
                await asyncio.create_subprocess_exec('true', extra_groups=[1.5])
            with self.assertRaises(KeyError):
                await asyncio.create_subprocess_exec('true', group='no-such-group-xyz')
            closed = 1000   # high: a pipe made meanwhile cannot take its number
            while _is_open(closed):
                closed += 1
            with self.assertRaises(OSError) as cm:
                await asyncio.create_subprocess_exec('true', pass_fds=(closed,))
            self.assertEqual(cm.exception.errno, errno.EBADF)
        self.run_coro(main())


class LibloopOnlySubprocessTests(LoopCase, LibloopLoop, unittest.TestCase):
    """What ll_spawn cannot do is refused clearly (asyncio's loop can)."""

    def test_preexec_fn_is_refused(self):
        # It cannot run in a vfork child; every other Popen keyword can.
        async def main():
            with self.assertRaisesRegex(ValueError, 'preexec_fn.*not supported.*vfork'):
                await asyncio.create_subprocess_exec('true', preexec_fn=print)
        self.run_coro(main())

    def test_popen_view_looks_without_reaping(self):
        # wait() reads the status and leaves the zombie to the loop, which
        # still reaps it and reports the same code.
        async def main():
            t, p = await self.loop.subprocess_exec(
                lambda: Proto(self.loop), 'sleep', '30', stdin=None, stdout=None, stderr=None)
            popen = t.get_extra_info('subprocess')
            popen.kill()
            self.assertEqual(popen.wait(), -signal.SIGKILL)
            self.assertIsNone(t.get_returncode())   # the loop has not run since
            self.assertTrue(os.path.exists(f'/proc/{popen.pid}'))   # a zombie, unreaped
            await p.done
            self.assertEqual(t.get_returncode(), -signal.SIGKILL)
            t.close()
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
twin(PopenExtrasTests, globals())
