# SPDX-License-Identifier: MIT
"""Writes from tasks and call_soon callbacks to a transport with nothing
buffered (libloop sends them from C without entering Go): twin tests that
what a program sees stays asyncio's -- the bytes in order across a partial
send and the drain after it, the buffer empty again once drained, a write
after close dropped, a write to a peer that went away ending the transport
with the error; and writes of bytearray and memoryview (BufferWriteTests)."""

import array
import asyncio
import socket
import unittest

from .base import LoopCase, twin
from .netbase import ClosesOpened, connected_pair


class _WriteCase(ClosesOpened, LoopCase):
    """A connected pair and the helpers the write tests share."""

    def pair(self):
        t, p, peer = connected_pair(self)
        self.opened.append(t)
        return t, p, peer

    def soon(self, fn):
        """Run fn() from a call_soon callback; return its result."""
        async def main():
            fut = self.loop.create_future()

            def cb():
                fut.set_result(fn())
            self.loop.call_soon(cb)
            return await fut
        return self.run_coro(main())

    def read_all(self, peer, n):
        async def main():
            got = bytearray()
            while len(got) < n:
                chunk = await self.loop.sock_recv(peer, 1 << 16)
                if not chunk:
                    break
                got += chunk
            return bytes(got)
        return self.run_coro(main())


class IdleWriteTests(_WriteCase):

    def test_idle_write_from_a_task_and_a_callback(self):
        t, p, peer = self.pair()
        peer.setblocking(False)

        async def step():
            t.write(b'from a task;')
        self.run_coro(step())
        self.assertEqual(self.soon(lambda: (t.write(b'from call_soon'),
                                            t.get_write_buffer_size())[1]), 0)
        self.assertEqual(self.read_all(peer, 26), b'from a task;from call_soon')

    def test_partial_send_then_drain_keeps_order(self):
        t, p, peer = self.pair()
        peer.setblocking(False)
        big = bytes(range(256)) * (16 << 10)  # 4 MiB: more than the kernel takes

        def cb():
            t.write(big)
            t.write(b'<after big>')
            return t.get_write_buffer_size()
        self.assertGreater(self.soon(cb), 0)
        self.assertEqual(self.read_all(peer, len(big) + 11), big + b'<after big>')

        async def drained():
            while t.get_write_buffer_size():
                await asyncio.sleep(0.001)
        self.run_coro(drained())
        # Drained: a small write is taken whole again, at once.
        self.assertEqual(self.soon(lambda: (t.write(b'again'),
                                            t.get_write_buffer_size())[1]), 0)
        self.assertEqual(self.read_all(peer, 5), b'again')

    def test_write_after_close_is_dropped(self):
        t, p, peer = self.pair()
        peer.setblocking(False)

        def cb():
            t.write(b'before')
            t.close()
            t.write(b'after')  # asyncio: the transport is closing, dropped
            return t.is_closing()
        self.assertTrue(self.soon(cb))
        self.run_coro(p.lost)
        self.assertIsNone(p.exc)
        self.assertEqual(self.read_all(peer, 100), b'before')

    def test_write_to_a_peer_gone_ends_the_transport(self):
        t, p, peer = self.pair()
        # The peer resets: the next sends fail.
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')
        peer.close()

        async def main():
            for _ in range(200):
                if p.lost.done():
                    break
                t.write(b'into the void')
                await asyncio.sleep(0.005)
            return await asyncio.wait_for(p.lost, 5)
        exc = self.run_coro(main())
        self.assertIsInstance(exc, (ConnectionResetError, BrokenPipeError))
        self.assertTrue(t.is_closing())
        self.assertEqual(p.calls[-1], 'lost')
        self.assertEqual(p.calls.count('lost'), 1)


class BufferWriteTests(_WriteCase):
    """write() of bytearray and memoryview (asyncpg writes its own
    buffers): sent as they are when written, in order with the bytes
    written around them, whatever the caller does with its buffer after;
    anything else refused with asyncio's TypeError."""

    def test_buffers_keep_order_with_bytes(self):
        t, p, peer = self.pair()
        peer.setblocking(False)
        words = array.array('i', [1, 2, 3])

        def cb():
            t.write(b'<bytes>')               # (gathered in a libloop callback)
            t.write(bytearray(b'<bytearray>'))
            t.write(memoryview(b'<memoryview>'))
            t.write(memoryview(words))        # its bytes, not its items
            t.write(b'<end>')
            return t.get_write_buffer_size()
        self.assertEqual(self.soon(cb), 0)
        want = (b'<bytes><bytearray><memoryview>' + words.tobytes() + b'<end>')
        self.assertEqual(self.read_all(peer, len(want)), want)

    def test_buffer_changed_after_write_is_sent_as_written(self):
        t, p, peer = self.pair()
        peer.setblocking(False)
        buf = bytearray(b'first')

        async def main():
            t.write(buf)
            buf[:] = b'XXXXX'
            t.write(memoryview(buf)[:2])
            buf[:] = b'YYYYY'
        self.run_coro(main())
        self.assertEqual(self.read_all(peer, 7), b'firstXX')

    def test_empty_buffers_write_nothing(self):
        t, p, peer = self.pair()
        peer.setblocking(False)

        def cb():
            t.write(bytearray())
            t.write(memoryview(b''))
            t.write(b'only')
            return t.get_write_buffer_size()
        self.assertEqual(self.soon(cb), 0)
        self.assertEqual(self.read_all(peer, 4), b'only')

    def test_buffer_after_close_is_dropped(self):
        t, p, peer = self.pair()
        peer.setblocking(False)

        def cb():
            t.write(bytearray(b'before'))
            t.close()
            t.write(bytearray(b'after'))
            t.write(memoryview(b'after'))
            return t.is_closing()
        self.assertTrue(self.soon(cb))
        self.run_coro(p.lost)
        self.assertIsNone(p.exc)
        self.assertEqual(self.read_all(peer, 100), b'before')

    def test_buffer_after_write_eof_raises(self):
        t, p, peer = self.pair()
        t.write_eof()
        for data in (bytearray(b'x'), memoryview(b'x')):
            with self.assertRaisesRegex(RuntimeError, 'write_eof'):
                t.write(data)

    def test_non_buffers_raise_type_error(self):
        t, p, peer = self.pair()
        for data in ('text', 42, None, [b'a'], array.array('b', b'ab')):
            with self.assertRaisesRegex(TypeError, 'bytes-like object, not '
                                        + repr(type(data).__name__)):
                t.write(data)
        self.assertFalse(t.is_closing())


twin(IdleWriteTests, globals())
twin(BufferWriteTests, globals())

if __name__ == '__main__':
    unittest.main()
