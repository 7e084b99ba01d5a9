# SPDX-License-Identifier: MIT
"""fork(): what a program that imports libloop and forks may rely on.

libloop's Go runtime does not survive fork(), so `import libloop` opens
nothing and the library is opened at the first loop (libloop/_loader.py).
Each case runs in a fresh interpreter (this suite's own process has opened
the library already), once with asyncio's loop and once with libloop's
where both apply, and every child is waited for with a timeout: a hang
fails the test instead of stopping the suite.
"""

import os
import subprocess
import sys
import textwrap
import unittest

TIMEOUT = 60

# Shared by the scripts: a server round trip and a subprocess on a new
# loop, the way a worker would use it.
PRELUDE = textwrap.dedent('''
    import asyncio, os, sys, warnings
    import libloop
    FLAVOUR = sys.argv[1]

    def new_loop():
        return libloop.new_event_loop() if FLAVOUR == 'libloop' else asyncio.new_event_loop()

    async def work():
        async def echo(r, w):
            w.write(await r.readline())
            await w.drain()
            w.close()
        server = await asyncio.start_server(echo, '127.0.0.1', 0)
        port = server.sockets[0].getsockname()[1]
        r, w = await asyncio.open_connection('127.0.0.1', port)
        w.write(b'ping\\n')
        line = await r.readline()
        w.close()
        await w.wait_closed()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, '-c', 'print("child")', stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        server.close()
        await server.wait_closed()
        return (line + out).decode()

    def run_work():
        loop = new_loop()
        try:
            return type(loop).__module__.split('.')[0] + ':' + loop.run_until_complete(work())
        finally:
            loop.close()

    def wait_child(pid):
        import time
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.01)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return 'hung'
''')


def run_script(body, *args):
    """Run PRELUDE + body in a fresh interpreter; (exit code, stdout, stderr)."""
    env = dict(os.environ)
    p = subprocess.run([sys.executable, '-c', PRELUDE + textwrap.dedent(body), *args],
                       capture_output=True, text=True, timeout=TIMEOUT, env=env)
    return p.returncode, p.stdout, p.stderr


class ForkTwinMixin:
    """Cases whose outcome is the same on both loops."""

    FLAVOUR = None

    def test_preloaded_then_forked_workers_serve_and_spawn(self):
        # gunicorn/uvicorn --preload: the app (and libloop) imported, then
        # workers forked, each running its own loop.
        rc, out, err = run_script('''
            pids = []
            for i in range(3):
                r, w = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.close(r)
                    try:
                        os.write(w, run_work().encode())
                        os._exit(0)
                    except BaseException as exc:
                        os.write(w, repr(exc).encode())
                        os._exit(1)
                os.close(w)
                pids.append((pid, r))
            for pid, r in pids:
                status = wait_child(pid)
                got = os.read(r, 4096).decode()
                print(status, got.replace('\\n', '|'))
            print('parent', run_work().replace('\\n', '|'))
        ''', self.FLAVOUR)
        self.assertEqual(rc, 0, err)
        module = 'libloop' if self.FLAVOUR == 'libloop' else 'asyncio'
        self.assertEqual(out.splitlines(),
                         [f'0 {module}:ping|child|'] * 3 + [f'parent {module}:ping|child|'])

    def test_multiprocessing_pools_after_a_loop_ran(self):
        # A parent that has run a loop hands work to pools of each start
        # method; the workers run asyncio programs with asyncio.run.
        rc, out, err = run_script('''
            import multiprocessing
            from worker_jobs import job
            print('parent', run_work().replace('\\n', '|'))
            for method in ('fork', 'spawn', 'forkserver'):
                ctx = multiprocessing.get_context(method)
                with ctx.Pool(2) as pool:
                    print(method, sorted(pool.map(job, [1, 2, 3])))
        ''', self.FLAVOUR)
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[1:], [f'{m} [2, 4, 6]' for m in ('fork', 'spawn', 'forkserver')])

    def setUp(self):
        super().setUp()
        # The pool's workers import the job from a module of their own.
        import tempfile
        self._dir = tempfile.mkdtemp()
        with open(os.path.join(self._dir, 'worker_jobs.py'), 'w') as f:
            f.write(textwrap.dedent('''
                import asyncio

                async def double(x):
                    await asyncio.sleep(0)
                    return 2 * x

                def job(x):
                    return asyncio.run(double(x))
            '''))
        old = os.environ.get('PYTHONPATH')
        os.environ['PYTHONPATH'] = self._dir + (os.pathsep + old if old else '')
        self.addCleanup(self._restore, old)

    def _restore(self, old):
        if old is None:
            os.environ.pop('PYTHONPATH', None)
        else:
            os.environ['PYTHONPATH'] = old
        import shutil
        shutil.rmtree(self._dir, ignore_errors=True)


