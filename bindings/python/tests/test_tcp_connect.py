# SPDX-License-Identifier: MIT
"""create_connection, create_unix_connection, connect_accepted_socket:
twin tests (asyncio's loop and libloop's give the same results)."""

import asyncio
import pathlib
import socket
import unittest

from .base import LoopCase, twin
from .netbase import (Echo, Recorder, free_port, has_ipv6, listening_socket,
                      tempdir, wait_until)


class ConnectTests(LoopCase):

    def echo_server(self, **kw):
        return self.run_coro(self.loop.create_server(Echo, '127.0.0.1', 0, **kw))

    def close_server(self, srv):
        srv.close()
        self.run_coro(srv.wait_closed())

    async def roundtrip(self, transport, proto, payload=b'ping'):
        transport.write(payload)
        await proto.wait_for_bytes(len(payload))
        return bytes(proto.data)

    def test_host_port(self):
        srv = self.echo_server()
        port = srv.sockets[0].getsockname()[1]

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), '127.0.0.1', port)
            self.assertIs(p.transport, t)
            self.assertEqual(await self.roundtrip(t, p, b'x' * 100_000), b'x' * 100_000)
            self.assertEqual(t.get_extra_info('peername'), ('127.0.0.1', port))
            sock = t.get_extra_info('socket')
            self.assertEqual(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0, True)
            t.close()
            self.assertIsNone(await p.lost)
            self.assertEqual(p.calls, ['made', 'data', 'lost'])
        self.run_coro(main())
        self.close_server(srv)

    def test_localhost_name(self):
        srv = self.echo_server()
        port = srv.sockets[0].getsockname()[1]

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), 'localhost', port,
                family=socket.AF_INET)
            self.assertEqual(t.get_extra_info('peername')[1], port)
            self.assertEqual(await self.roundtrip(t, p), b'ping')
            t.close()
            await p.lost
        self.run_coro(main())
        self.close_server(srv)

    def test_sock(self):
        srv = self.echo_server()
        addr = srv.sockets[0].getsockname()
        sock = socket.create_connection(addr)
        fd = sock.fileno()

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), sock=sock)
            self.assertEqual(t.get_extra_info('socket').fileno(), fd)
            self.assertFalse(sock.getblocking())
            self.assertEqual(await self.roundtrip(t, p), b'ping')
            t.close()
            await p.lost
        self.run_coro(main())
        # the transport closed the fd: the socket object no longer owns it
        self.assertEqual(sock.fileno(), -1)
        self.close_server(srv)

    def test_sock_with_host_is_an_error(self):
        with socket.socket() as s:
            with self.assertRaisesRegex(ValueError, 'host/port and sock can not be specified'):
                self.run_coro(self.loop.create_connection(asyncio.Protocol, '127.0.0.1', 1, sock=s))

    def test_local_addr(self):
        srv = self.echo_server()
        port = srv.sockets[0].getsockname()[1]
        local = free_port()

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), '127.0.0.1', port,
                local_addr=('127.0.0.1', local))
            self.assertEqual(t.get_extra_info('sockname'), ('127.0.0.1', local))
            self.assertEqual(await self.roundtrip(t, p), b'ping')
            t.close()
            await p.lost
        self.run_coro(main())
        self.close_server(srv)

    @unittest.skipUnless(has_ipv6(), 'no IPv6 loopback')
    def test_family_inet6(self):
        srv = self.run_coro(self.loop.create_server(Echo, '::1', 0))
        port = srv.sockets[0].getsockname()[1]

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), '::1', port, family=socket.AF_INET6)
            self.assertEqual(t.get_extra_info('socket').family, socket.AF_INET6)
            self.assertEqual(await self.roundtrip(t, p), b'ping')
            t.close()
            await p.lost
        self.run_coro(main())
        self.close_server(srv)

    def test_happy_eyeballs(self):
        srv = self.echo_server()
        port = srv.sockets[0].getsockname()[1]

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), 'localhost', port,
                happy_eyeballs_delay=0.05, interleave=1)
            self.assertEqual(await self.roundtrip(t, p), b'ping')
            t.close()
            await p.lost
        self.run_coro(main())
        self.close_server(srv)

    def test_refused(self):
        port = free_port()
        with self.assertRaises(ConnectionRefusedError):
            self.run_coro(self.loop.create_connection(asyncio.Protocol, '127.0.0.1', port))

    def test_name_does_not_resolve(self):
        with self.assertRaises(socket.gaierror):
            self.run_coro(self.loop.create_connection(
                asyncio.Protocol, 'no-such-host.invalid', 80))

    def test_protocol_factory_error(self):
        srv = self.echo_server()
        port = srv.sockets[0].getsockname()[1]

        def factory():
            raise ZeroDivisionError
        with self.assertRaises(ZeroDivisionError):
            self.run_coro(self.loop.create_connection(factory, '127.0.0.1', port))
        self.close_server(srv)

    def test_connection_made_error_goes_to_handler(self):
        # asyncio calls connection_made as a callback: its exception goes
        # to the exception handler and the transport stays open.
        srv = self.echo_server()
        port = srv.sockets[0].getsockname()[1]
        self.collect_errors()

        class Bad(Recorder):
            def connection_made(self, transport):
                super().connection_made(transport)
                raise ValueError('made failed')

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Bad(self.loop), '127.0.0.1', port)
            await asyncio.sleep(0)
            self.assertFalse(t.is_closing())
            self.assertEqual(await self.roundtrip(t, p), b'ping')
            t.close()
            await p.lost
        self.run_coro(main())
        self.assertEqual(len(self.errors), 1)
        self.assertIsInstance(self.errors[0]['exception'], ValueError)
        self.close_server(srv)

    def test_unix_path_and_pathlib(self):
        d = tempdir(self)
        for path in (d + '/a.sock', pathlib.Path(d) / 'b.sock'):
            srv = self.run_coro(self.loop.create_unix_server(Echo, path))
            self.assertEqual(srv.sockets[0].getsockname(), str(path))

            async def main():
                t, p = await self.loop.create_unix_connection(
                    lambda: Recorder(self.loop), path)
                self.assertEqual(t.get_extra_info('peername'), str(path))
                self.assertEqual(await self.roundtrip(t, p, b'unix' * 5000), b'unix' * 5000)
                t.close()
                await p.lost
            self.run_coro(main())
            self.close_server(srv)

    def test_unix_connect_missing_path(self):
        d = tempdir(self)
        with self.assertRaises(FileNotFoundError):
            self.run_coro(self.loop.create_unix_connection(asyncio.Protocol, d + '/nothing'))

    def test_connect_accepted_socket(self):
        listener = listening_socket()
        addr = listener.getsockname()
        client = socket.create_connection(addr)
        listener.setblocking(True)
        conn, _ = listener.accept()
        listener.close()

        async def main():
            t, p = await self.loop.connect_accepted_socket(lambda: Recorder(self.loop), conn)
            self.assertEqual(t.get_extra_info('peername'), client.getsockname())
            t.write(b'hello')
            data = await self.loop.run_in_executor(None, client.recv, 100)
            self.assertEqual(data, b'hello')
            client.sendall(b'back')
            await p.wait_for_bytes(4)
            self.assertEqual(bytes(p.data), b'back')
            client.close()
            exc = await p.lost
            self.assertIsNone(exc)
            self.assertEqual(p.calls, ['made', 'data', 'eof', 'lost'])
        self.run_coro(main())

    def test_connect_accepted_socket_not_stream(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            with self.assertRaisesRegex(ValueError, 'A Stream Socket was expected'):
                self.run_coro(self.loop.connect_accepted_socket(asyncio.Protocol, s))

    def _first_data_after_return(self, connect):
        # The peer's bytes wait in the socket before the transport exists,
        # yet asyncio's transport reads only after the waiter's callbacks
        # ran: the coroutine that awaited the connection has the transport
        # before data_received (CPython's BufferedProtocol test writes
        # through it from there).
        ours, peer = socket.socketpair()
        peer.sendall(b'early')
        returned = []
        seen = []

        class Proto(asyncio.BufferedProtocol):
            def get_buffer(self, sizehint):
                self.buf = bytearray(64)
                return self.buf

            def buffer_updated(self, n):
                seen.append((bytes(self.buf[:n]), bool(returned)))

        async def main():
            t, _ = await connect(Proto, ours)
            returned.append(t)
            await wait_until(lambda: seen)
            t.close()
        self.run_coro(main())
        peer.close()
        self.assertEqual(seen, [(b'early', True)])

    def test_create_connection_returns_before_the_first_data(self):
        self._first_data_after_return(
            lambda proto, sock: self.loop.create_connection(proto, sock=sock))

    def test_connect_accepted_socket_returns_before_the_first_data(self):
        self._first_data_after_return(self.loop.connect_accepted_socket)


twin(ConnectTests, globals())
