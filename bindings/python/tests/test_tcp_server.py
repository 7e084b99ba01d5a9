# SPDX-License-Identifier: MIT
"""create_server and asyncio's Server object: twin tests (asyncio's loop
and libloop's give the same results)."""

import asyncio
import socket
import sys
import unittest

from .base import LoopCase, twin
from .netbase import Echo, Recorder, has_ipv6, listening_socket


class ServerTests(LoopCase):

    async def echo_once(self, host, port, payload=b'hello', family=socket.AF_UNSPEC):
        r, w = await asyncio.open_connection(host, port, family=family)
        w.write(payload)
        data = await r.readexactly(len(payload))
        w.close()
        await w.wait_closed()
        return data

    def test_port_0_and_sockets(self):
        async def main():
            srv = await self.loop.create_server(Echo, '127.0.0.1', 0)
            self.assertTrue(srv.is_serving())
            self.assertIs(srv.get_loop(), self.loop)
            self.assertEqual(len(srv.sockets), 1)
            host, port = srv.sockets[0].getsockname()
            self.assertEqual(host, '127.0.0.1')
            self.assertNotEqual(port, 0)
            self.assertEqual(await self.echo_once(host, port), b'hello')
            srv.close()
            self.assertFalse(srv.is_serving())
            await srv.wait_closed()
            self.assertEqual(srv.sockets, ())
            with self.assertRaises(ConnectionRefusedError):
                await self.echo_once(host, port)
        self.run_coro(main())

    def test_several_hosts(self):
        hosts = ['127.0.0.1', '::1'] if has_ipv6() else ['127.0.0.1']

        async def main():
            srv = await self.loop.create_server(Echo, hosts, 0)
            self.assertEqual(len(srv.sockets), len(hosts))
            for s in srv.sockets:
                host, port = s.getsockname()[:2]
                self.assertEqual(await self.echo_once(host, port, b'h' + host.encode()),
                                 b'h' + host.encode())
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_all_interfaces(self):
        async def main():
            srv = await self.loop.create_server(Echo, None, 0)
            families = {s.family for s in srv.sockets}
            self.assertIn(socket.AF_INET, families)
            for s in srv.sockets:
                port = s.getsockname()[1]
                host = '127.0.0.1' if s.family == socket.AF_INET else '::1'
                self.assertEqual(await self.echo_once(host, port), b'hello')
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_reuse_address_and_port(self):
        async def main():
            srv = await self.loop.create_server(Echo, '127.0.0.1', 0, reuse_address=True,
                                                reuse_port=True)
            s = srv.sockets[0]
            self.assertTrue(s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR))
            self.assertTrue(s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT))
            port = s.getsockname()[1]
            srv2 = await self.loop.create_server(Echo, '127.0.0.1', port, reuse_port=True)
            self.assertEqual(await self.echo_once('127.0.0.1', port), b'hello')
            for x in (srv, srv2):
                x.close()
                await x.wait_closed()
        self.run_coro(main())

    def test_address_in_use(self):
        async def main():
            srv = await self.loop.create_server(Echo, '127.0.0.1', 0)
            port = srv.sockets[0].getsockname()[1]
            with self.assertRaises(OSError) as cm:
                await self.loop.create_server(Echo, '127.0.0.1', port)
            self.assertEqual(cm.exception.errno, 98)  # EADDRINUSE
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_sock_and_backlog(self):
        sock = listening_socket()

        async def main():
            srv = await self.loop.create_server(Echo, sock=sock, backlog=5)
            self.assertEqual(srv.sockets[0].fileno(), sock.fileno())
            port = sock.getsockname()[1]
            results = await asyncio.gather(*(self.echo_once('127.0.0.1', port, b'%d' % i)
                                             for i in range(20)))
            self.assertEqual(results, [b'%d' % i for i in range(20)])
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())
        self.assertEqual(sock.fileno(), -1)  # the server closed it

    def test_start_serving_false(self):
        async def main():
            srv = await self.loop.create_server(Echo, '127.0.0.1', 0, start_serving=False)
            self.assertFalse(srv.is_serving())
            port = srv.sockets[0].getsockname()[1]
            # bound but not listening yet: refused
            with self.assertRaises(ConnectionRefusedError):
                await self.echo_once('127.0.0.1', port)
            await srv.start_serving()
            self.assertTrue(srv.is_serving())
            await srv.start_serving()  # again: nothing
            self.assertEqual(await self.echo_once('127.0.0.1', port), b'hello')
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_serve_forever_cancelled(self):
        async def main():
            srv = await self.loop.create_server(Echo, '127.0.0.1', 0, start_serving=False)
            port = srv.sockets[0].getsockname()[1]
            task = asyncio.ensure_future(srv.serve_forever())
            await asyncio.sleep(0)
            self.assertTrue(srv.is_serving())
            self.assertEqual(await self.echo_once('127.0.0.1', port), b'hello')
            with self.assertRaises(RuntimeError):
                await srv.serve_forever()  # already being awaited
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            self.assertFalse(srv.is_serving())
            await srv.wait_closed()
        self.run_coro(main())

    def test_async_with(self):
        async def main():
            async with await self.loop.create_server(Echo, '127.0.0.1', 0) as srv:
                port = srv.sockets[0].getsockname()[1]
                self.assertEqual(await self.echo_once('127.0.0.1', port), b'hello')
            self.assertFalse(srv.is_serving())
        self.run_coro(main())

    def test_close_keeps_open_connections(self):
        protos = []

        def factory():
            p = Recorder(self.loop)
            protos.append(p)
            return p

        async def main():
            srv = await self.loop.create_server(factory, '127.0.0.1', 0)
            port = srv.sockets[0].getsockname()[1]
            r, w = await asyncio.open_connection('127.0.0.1', port)
            while not protos:
                await asyncio.sleep(0.001)
            srv.close()
            w.write(b'still there')
            await protos[0].wait_for_bytes(11)
            self.assertEqual(bytes(protos[0].data), b'still there')
            # wait_closed() on 3.11 does not wait for the connections
            protos[0].transport.close()
            await protos[0].lost
            w.close()
            await w.wait_closed()
            await srv.wait_closed()
            self.assertEqual(protos[0].calls, ['made', 'data', 'lost'])
        self.run_coro(main())

    def test_names_known_in_and_after_connection_lost(self):
        # Never asked while open: the names are still there once the peer
        # has gone, in connection_lost and after it, as asyncio's.
        got = []

        class P(asyncio.Protocol):
            def connection_made(self, transport):
                self.transport = transport

            def connection_lost(self, exc):
                t = self.transport
                got.append((t.get_extra_info('peername'), t.get_extra_info('sockname'),
                            t.get_extra_info('socket') is not None))
                got.append(t)

        async def main():
            srv = await self.loop.create_server(P, '127.0.0.1', 0)
            addr = srv.sockets[0].getsockname()
            r, w = await asyncio.open_connection(*addr)
            mine = w.get_extra_info('sockname')
            w.close()
            await w.wait_closed()
            while len(got) < 2:
                await asyncio.sleep(0.01)
            t = got[1]
            self.assertEqual(got[0], (mine, addr, True))
            self.assertEqual((t.get_extra_info('peername'), t.get_extra_info('sockname')),
                             (mine, addr))
            self.assertEqual(t.get_extra_info('nothing', 'dflt'), 'dflt')
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_accepted_transport_extra_info(self):
        got = []

        class P(asyncio.Protocol):
            def connection_made(self, transport):
                got.append((transport.get_extra_info('peername'),
                            transport.get_extra_info('sockname'),
                            transport.get_extra_info('socket').family))
                transport.close()

        async def main():
            srv = await self.loop.create_server(P, '127.0.0.1', 0)
            addr = srv.sockets[0].getsockname()
            r, w = await asyncio.open_connection(*addr)
            self.assertEqual(await r.read(), b'')
            self.assertEqual(got, [(w.get_extra_info('sockname'), addr, socket.AF_INET)])
            w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_factory_error(self):
        # asyncio reports it in debug mode only.
        self.collect_errors()

        def factory():
            raise ValueError('no protocol')

        async def main():
            srv = await self.loop.create_server(factory, '127.0.0.1', 0)
            addr = srv.sockets[0].getsockname()
            for debug in (False, True):
                self.loop.set_debug(debug)
                r, w = await asyncio.open_connection(*addr)
                for _ in range(100):
                    await asyncio.sleep(0.005)
                    if len(self.errors) == debug:
                        break
                self.assertEqual(len(self.errors), debug)
                w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())
        self.assertEqual(len(self.errors), 1)
        self.assertIsInstance(self.errors[0]['exception'], ValueError)
        self.assertEqual(self.errors[0]['message'],
                         'Error on transport creation for incoming connection')

    @unittest.skipUnless(hasattr(socket, 'AF_UNIX'), 'no Unix sockets')
    def test_unix_server_sock(self):
        import tempfile
        import os
        d = tempfile.mkdtemp()
        path = os.path.join(d, 's')
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(path)

        async def main():
            srv = await self.loop.create_unix_server(Echo, sock=sock)
            r, w = await asyncio.open_unix_connection(path)
            w.write(b'over unix')
            self.assertEqual(await r.readexactly(9), b'over unix')
            w.close()
            await w.wait_closed()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())
        # 3.13's Server removes the socket file it listened on when closed
        # (create_unix_server's cleanup_socket=True); earlier ones leave it.
        self.assertEqual(os.path.exists(path), sys.version_info < (3, 13))
        if os.path.exists(path):
            os.unlink(path)
        os.rmdir(d)


twin(ServerTests, globals())
