# SPDX-License-Identifier: MIT
"""StreamTransport.write and is_closing as the C side does them
(cpython/stream.c: a method descriptor on the class whose fallback is the
Python write): twin tests that a protocol's write from data_received (the
path asyncpg takes), a task's write (gathered until the batch ends, as
asyncio.StreamWriter's are), and every case the C write hands to the
Python one keep asyncio's behaviour; and, on libloop, the state the C
write leaves in the transport (what the Python write would leave). They
run with the C side on (make test-python) and off (LIBLOOP_PY_HOTPATH=0)."""

import array
import asyncio
import logging
import socket
import unittest

from libloop import _hotpath, stream_transport

from .base import LibloopLoop, LoopCase, twin
from .netbase import ClosesOpened, connected_pair, listening_socket, recv_exactly


class _Writer(asyncio.Protocol):
    """Writes what write_all(transport) writes when the first data comes,
    from data_received, and records what each write did."""

    def __init__(self, write_all):
        self.write_all = write_all
        self.results = []
        self.lost = asyncio.get_event_loop().create_future()
        self.calls = []

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.results.append(self.write_all(self.transport))

    def pause_writing(self):
        self.calls.append('pause')

    def resume_writing(self):
        self.calls.append('resume')

    def connection_lost(self, exc):
        self.calls.append('lost')
        if not self.lost.done():
            self.lost.set_result(exc)


def _pair(case):
    """connected_pair, the transport closed at the end of the test."""
    t, p, peer = connected_pair(case)
    case.opened.append(t)
    return t, p, peer


