# SPDX-License-Identifier: MIT
"""libloop-only behaviour: entry points, loading, unimplemented methods,
exit with a loop open, signals, thread-safety stress."""

import asyncio
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

import libloop

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(libloop.__file__)))


def run_python(code, timeout=20, env_extra=None, **kw):
    """Run code in a fresh interpreter (same executable, same path)."""
    env = dict(os.environ)
    env['PYTHONPATH'] = PKG_DIR + os.pathsep + env.get('PYTHONPATH', '')
    env.update(env_extra or {})
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout,
                          env=env, **kw)


class EntryPointTests(unittest.TestCase):

    def test_run(self):
        async def main():
            await asyncio.sleep(0.001)
            return type(asyncio.get_running_loop())
        self.assertIs(libloop.run(main()), libloop.EventLoop)

    def test_runner_loop_factory(self):
        async def main():
            return asyncio.get_running_loop()
        with asyncio.Runner(loop_factory=libloop.new_event_loop) as r:
            loop = r.run(main())
            self.assertIsInstance(loop, libloop.EventLoop)
            self.assertIsInstance(loop, asyncio.AbstractEventLoop)

    def test_policy_and_install(self):
        old = asyncio.get_event_loop_policy()
        try:
            libloop.install()
            self.assertIsInstance(asyncio.get_event_loop_policy(),
                                  libloop.EventLoopPolicy)
            loop = asyncio.new_event_loop()
            self.assertIsInstance(loop, libloop.EventLoop)
            loop.close()

            async def main():
                return type(asyncio.get_running_loop())
            self.assertIs(asyncio.run(main()), libloop.EventLoop)
        finally:
            asyncio.set_event_loop_policy(old)

    def test_non_callable_rejected_without_debug(self):
        loop = libloop.new_event_loop()
        try:
            with self.assertRaises(TypeError):
                loop.call_soon(42)
            with self.assertRaises(TypeError):
                loop.call_later(0, 'x')
            with self.assertRaises(ValueError):
                loop.call_at(float('nan'), print)
        finally:
            loop.close()

    def test_version(self):
        self.assertRegex(libloop.__version__, r'^\d+\.\d+\.\d+$')