class TestForkAsyncio(ForkTwinMixin, unittest.TestCase):
    FLAVOUR = 'asyncio'


class TestForkLibloop(ForkTwinMixin, unittest.TestCase):
    FLAVOUR = 'libloop'


class LibloopForkRules(unittest.TestCase):
    """What only libloop has: the library's lifetime across fork()."""

    def test_import_opens_nothing(self):
        rc, out, err = run_script('''
            before = len(os.listdir('/proc/self/task'))
            libloop.install()
            policy = libloop.EventLoopPolicy()
            from libloop import _loader
            print(before, len(os.listdir('/proc/self/task')), _loader.loaded(), libloop.__version__)
            loop = libloop.new_event_loop()
            print(_loader.loaded())
            loop.close()
        ''', 'libloop')
        self.assertEqual(rc, 0, err)
        first, second = out.splitlines()
        before, after, loaded, version = first.split()
        # No Go runtime thread was started by the import, install() or the policy.
        self.assertEqual((before, after, loaded), ('1', '1', 'False'))
        self.assertRegex(version, r'^\d+\.\d+\.\d+$')
        self.assertEqual(second, 'True')

    def test_child_of_a_loop_running_parent_gets_an_error_not_a_hang(self):
        rc, out, err = run_script('''
            async def fork_inside():
                # Forked while this loop runs, as a pool made in a coroutine does.
                pid = os.fork()
                if pid == 0:
                    for make in (libloop.new_event_loop, lambda: libloop.run(asyncio.sleep(0))):
                        try:
                            make()
                            os._exit(10)
                        except RuntimeError as exc:
                            if 'fork()' not in str(exc):
                                os._exit(11)
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter('always')
                        fallback = libloop.EventLoopPolicy().new_event_loop()
                    ok = fallback.run_until_complete(asyncio.sleep(0, 'fallback ran'))
                    fallback.close()
                    if not any(issubclass(w.category, RuntimeWarning) for w in caught):
                        os._exit(12)
                    print(type(fallback).__module__, ok, flush=True)
                    os._exit(0)
                return pid
            loop = libloop.new_event_loop()
            pid = loop.run_until_complete(fork_inside())
            print('child exit', wait_child(pid))
            print('parent', loop.run_until_complete(work()).replace('\\n', '|'))
            loop.close()
        ''', 'libloop')
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), ['asyncio.unix_events fallback ran', 'child exit 0',
                                            'parent ping|child|'])

    def test_inherited_loop_is_closed_without_entering_the_library(self):
        rc, out, err = run_script('''
            import gc
            loop = libloop.new_event_loop()
            loop.run_until_complete(asyncio.sleep(0))
            pid = os.fork()
            if pid == 0:
                loop.close()
                print(loop.is_closed(), flush=True)
                try:
                    libloop._lib.ll_loop_time(loop._id)
                except RuntimeError as exc:
                    print('call refused:', 'fork()' in str(exc), flush=True)
                os._exit(0)
            print('child exit', wait_child(pid))
            loop.close()
        ''', 'libloop')
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.splitlines(), ['True', 'call refused: True', 'child exit 0'])


if __name__ == '__main__':
    unittest.main()
