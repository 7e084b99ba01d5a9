# SPDX-License-Identifier: MIT
"""The public API each asyncio version added, on both loops (the choices
live in libloop/_versions.py): 3.12's shutdown_default_executor(timeout)
and create_connection(all_errors=), 3.13's Server.close_clients() and
abort_clients(), asyncio.Runner and asyncio.run(loop_factory=)."""

import asyncio
import socket
import sys
import threading
import time
import unittest
import warnings

import libloop

from .base import LoopCase, twin

V312 = sys.version_info >= (3, 12)
V313 = sys.version_info >= (3, 13)


class Recorder(asyncio.Protocol):
    def __init__(self, lost):
        self.lost = lost

    def connection_lost(self, exc):
        self.lost.append(type(exc).__name__ if exc else None)


class VersionApiTests(LoopCase):

    @unittest.skipUnless(V313, 'shutdown_default_executor returns at its timeout from 3.13')
    def test_shutdown_default_executor_timeout_warns_and_returns(self):
        release = threading.Event()
        self.addCleanup(release.set)

        async def main():
            loop = asyncio.get_running_loop()
            busy = loop.run_in_executor(None, release.wait, 5)
            t0 = time.monotonic()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                await loop.shutdown_default_executor(timeout=0.1)
            took = time.monotonic() - t0
            release.set()
            await busy
            return took, [str(w.message) for w in caught if w.category is RuntimeWarning]
        took, msgs = self.run_coro(main())
        self.assertLess(took, 4)
        self.assertEqual(len(msgs), 1)
        self.assertIn('0.1 seconds', msgs[0])

    @unittest.skipUnless(V312, 'shutdown_default_executor(timeout) is 3.12+')
    def test_shutdown_default_executor_waits_for_quick_work(self):
        async def main():
            loop = asyncio.get_running_loop()
            got = await loop.run_in_executor(None, sum, [1, 2, 3])
            await loop.shutdown_default_executor(timeout=5)
            with self.assertRaisesRegex(RuntimeError, 'shutdown'):
                loop.run_in_executor(None, sum, [1])
            return got
        self.assertEqual(self.run_coro(main()), 6)

    @unittest.skipUnless(V312, 'create_connection(all_errors=) is 3.12+')
    def test_create_connection_all_errors(self):
        # Two closed ports: every attempt's error in one ExceptionGroup.
        ports = []
        for _ in range(2):
            s = socket.socket()
            s.bind(('127.0.0.1', 0))
            ports.append(s.getsockname()[1])
            s.close()
        loop = self.loop

        async def main():
            infos = [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, '',
                      ('127.0.0.1', p)) for p in ports]

            async def fake_getaddrinfo(*args, **kwargs):
                return infos
            loop.getaddrinfo = fake_getaddrinfo
            try:
                with self.assertRaises(ExceptionGroup) as cm:
                    await loop.create_connection(asyncio.Protocol, 'example.test', 80,
                                                 all_errors=True)
                return [type(e).__name__ for e in cm.exception.exceptions]
            finally:
                del loop.getaddrinfo
        self.assertEqual(self.run_coro(main()), ['ConnectionRefusedError'] * 2)

    @unittest.skipUnless(V313, 'Server.close_clients/abort_clients are 3.13+')
    def test_server_close_and_abort_clients(self):
        lost = []

        class Flood(Recorder):
            def connection_made(self, transport):
                transport.write(b'x' * (16 << 20))   # more than the socket takes

        async def main():
            loop = asyncio.get_running_loop()
            server = await loop.create_server(lambda: Recorder(lost), '127.0.0.1', 0)
            port = server.sockets[0].getsockname()[1]
            peers = [await asyncio.open_connection('127.0.0.1', port) for _ in range(3)]
            while len(server._clients) < 3:
                await asyncio.sleep(0.01)
            server.close()
            server.close_clients()
            for r, w in peers:
                self.assertEqual(await r.read(), b'')   # the server closed its side
                w.close()
            await asyncio.wait_for(server.wait_closed(), 5)
            self.assertEqual(lost, [None] * 3)
            # A client that never reads: close_clients() waits for the
            # buffered bytes, abort_clients() drops them at once.
            server = await loop.create_server(lambda: Flood(lost), '127.0.0.1', 0)
            r, w = await asyncio.open_connection('127.0.0.1', server.sockets[0].getsockname()[1])
            while len(server._clients) < 1:
                await asyncio.sleep(0.01)
            server.close()
            server.close_clients()
            await asyncio.sleep(0.2)
            self.assertEqual(len(lost), 3)
            server.abort_clients()
            await asyncio.wait_for(server.wait_closed(), 5)
            self.assertEqual(len(lost), 4)
            w.close()
        self.run_coro(main())

    @unittest.skipUnless(V312, 'Server.wait_closed waits for connections from 3.12.1')
    def test_wait_closed_waits_for_connections(self):
        async def main():
            loop = asyncio.get_running_loop()
            server = await loop.create_server(asyncio.Protocol, '127.0.0.1', 0)
            r, w = await asyncio.open_connection('127.0.0.1', server.sockets[0].getsockname()[1])
            await asyncio.sleep(0.05)
            server.close()
            waiter = asyncio.ensure_future(server.wait_closed())
            await asyncio.sleep(0.05)
            still_open = not waiter.done()
            w.close()    # the server's transport sees EOF and closes
            await asyncio.wait_for(waiter, 5)
            return still_open
        self.assertTrue(self.run_coro(main()))


twin(VersionApiTests, globals())


class PolicyAsAsyncios(unittest.TestCase):
    """libloop's policy serves the child-watcher API as asyncio's does on
    each version (deprecated from 3.12, gone in 3.14)."""

    def watcher_of(self, policy):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            watcher = policy.get_child_watcher()
            again = policy.get_child_watcher()
        self.assertIs(watcher, again)
        kinds = sorted({w.category.__name__ for w in caught})
        watcher.close()
        return type(watcher).__name__, kinds

    @unittest.skipUnless(hasattr(asyncio.DefaultEventLoopPolicy, 'get_child_watcher'),
                         'no child watchers (3.14+)')
    def test_child_watcher_default_and_warnings(self):
        self.assertEqual(self.watcher_of(libloop.EventLoopPolicy()),
                         self.watcher_of(asyncio.DefaultEventLoopPolicy()))

    def test_the_same_api(self):
        for name in ('get_child_watcher', 'set_child_watcher'):
            self.assertEqual(hasattr(libloop.EventLoopPolicy, name),
                             hasattr(asyncio.DefaultEventLoopPolicy, name))


class EntryPoints(unittest.TestCase):
    """Picking libloop's loop the ways each version offers."""

    async def which(self):
        return type(asyncio.get_running_loop()).__module__.split('.')[0]

    def test_runner_with_loop_factory(self):
        with asyncio.Runner(loop_factory=libloop.new_event_loop) as runner:
            self.assertEqual(runner.run(self.which()), 'libloop')

    @unittest.skipUnless(V312, 'asyncio.run(loop_factory=) is 3.12+')
    def test_asyncio_run_with_loop_factory(self):
        self.assertEqual(asyncio.run(self.which(), loop_factory=libloop.new_event_loop),
                         'libloop')

    def test_libloop_run(self):
        self.assertEqual(libloop.run(self.which()), 'libloop')


if __name__ == '__main__':
    unittest.main()