class ProcessTests(unittest.TestCase):

    def test_load_error_names_paths(self):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(PKG_DIR, 'libloop'),
                            os.path.join(tmp, 'a', 'b', 'libloop'),
                            ignore=shutil.ignore_patterns('*.so', '__pycache__'))
            env = dict(os.environ, LIBLOOP_LIBRARY='/nonexistent/libloop.so',
                       PYTHONPATH=os.path.join(tmp, 'a', 'b'))
            p = subprocess.run([sys.executable, '-c', 'import libloop'],
                               capture_output=True, text=True, env=env,
                               timeout=20)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('ImportError', p.stderr)  # so try/except ImportError can fall back
        self.assertIn('/nonexistent/libloop.so', p.stderr)
        self.assertIn('build/libloop.so', p.stderr)

    def test_exit_with_open_loop(self):
        p = run_python('''
            import asyncio, libloop
            loop = libloop.new_event_loop()
            loop.call_later(100, print, 'never')
            fut = loop.create_future()
            loop.run_until_complete(asyncio.sleep(0.001))
            loop.run_in_executor(None, sum, [1])
            loop.call_soon(print, 'never either')
            print('exiting')
        ''')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, 'exiting\n')

    def test_exit_with_loop_running_in_daemon_thread(self):
        p = run_python('''
            import threading, time, libloop
            loop = libloop.new_event_loop()
            threading.Thread(target=loop.run_forever, daemon=True).start()
            time.sleep(0.1)
            loop.call_soon_threadsafe(print, 'tick')
            time.sleep(0.1)
            print('exiting')
        ''')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, 'tick\nexiting\n')

    def test_sigint_interrupts_sleeping_run(self):
        code = '''
            import asyncio, libloop, sys
            async def main():
                print('ready', flush=True)
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    print('cancelled', flush=True)
                    raise
            try:
                libloop.run(main())
            except KeyboardInterrupt:
                print('KeyboardInterrupt', flush=True)
        '''
        env = dict(os.environ)
        env['PYTHONPATH'] = PKG_DIR + os.pathsep + env.get('PYTHONPATH', '')
        # Unbuffered: a line read here never takes bytes communicate() needs.
        p = subprocess.Popen([sys.executable, '-c', textwrap.dedent(code)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             bufsize=0, env=env)
        try:
            self.assertEqual(p.stdout.readline(), b'ready\n')
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            # The interruption is the task's CancelledError, at once; the
            # interpreter's exit after it takes seconds on a loaded machine
            # (0.1-0.3 s of finalization CPU, plain asyncio's too), so it
            # has a timeout of its own.
            woke, _, _ = select.select([p.stdout], [], [], 5)
            took = time.monotonic() - t0
            first = p.stdout.readline() if woke else b''
            out, err = p.communicate(timeout=60)
        finally:
            p.kill()
        self.assertLess(took, 5, 'the sleeping run was not interrupted')
        self.assertEqual((first + out).decode(), 'cancelled\nKeyboardInterrupt\n', err.decode())


class ExampleTests(unittest.TestCase):

    def test_tour_same_output_on_both_loops(self):
        # examples/asyncio_tour.py: every kind of I/O, unchanged but for
        # its loop factory.
        example = os.path.join(PKG_DIR, '..', '..', 'examples', 'asyncio_tour.py')
        on = [subprocess.run([sys.executable, example, *flag], capture_output=True, text=True,
                             timeout=120) for flag in ((), ('--asyncio',))]
        self.assertEqual(on[0].returncode, 0, on[0].stderr)
        self.assertEqual(on[1].returncode, 0, on[1].stderr)
        self.assertIn('loop: libloop', on[0].stderr)
        self.assertEqual(on[0].stdout, on[1].stdout)
        self.assertIn('tls: ', on[0].stdout)
        self.assertTrue(on[0].stdout.endswith('done\n'))

    def test_example_same_output_on_both_loops(self):
        example = os.path.join(PKG_DIR, '..', '..', 'examples',
                               'hello_asyncio.py')
        with open(example) as f:
            source = f.read()
        on_libloop = run_python(source)
        on_asyncio = run_python(source.replace(
            '"--asyncio" in sys.argv', 'True'))
        self.assertEqual(on_libloop.returncode, 0, on_libloop.stderr)
        self.assertIn('libloop', on_libloop.stderr)
        self.assertEqual(on_libloop.stdout, on_asyncio.stdout)
        self.assertTrue(on_libloop.stdout.endswith('done\n'))


class ThreadsafeStressTests(unittest.TestCase):

    def test_many_threads_exactly_once(self):
        loop = libloop.new_event_loop()
        counts = {}
        nthreads, per = 4, 2000

        def hit(key):
            counts[key] = counts.get(key, 0) + 1

        def worker(t):
            for i in range(per):
                loop.call_soon_threadsafe(hit, (t, i))

        async def main():
            threads = [threading.Thread(target=worker, args=(t,))
                       for t in range(nthreads)]
            for th in threads:
                th.start()
            while len(counts) < nthreads * per:
                await asyncio.sleep(0.001)
            for th in threads:
                th.join()
            await asyncio.sleep(0.01)
        try:
            loop.run_until_complete(asyncio.wait_for(main(), 20))
        finally:
            loop.close()
        self.assertEqual(len(counts), nthreads * per)
        self.assertEqual(set(counts.values()), {1})

    def test_no_leaked_threads(self):
        before = threading.active_count()

        async def main():
            await asyncio.get_running_loop().run_in_executor(None, sum, [1])
            await asyncio.to_thread(sum, [2])
        libloop.run(main())
        self.assertEqual(threading.active_count(), before)


if __name__ == '__main__':
    unittest.main()
