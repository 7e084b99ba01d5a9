# SPDX-License-Identifier: MIT
"""Writes made inside the loop's callbacks (libloop gathers a batch's small
writes into one send): twin tests that every order and flow-control rule
stays asyncio's, and a libloop-only test that two writes of one callback
cost one C call."""

import asyncio
import socket
import unittest


from .base import LibloopLoop, LoopCase, twin
from .netbase import ClosesOpened, Recorder, connected_pair, listening_socket


def _recv_all(sock):
    """Everything until EOF (blocking, for an executor thread)."""
    buf = bytearray()
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return bytes(buf)
        buf += chunk


class GatherTests(ClosesOpened, LoopCase):

    def pair(self):
        """(transport, protocol, peer) as in test_tcp."""
        t, p, peer = connected_pair(self)
        peer.setblocking(True)
        peer.settimeout(10)
        self.opened.append(t)
        return t, p, peer

    def in_callback(self, fn):
        """Run fn() inside a task step (where libloop gathers writes)."""
        async def step():
            return fn()
        return self.run_coro(step())

    def received(self, peer):
        return self.run_coro(self.loop.run_in_executor(None, _recv_all, peer))

    def test_writes_then_close_keep_their_order(self):
        t, p, peer = self.pair()

        def cb():
            t.write(b'head ')
            t.writelines([b'bo', b'dy '])
            t.write(bytearray(b'tail'))
            t.close()
        self.in_callback(cb)
        self.assertEqual(self.received(peer), b'head body tail')
        self.run_coro(p.lost)

    def test_small_then_big_write_keep_their_order(self):
        t, p, peer = self.pair()
        big = bytes(range(256)) * 1024  # 256 KiB: over what is ever gathered
        small = [b'%05d' % i for i in range(2000)]

        def cb():
            for s in small[:1000]:
                t.write(s)
            t.write(big)
            for s in small[1000:]:
                t.write(s)
            t.close()
        self.in_callback(cb)
        self.assertEqual(self.received(peer),
                         b''.join(small[:1000]) + big + b''.join(small[1000:]))

    def test_write_eof_after_writes(self):
        t, p, peer = self.pair()

        def cb():
            t.write(b'abc')
            t.write(b'def')
            t.write_eof()
            return t.get_write_buffer_size()
        self.assertEqual(self.in_callback(cb), 0)
        self.assertEqual(self.received(peer), b'abcdef')
        t.close()

    def test_buffer_size_counts_nothing_the_kernel_took(self):
        # asyncio sends at once: right after a small write the buffer is
        # empty, inside a callback too.
        t, p, peer = self.pair()

        def cb():
            t.write(b'x' * 100)
            return t.get_write_buffer_size(), t.get_write_buffer_limits()
        self.assertEqual(self.in_callback(cb), (0, (16384, 65536)))
        self.assertEqual(peer.recv(1000), b'x' * 100)

    def test_abort_after_writes(self):
        # asyncio's writes had reached the kernel before abort(): the peer
        # gets them, then EOF.
        t, p, peer = self.pair()

        def cb():
            t.write(b'sent ')
            t.write(b'before abort')
            t.abort()
        self.in_callback(cb)
        self.assertEqual(self.received(peer), b'sent before abort')
        self.run_coro(p.lost)
        self.assertIsNone(p.exc)

    def check_pause_inside_write(self, high, chunk, slack):
        """Writes of chunk in one callback to a peer that does not read (up
        to 24 MB: far more than the socket holds): pause_writing runs inside
        the write that takes the buffer over high, as asyncio's, which then
        holds at most slack bytes more."""
        t, p, peer = self.pair()
        t.set_write_buffer_limits(high=high)

        def cb():
            for i in range(24_000_000 // len(chunk)):
                t.write(chunk)
                if 'pause' in p.calls:
                    return i, t.get_write_buffer_size()
            return None, 0
        i, size = self.in_callback(cb)
        self.assertIsNotNone(i)
        self.assertEqual(p.calls, ['made', 'pause'])
        self.assertGreater(size, high)
        self.assertLessEqual(size, high + slack)
        t.abort()

    def test_pause_writing_inside_write_with_small_writes(self):
        self.check_pause_inside_write(100_000, b'w' * 1000, 1000)

    def test_many_writes_of_one_callback_keep_their_order(self):
        # Small writes joined by concatenation, then past its bound by the
        # list, then one over the gathering limit: one byte stream in order.
        t, p, peer = self.pair()
        pieces = [bytes([65 + i % 26]) * n for i, n in
                  enumerate([600, 300, 200, 1, 1, 5000, 7, 70_000, 3])]

        def cb():
            for piece in pieces:
                t.write(piece)
            t.close()
        self.in_callback(cb)
        self.assertEqual(self.received(peer), b''.join(pieces))
        self.run_coro(p.lost)

    def test_pause_writing_inside_write_with_tiny_writes(self):
        # 60-byte writes and a 100-byte mark: what a callback joins never
        # exceeds the mark, so the pause still comes inside a write.
        self.check_pause_inside_write(100, b't' * 60, 2 * 60)

    def test_write_from_protocol_callback(self):
        # Writes from the batch sink's callbacks (sent at once, not
        # gathered): an echo that writes twice per data_received keeps the
        # order.
        listener = listening_socket()
        self.addCleanup(listener.close)

        class TwiceEcho(asyncio.Protocol):
            def connection_made(self, transport):
                self.transport = transport

            def data_received(self, data):
                self.transport.write(b'<')
                self.transport.write(data + b'>')

            def eof_received(self):
                self.transport.close()

        async def main():
            srv = await self.loop.create_server(TwiceEcho, sock=listener)
            r, w = await asyncio.open_connection(*listener.getsockname())
            got = []
            for word in (b'a', b'bb', b'ccc'):
                w.write(word)
                got.append(await r.readexactly(len(word) + 2))
            w.write_eof()
            got.append(await r.read())
            w.close()
            srv.close()
            await srv.wait_closed()
            return got
        self.assertEqual(self.run_coro(main()), [b'<a>', b'<bb>', b'<ccc>', b''])


class TestGatherCrossingsLibloop(LoopCase, LibloopLoop, unittest.TestCase):
    """libloop only: what gathering saves."""

    def test_two_writes_of_one_callback_are_one_call(self):
        # (observed on the transport: the flush, in C when the C side is
        # on, sends each transport's gathered bytes with one write call)
        listener = listening_socket()
        self.addCleanup(listener.close)
        seen = []

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), *listener.getsockname())
            conn, _ = await self.loop.sock_accept(listener)
            t.write(b'HTTP/1.1 200 OK\r\n\r\n')
            t.write(b'Hello')
            seen.append((t._wpend, t._wpend_n, list(self.loop._wq) == [t]))
            await asyncio.sleep(0)
            seen.append((t._wpend, list(self.loop._wq)))
            t.write(b'!')
            data = b''
            while len(data) < 25:
                data += await self.loop.sock_recv(conn, 100)
            t.close()
            conn.close()
            return data
        self.assertEqual(self.run_coro(main()), b'HTTP/1.1 200 OK\r\n\r\nHello!')
        self.assertEqual(seen, [(b'HTTP/1.1 200 OK\r\n\r\nHello', 24, True), (None, [])])

    def test_write_from_data_received_goes_at_once(self):
        # The batch sink does not gather: data_received's write is one C
        # call made inside write() (C sends it without entering Go), and a
        # second write is a second call, in order.
        listener = listening_socket()
        self.addCleanup(listener.close)
        # (observed on the transport, not by counting a module's write
        # function: StreamTransport.write runs in C when the C side is on)
        seen = []
        loop = self.loop

        class Echo(asyncio.Protocol):
            def connection_made(self, transport):
                self.transport = transport

            def data_received(self, data):
                self.transport.write(b'<' + data)
                seen.append((self.transport._wpend, list(loop._wq)))
                self.transport.write(b'>')
                seen.append((self.transport._wpend, list(loop._wq)))

        async def main():
            srv = await self.loop.create_server(Echo, sock=listener)
            conn = socket.create_connection(listener.getsockname())
            conn.setblocking(False)
            await self.loop.sock_sendall(conn, b'x')
            data = b''
            while len(data) < 3:
                data += await self.loop.sock_recv(conn, 10)
            conn.close()
            srv.close()
            await srv.wait_closed()
            return data
        self.assertEqual(self.run_coro(main()), b'<x>')
        self.assertEqual(seen, [(None, []), (None, [])])

    def test_writes_outside_the_loop_go_at_once(self):
        listener = listening_socket()
        self.addCleanup(listener.close)

        async def main():
            t, p = await self.loop.create_connection(
                lambda: Recorder(self.loop), *listener.getsockname())
            conn, _ = await self.loop.sock_accept(listener)
            return t, conn
        t, conn = self.run_coro(main())
        self.addCleanup(conn.close)
        t.write(b'now')  # the loop is not running: nothing would flush it
        conn.settimeout(10)
        self.assertEqual(conn.recv(10), b'now')
        t.close()
        self.run_coro(asyncio.sleep(0.01))


twin(GatherTests, globals())
