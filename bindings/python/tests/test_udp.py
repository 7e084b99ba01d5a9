# SPDX-License-Identifier: MIT
"""Datagram endpoints (UDP, Unix datagram sockets) and the datagram socket
coroutines, on both loops."""

import asyncio
import os
import socket
import tempfile

from .base import LoopCase, twin


class Recorder(asyncio.DatagramProtocol):
    """Records datagrams and errors; echoes lowercase datagrams uppercased."""

    def __init__(self, loop):
        self.got = []
        self.errors = []
        self.lost = loop.create_future()
        self.event = asyncio.Event()

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.got.append((data, addr))
        if data.islower():
            self.transport.sendto(data.upper(), addr)
        self.event.set()

    def error_received(self, exc):
        self.errors.append(exc)
        self.event.set()

    def connection_lost(self, exc):
        self.lost.set_result(exc)

    async def wait(self):
        await self.event.wait()
        self.event.clear()


class DatagramTests(LoopCase):

    def test_udp_echo(self):
        async def main():
            server, sproto = await self.loop.create_datagram_endpoint(
                lambda: Recorder(self.loop), local_addr=('127.0.0.1', 0))
            addr = server.get_extra_info('sockname')
            client, cproto = await self.loop.create_datagram_endpoint(
                lambda: Recorder(self.loop), remote_addr=addr)
            self.assertEqual(client.get_extra_info('peername'), addr)
            client.sendto(b'ping')
            await cproto.wait()
            self.assertEqual(cproto.got, [(b'PING', addr)])
            self.assertEqual(sproto.got, [(b'ping', client.get_extra_info('sockname'))])
            with self.assertRaises(ValueError):
                client.sendto(b'x', ('127.0.0.1', 1))   # not the connected peer
            with self.assertRaises(TypeError):
                client.sendto('text')
            client.close()
            server.close()
            self.assertIsNone(await cproto.lost)
            self.assertIsNone(await sproto.lost)
        self.run_coro(main())

    def test_udp_unconnected_sendto_ipv6(self):
        async def main():
            a, ap = await self.loop.create_datagram_endpoint(
                lambda: Recorder(self.loop), local_addr=('::1', 0))
            b, bp = await self.loop.create_datagram_endpoint(
                lambda: Recorder(self.loop), local_addr=('::1', 0))
            b.sendto(b'hello', a.get_extra_info('sockname'))
            await bp.wait()
            self.assertEqual(bp.got, [(b'HELLO', a.get_extra_info('sockname'))])
            sender = ap.got[0][1]
            self.assertEqual(len(sender), 4)    # (host, port, flowinfo, scope_id)
            self.assertEqual(sender[:2], b.get_extra_info('sockname')[:2])
            a.close()
            b.close()
            await bp.lost
        if not socket.has_ipv6:
            self.skipTest('no IPv6')
        self.run_coro(main())

    def test_connected_udp_refused_goes_to_error_received(self):
        async def main():
            probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            probe.bind(('127.0.0.1', 0))
            addr = probe.getsockname()
            probe.close()   # nobody listens there now
            t, p = await self.loop.create_datagram_endpoint(
                lambda: Recorder(self.loop), remote_addr=addr)
            t.sendto(b'anyone?')
            await p.wait()
            self.assertIsInstance(p.errors[0], ConnectionRefusedError)
            self.assertFalse(t.is_closing())    # the transport stays open
            t.close()
            self.assertIsNone(await p.lost)
        self.run_coro(main())

    def test_allow_broadcast_and_reuse_port(self):
        async def main():
            t, p = await self.loop.create_datagram_endpoint(
                lambda: Recorder(self.loop), local_addr=('127.0.0.1', 0),
                allow_broadcast=True, reuse_port=True)
            sock = t.get_extra_info('socket')
            self.assertTrue(sock.getsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST))
            self.assertTrue(sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT))
            t.close()
            await p.lost
            with self.assertRaises(ValueError):   # asyncio's check
                await self.loop.create_datagram_endpoint(
                    asyncio.DatagramProtocol, local_addr=('127.0.0.1', 0),
                    sock=socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        self.run_coro(main())

    def test_unix_datagram(self):
        async def main():
            with tempfile.TemporaryDirectory() as d:
                spath, cpath = os.path.join(d, 's'), os.path.join(d, 'c')
                server, sp = await self.loop.create_datagram_endpoint(
                    lambda: Recorder(self.loop), local_addr=spath, family=socket.AF_UNIX)
                client, cp = await self.loop.create_datagram_endpoint(
                    lambda: Recorder(self.loop), local_addr=cpath, remote_addr=spath,
                    family=socket.AF_UNIX)
                client.sendto(b'unix')
                await cp.wait()
                self.assertEqual(sp.got, [(b'unix', cpath)])
                self.assertEqual(cp.got, [(b'UNIX', spath)])
                client.close()
                server.close()
                await sp.lost
                await cp.lost
        self.run_coro(main())

    def test_datagram_endpoint_on_given_socket(self):
        async def main():
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(('127.0.0.1', 0))
            t, p = await self.loop.create_datagram_endpoint(
                lambda: Recorder(self.loop), sock=sock)
            peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            peer.bind(('127.0.0.1', 0))
            peer.sendto(b'raw', sock.getsockname())
            await p.wait()
            self.assertEqual(p.got, [(b'raw', peer.getsockname())])
            peer.settimeout(5)
            self.assertEqual(peer.recvfrom(100), (b'RAW', sock.getsockname()))
            peer.close()
            t.close()
            await p.lost
            self.assertEqual(sock.fileno(), -1)   # the transport closed it
        self.run_coro(main())

    def test_sock_sendto_recvfrom_into(self):
        async def main():
            a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            with a, b:
                for s in (a, b):
                    s.bind(('127.0.0.1', 0))
                    s.setblocking(False)
                buf = bytearray(10)
                recv = self.loop.create_task(self.loop.sock_recvfrom_into(b, buf))
                await asyncio.sleep(0.01)
                self.assertEqual(await self.loop.sock_sendto(a, b'datagram', b.getsockname()), 8)
                self.assertEqual(await recv, (8, a.getsockname()))
                self.assertEqual(bytes(buf[:8]), b'datagram')
                await self.loop.sock_sendto(a, b'abcdef', b.getsockname())
                n, _ = await self.loop.sock_recvfrom_into(b, buf, 3)
                self.assertEqual((n, bytes(buf[:3])), (3, b'abc'))
        self.run_coro(main())


twin(DatagramTests, globals())