class StreamWriteTests(ClosesOpened, LoopCase):

    def serve(self, write_all, n):
        """A server whose protocol runs write_all(transport) from
        data_received; a client sends one byte and reads n bytes. Returns
        (bytes read, the protocol)."""
        listener = listening_socket()
        self.addCleanup(listener.close)
        protos = []

        def factory():
            protos.append(_Writer(write_all))
            return protos[-1]

        async def main():
            srv = await self.loop.create_server(factory, sock=listener)
            conn = socket.create_connection(listener.getsockname())
            conn.setblocking(False)
            await self.loop.sock_sendall(conn, b'?')
            got = b''
            while len(got) < n:
                chunk = await self.loop.sock_recv(conn, 65536)
                if not chunk:
                    break
                got += chunk
            conn.close()
            protos[0].transport.close()
            srv.close()
            await srv.wait_closed()
            return got
        return self.run_coro(main()), protos[0]

    def test_bytes_and_buffers_from_data_received(self):
        # bytes, bytearray, a memoryview slice and a memoryview of another
        # format: every byte, in order.
        def write_all(t):
            t.write(b'<')
            t.write(bytearray(b'ba'))
            t.write(memoryview(b'xmvx')[1:3])
            t.write(memoryview(array.array('H', [0x4141])))
            t.write(b'nc')
            t.write(b'>')
            return t.get_write_buffer_size()
        got, p = self.serve(write_all, 10)
        self.assertEqual(got, b'<bamvAAnc>')
        self.assertEqual(p.results, [0])

    def test_other_types_raise_asyncio_type_error(self):
        t, p, peer = _pair(self)
        for data in ('text', 7, [b'a'], None, array.array('B', b'a')):
            with self.assertRaises(TypeError) as cm:
                t.write(data)
            self.assertEqual(str(cm.exception), 'data argument must be a bytes-like object, '
                                                f'not {type(data).__name__!r}')
        with self.assertRaises(TypeError):
            t.write()
        with self.assertRaises(TypeError):
            t.write(b'a', b'b')
        t.write(data=b'kw')  # (asyncio's write takes its argument by name too)
        self.assertEqual(recv_exactly(self, peer, 2), b'kw')

    def test_empty_writes_write_nothing(self):
        t, p, peer = _pair(self)
        for data in (b'', bytearray(), memoryview(b''), memoryview(b'abc')[3:]):
            self.assertIsNone(t.write(data))
        t.write(b'end')
        self.assertEqual(recv_exactly(self, peer, 3), b'end')
        self.assertEqual(t.get_write_buffer_size(), 0)

    def test_write_after_write_eof_raises_for_every_type(self):
        t, p, peer = _pair(self)
        t.write_eof()
        for data in (b'x', b'', bytearray(b'x'), bytearray(), memoryview(b'x')):
            with self.assertRaisesRegex(RuntimeError, r'Cannot call write\(\) after write_eof\(\)'):
                t.write(data)
        with self.assertRaises(TypeError):  # (the type first, as asyncio)
            t.write('x')
        self.assertFalse(t.is_closing())

    def test_is_closing_and_writes_after_close_and_abort(self):
        t, p, peer = _pair(self)
        self.assertIs(t.is_closing(), False)
        t.write(b'before')
        t.close()
        self.assertIs(t.is_closing(), True)
        t.write(b'after close')      # dropped, no error
        t.write(bytearray(b'after close'))
        self.run_coro(p.lost)
        self.assertIs(t.is_closing(), True)
        self.assertEqual(recv_exactly(self, peer, 6), b'before')
        peer.settimeout(2)
        self.assertEqual(peer.recv(100), b'')   # nothing after close's bytes

        t2, p2, peer2 = _pair(self)
        t2.abort()
        self.assertIs(t2.is_closing(), True)
        t2.write(b'after abort')
        t2.write(memoryview(b'after abort'))
        self.run_coro(p2.lost)
        peer2.settimeout(2)
        try:
            self.assertEqual(peer2.recv(100), b'')
        except ConnectionResetError:
            pass

    def test_reset_peer_loses_once_and_later_writes_warn(self):
        t, p, peer = _pair(self)
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')
        peer.close()

        async def main():
            for _ in range(400):
                if p.lost.done():
                    break
                t.write(memoryview(b'into the void'))
                t.write(b'into the void')
                await asyncio.sleep(0.005)
            return await asyncio.wait_for(p.lost, 5)
        quiet = logging.getLogger('asyncio')
        quiet.disabled = True  # (the writes racing the reset may warn already)
        try:
            exc = self.run_coro(main())
        finally:
            quiet.disabled = False
        self.assertIsInstance(exc, (ConnectionResetError, BrokenPipeError))
        self.assertIs(t.is_closing(), True)
        with self.assertLogs('asyncio', 'WARNING') as logs:
            for _ in range(6):
                t.write(b'x')
                t.write(bytearray(b'x'))
        self.assertIn('socket.send() raised exception.', logs.output[-1])
        self.assertEqual(p.calls.count('lost'), 1)

    def test_pause_inside_the_write_and_resume_at_the_low_mark(self):
        # A non-reading peer: the write that takes the buffer over the high
        # mark calls pause_writing before it returns (bytes from a callback,
        # a memoryview from a task); resume_writing once the peer drained
        # it to the low mark; the size is asyncio's all along.
        t, p, peer = _pair(self)
        t.set_write_buffer_limits(high=64 * 1024, low=16 * 1024)
        self.assertEqual(t.get_write_buffer_limits(), (16 * 1024, 64 * 1024))
        chunk = b'p' * 16384
        sent = 0
        while 'pause' not in p.calls and sent < 64 << 20:
            t.write(chunk)
            sent += len(chunk)
        self.assertEqual(p.calls, ['made', 'pause'])
        self.assertGreater(t.get_write_buffer_size(), 64 * 1024)

        async def from_task():
            t.write(memoryview(bytearray(b'm' * 1000)))
            return t.get_write_buffer_size(), list(p.calls)
        size, calls = self.run_coro(from_task())
        self.assertEqual(calls, ['made', 'pause'])   # not again while paused
        got = recv_exactly(self, peer, sent + 1000)
        self.assertEqual(got, chunk * (sent // len(chunk)) + b'm' * 1000)

        async def settle():
            for _ in range(200):
                if 'resume' in p.calls:
                    return
                await asyncio.sleep(0.005)
        self.run_coro(settle())
        self.assertEqual(p.calls, ['made', 'pause', 'resume'])
        self.assertEqual(t.get_write_buffer_size(), 0)

    def test_task_writes_gathered_then_a_buffer_keep_order(self):
        # A task's bytes wait for the batch's end; a memoryview after them
        # sends them first; bytes after the memoryview follow it.
        t, p, peer = _pair(self)

        async def main():
            t.write(b'head;')
            t.write(b'more;')
            t.write(memoryview(b'view;'))
            t.write(b'tail;')
            t.writelines([b'l1;', bytearray(b'l2;'), memoryview(b'l3;')])
        self.run_coro(main())
        self.assertEqual(recv_exactly(self, peer, 29), b'head;more;view;tail;l1;l2;l3;')

    def test_task_writes_joined_then_past_the_join_limit_keep_order(self):
        # Small writes of one batch are joined (headers + body); a write
        # that takes them over the joining limit, and those after it,
        # follow in order, and a write of another type sends them first.
        t, p, peer = _pair(self)
        big = b'B' * 1500

        def batch():
            t.write(b'HTTP/1.1 200 OK\r\n\r\n')
            t.write(b'body;')
            t.write(b'')
            t.write(big)
            t.write(b'after;')
            t.write(bytearray(b'buf;'))
            t.write(b'end')
        self.loop.call_soon(batch)
        want = b'HTTP/1.1 200 OK\r\n\r\nbody;' + big + b'after;buf;end'
        self.assertEqual(recv_exactly(self, peer, len(want)), want)

    def test_write_eof_sends_what_a_task_wrote_first(self):
        t, p, peer = _pair(self)

        async def main():
            t.write(b'last words')
            t.write_eof()
        self.run_coro(main())
        got = recv_exactly(self, peer, 10)
        peer.settimeout(2)
        self.assertEqual((got, peer.recv(10)), (b'last words', b''))


    def test_writelines_writes_the_items_in_order(self):
        # redis-py sends each command so (StreamWriter.writelines): lists
        # of bytes (the C writelines's case, joined), one item, none, and
        # the other cases (a tuple, other bytes-like items, an iterator),
        # from a task (gathered) and outside one.
        t, p, peer = _pair(self)

        async def main():
            t.writelines([b'<', b'ab'])
            t.writelines([b'c'])
            t.writelines([])
            t.writelines((b'd', b'e'))
            t.writelines([bytearray(b'f'), memoryview(b'g'), b'h'])
            t.writelines(iter([b'i', b'j']))
        self.run_coro(main())
        t.writelines([b'k', b'', b'>'])
        self.assertEqual(recv_exactly(self, peer, 13), b'<abcdefghijk>')
        self.assertEqual(t.get_write_buffer_size(), 0)

    def test_writelines_refuses_what_asyncio_refuses(self):
        t, p, peer = _pair(self)
        for data in (['text'], [b'a', 7], [None]):
            with self.assertRaises(TypeError):
                t.writelines(data)
        t.write_eof()
        with self.assertRaisesRegex(RuntimeError, r'after write_eof\(\)'):
            t.writelines([b'a', b'b'])
        peer.settimeout(2)
        self.assertEqual(peer.recv(16), b'')   # (nothing went before the EOF)


twin(StreamWriteTests, globals())


class TestStreamWriteState(ClosesOpened, LoopCase, LibloopLoop, unittest.TestCase):
    """On libloop: the C write is on the class exactly when the C side
    is, and leaves the transport's write state as the Python write does."""

    def test_write_is_in_c_exactly_with_the_c_side(self):
        cls = stream_transport.StreamTransport
        if _hotpath.ENABLED:
            self.assertEqual(type(cls.__dict__['write']).__name__, 'method_descriptor')
            self.assertEqual(type(cls.__dict__['is_closing']).__name__, 'method_descriptor')
            self.assertEqual(type(cls.__dict__['writelines']).__name__, 'method_descriptor')
            self.assertIsNone(_hotpath.STREAM_OFF_REASON)
        else:
            self.assertIs(cls.__dict__['write'], stream_transport.PY_WRITE)
            self.assertIs(cls.is_closing, stream_transport.PY_IS_CLOSING)
            self.assertIs(cls.writelines, stream_transport.PY_WRITELINES)

    def test_writelines_of_a_subclass_calls_its_write(self):
        # The C writelines writes in C for a StreamTransport only: a
        # subclass's own write gets the joined bytes, as from the Python one.
        class Counting(stream_transport.StreamTransport):
            __slots__ = ()
            seen = []

            def write(self, data):
                self.seen.append(data)
                super().write(data)
        t, p, peer = _pair(self)
        t.__class__ = Counting
        try:
            t.writelines([b'a', b'b'])
            t.writelines([b'c'])
        finally:
            t.__class__ = stream_transport.StreamTransport
        self.assertEqual(Counting.seen, [b'ab', b'c'])
        self.assertEqual(recv_exactly(self, peer, 3), b'abc')

    def test_gathered_state_in_a_task(self):
        t, p, peer = _pair(self)
        loop = self.loop

        async def main():
            t.write(b'abc')
            first = (t._wpend, t._wpend_n, list(loop._wq))
            t.write(b'de')
            second = (t._wpend, t._wpend_n, list(loop._wq))
            return first, second
        first, second = self.run_coro(main())
        self.assertEqual(first, (b'abc', 3, [t]))
        self.assertEqual(second, (b'abcde', 5, [t]))
        self.assertEqual(recv_exactly(self, peer, 5), b'abcde')
        self.assertIsNone(t._wpend)
        self.assertEqual(loop._wq, [])
        self.assertEqual(t._cbuf, 0)

    def test_joined_state_up_to_the_limit_then_a_list(self):
        t, p, peer = _pair(self)
        limit = stream_transport._CONCAT_MAX

        async def main():
            t.write(b'h' * (limit - 10))
            t.write(b'b' * 10)
            at_limit = (type(t._wpend), t._wpend_n)
            t.write(b'x')
            past = (type(t._wpend), t._wpend_n)
            return at_limit, past
        at_limit, past = self.run_coro(main())
        self.assertEqual(at_limit, (bytes, limit))
        self.assertEqual(past, (list, limit + 1))
        self.assertEqual(recv_exactly(self, peer, limit + 1),
                         b'h' * (limit - 10) + b'b' * 10 + b'x')

    def test_extra_info_is_in_c_exactly_with_the_c_side(self):
        cls = stream_transport.StreamTransport
        if _hotpath.ENABLED:
            self.assertEqual(type(cls.__dict__['get_extra_info']).__name__, 'method_descriptor')
        else:
            self.assertIs(cls.__dict__['get_extra_info'], stream_transport.PY_GET_EXTRA_INFO)

    def test_a_failed_flush_goes_to_the_handler_and_the_flush_goes_on(self):
        # Two transports gather in one task; the first one's write fails at
        # the flush (an id libloop does not know): the exception handler
        # gets asyncio's context, the second one's bytes still go.
        t1, p1, peer1 = connected_pair(self)
        t2, p2, peer2 = connected_pair(self)
        self.opened += [t1, t2]
        errors = []
        self.loop.set_exception_handler(lambda loop, ctx: errors.append(ctx))
        tid = t1._tid

        async def main():
            t1.write(b'lost')
            t2.write(b'kept')
            t1._tid = (1 << 64) - 1
        try:
            self.run_coro(main())
        finally:
            t1._tid = tid
        self.assertEqual(recv_exactly(self, peer2, 4), b'kept')
        self.assertEqual(len(errors), 1, errors)
        self.assertEqual(errors[0]['message'], 'Fatal error on transport: write failed')
        self.assertIs(errors[0]['transport'], t1)
        self.assertIs(errors[0]['protocol'], p1)
        self.assertIsInstance(errors[0]['exception'], Exception)
        self.assertEqual(self.loop._wq, [])

    def test_direct_write_state(self):
        # Outside a batch: at once, nothing gathered, _cbuf the C buffer's.
        t, p, peer = _pair(self)
        t.write(b'now')
        t.write(bytearray(b'!'))
        self.assertEqual((t._wpend, self.loop._wq, t._cbuf), (None, [], 0))
        self.assertEqual(recv_exactly(self, peer, 4), b'now!')
        t.set_write_buffer_limits(high=1 << 30)
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        big = b'b' * (1 << 20)
        for _ in range(64):
            t.write(big)
            if t._cbuf:
                break
        self.assertGreater(t._cbuf, 0)
        self.assertEqual(t._cbuf, t.get_write_buffer_size())
        t.abort()
        self.run_coro(p.lost)


if __name__ == '__main__':
    unittest.main()
