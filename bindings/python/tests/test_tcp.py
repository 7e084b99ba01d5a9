# SPDX-License-Identifier: MIT
"""The stream transport API and protocol callbacks: twin tests (asyncio's
loop and libloop's give the same results)."""

import asyncio
import contextvars
import gc
import socket
import time
import warnings

from .base import LoopCase, twin
from .netbase import ClosesOpened, Recorder, listening_socket

VAR = contextvars.ContextVar('VAR', default='unset')


class TransportTests(ClosesOpened, LoopCase):

    def pair(self, factory=None, keep_open_on_eof=False):
        """(transport, protocol, peer): a client transport connected to a
        plain blocking socket `peer` (the test drives the other side)."""
        listener = listening_socket()
        self.addCleanup(listener.close)

        async def main():
            fut = self.loop.create_task(self.loop.create_connection(
                factory or (lambda: Recorder(self.loop, keep_open_on_eof)),
                *listener.getsockname()))
            conn, _ = await self.loop.sock_accept(listener)
            t, p = await fut
            return t, p, conn
        t, p, peer = self.run_coro(main())
        peer.setblocking(True)
        peer.settimeout(10)
        self.addCleanup(peer.close)
        self.opened.append(t)
        return t, p, peer

    def recv_exactly(self, peer, n):
        return self.run_coro(self.loop.run_in_executor(None, _recv_exactly, peer, n))

    def test_extra_info(self):
        t, p, peer = self.pair()
        sock = t.get_extra_info('socket')
        self.assertEqual(sock.getsockname(), peer.getpeername())
        self.assertEqual(t.get_extra_info('sockname'), peer.getpeername())
        self.assertEqual(t.get_extra_info('peername'), peer.getsockname())
        self.assertIsNone(t.get_extra_info('nothing'))
        self.assertEqual(t.get_extra_info('nothing', 'dflt'), 'dflt')
        t.close()
        self.run_coro(p.lost)
        # names stay known after close, as asyncio's do
        self.assertEqual(t.get_extra_info('peername'), peer.getsockname())
        self.assertEqual(t.get_extra_info('sockname'), peer.getpeername())

    def test_extra_info_names_by_value_and_defaults(self):
        # What aiohttp asks per request ('sslcontext', 'peername'), by any
        # equal str (not only the interned literal), a str subclass, the
        # default by position and by keyword, and names that are not str.
        t, p, peer = self.pair()

        class Name(str):
            pass
        built = ''.join(['peer', 'name'])
        self.assertIsNone(t.get_extra_info('sslcontext'))
        self.assertEqual(t.get_extra_info('sslcontext', 'd'), 'd')
        self.assertEqual(t.get_extra_info(built), peer.getsockname())
        self.assertEqual(t.get_extra_info(''.join(['sock', 'name'])), peer.getpeername())
        self.assertEqual(t.get_extra_info(Name('peername')), peer.getsockname())
        self.assertEqual(t.get_extra_info('peername', 'unused'), peer.getsockname())
        self.assertEqual(t.get_extra_info('nothing', default='kw'), 'kw')
        self.assertEqual(t.get_extra_info(name='nothing', default='kw'), 'kw')
        self.assertEqual(t.get_extra_info(42, 'd'), 'd')
        self.assertIsNone(t.get_extra_info(None))
        self.assertEqual(t.get_extra_info(''.join(['sock', 'et'])).fileno(), t.get_extra_info('socket').fileno())
        with self.assertRaises(TypeError):
            t.get_extra_info()
        with self.assertRaises(TypeError):
            t.get_extra_info('a', 'b', 'c')

    def test_fd_of_a_transport_is_not_for_add_reader(self):
        # asyncio: a transport's fd cannot be watched or unwatched by hand.
        t, p, peer = self.pair()
        sock = t.get_extra_info('socket')
        for call in (lambda: self.loop.add_reader(sock, print),
                     lambda: self.loop.add_writer(sock.fileno(), print),
                     lambda: self.loop.remove_reader(sock),
                     lambda: self.loop.remove_writer(sock.fileno())):
            with self.assertRaisesRegex(RuntimeError, 'File descriptor .* is used by transport'):
                call()

    def test_write_writelines_write_eof(self):
        t, p, peer = self.pair()
        self.assertTrue(t.can_write_eof())
        t.write(b'abc')
        t.write(bytearray(b'def'))
        t.write(memoryview(b'ghi'))
        t.writelines([b'j', bytearray(b'k'), memoryview(b'l')])
        t.write(b'')
        t.write_eof()
        self.assertFalse(t.is_closing())
        self.assertEqual(self.recv_exactly(peer, 12), b'abcdefghijkl')
        self.assertEqual(peer.recv(10), b'')  # EOF
        with self.assertRaises(RuntimeError):
            t.write(b'more')
        with self.assertRaises(TypeError):
            t.write('text')
        peer.sendall(b'still reading')
        self.run_coro(p.wait_for_bytes(13))
        self.assertEqual(bytes(p.data), b'still reading')

    def test_close_flushes_then_lost(self):
        t, p, peer = self.pair()
        big = b'z' * 3_000_000
        t.write(big)
        t.close()
        self.assertTrue(t.is_closing())
        t.close()  # again: nothing
        got = self.recv_exactly(peer, len(big))
        self.assertEqual(len(got), len(big))
        self.assertEqual(peer.recv(10), b'')
        self.assertIsNone(self.run_coro(p.lost))
        self.assertEqual(p.calls[-1], 'lost')
        self.assertEqual(p.calls.count('lost'), 1)

    def test_connection_lost_after_the_close_call(self):
        # connection_lost never runs inside close(): a later iteration.
        t, p, peer = self.pair()
        t.close()
        self.assertNotIn('lost', p.calls)
        self.run_coro(p.lost)
        self.assertEqual(p.calls, ['made', 'lost'])

    def test_write_after_close_or_abort_is_dropped(self):
        for end in ('close', 'abort'):
            t, p, peer = self.pair()
            getattr(t, end)()
            t.write(b'dropped')  # no error, nothing sent
            self.run_coro(p.lost)
            t.write(b'dropped')
            self.assertEqual(peer.recv(10), b'')

    def test_writes_while_close_flushes_are_sent(self):
        # asyncio: close() with a full buffer still takes writes, and runs
        # resume_writing before connection_lost; what it writes is sent
        # (sslproto sends close_notify that way).
        class Tail(Recorder):
            def resume_writing(self):
                super().resume_writing()
                self.transport.write(b'<from resume>')
        t, p, peer = self.pair(lambda: Tail(self.loop))
        while 'pause' not in p.calls:
            t.write(b'b' * 65536)
        t.close()
        t.write(b'<after close>')
        peer.setblocking(False)

        async def read_all():
            buf = bytearray()
            while True:
                chunk = await self.loop.sock_recv(peer, 1 << 20)
                if not chunk:
                    return bytes(buf)
                buf += chunk
        data = self.run_coro(read_all())
        self.assertTrue(data.endswith(b'<after close><from resume>'), data[-40:])
        self.run_coro(p.lost)
        self.assertEqual(p.calls, ['made', 'pause', 'resume', 'lost'])

    def test_abort(self):
        t, p, peer = self.pair()
        t.abort()
        self.assertTrue(t.is_closing())
        self.assertNotIn('lost', p.calls)
        self.assertIsNone(self.run_coro(p.lost))
        t.abort()
        t.close()

    def test_pause_resume_reading(self):
        t, p, peer = self.pair()
        self.assertTrue(t.is_reading())
        t.pause_reading()
        t.pause_reading()
        self.assertFalse(t.is_reading())
        peer.sendall(b'held')
        self.run_coro(asyncio.sleep(0.05))
        self.assertEqual(bytes(p.data), b'')
        t.resume_reading()
        t.resume_reading()
        self.assertTrue(t.is_reading())
        self.run_coro(p.wait_for_bytes(4))
        self.assertEqual(bytes(p.data), b'held')
        t.close()
        self.assertFalse(t.is_reading())

    def test_write_buffer_limits(self):
        t, p, peer = self.pair()
        self.assertEqual(t.get_write_buffer_limits(), (16384, 65536))
        t.set_write_buffer_limits(high=100)
        self.assertEqual(t.get_write_buffer_limits(), (25, 100))
        t.set_write_buffer_limits(high=100, low=10)
        self.assertEqual(t.get_write_buffer_limits(), (10, 100))
        t.set_write_buffer_limits(low=1000)
        self.assertEqual(t.get_write_buffer_limits(), (1000, 4000))
        t.set_write_buffer_limits(0, 0)
        self.assertEqual(t.get_write_buffer_limits(), (0, 0))
        with self.assertRaises(ValueError):
            t.set_write_buffer_limits(high=10, low=20)
        with self.assertRaises(ValueError):
            t.set_write_buffer_limits(high=-1)
        self.assertEqual(t.get_write_buffer_size(), 0)

    def test_pause_writing_inside_write(self):
        # asyncio calls pause_writing from inside write() once the buffer
        # is over the high-water mark; streams' drain() relies on it.
        t, p, peer = self.pair()
        t.set_write_buffer_limits(high=1000)
        chunk = b'w' * 65536
        for _ in range(200):  # until the kernel refuses
            t.write(chunk)
            if 'pause' in p.calls:
                break
        self.assertEqual(p.calls, ['made', 'pause'])
        self.assertGreater(t.get_write_buffer_size(), 1000)
        n = t.get_write_buffer_size()

        async def drain():
            total = 0
            while 'resume' not in p.calls:
                await asyncio.sleep(0.001)
                total += len(await self.loop.sock_recv(peer, 1 << 20))
            return total
        peer.setblocking(False)
        self.run_coro(drain())
        self.assertEqual(p.calls, ['made', 'pause', 'resume'])
        self.assertLessEqual(t.get_write_buffer_size(), 250)
        self.assertGreater(n, 0)

    def test_eof_keep_open_allows_writing(self):
        t, p, peer = self.pair(keep_open_on_eof=True)
        peer.shutdown(socket.SHUT_WR)
        self.run_coro(p.got_eof)
        self.assertFalse(t.is_closing())
        t.write(b'after eof')
        self.assertEqual(self.recv_exactly(peer, 9), b'after eof')
        t.close()
        self.assertIsNone(self.run_coro(p.lost))
        self.assertEqual(p.calls, ['made', 'eof', 'lost'])

    def test_eof_false_closes(self):
        t, p, peer = self.pair()
        peer.sendall(b'last words')
        peer.shutdown(socket.SHUT_WR)
        self.assertIsNone(self.run_coro(p.lost))
        self.assertEqual(p.calls, ['made', 'data', 'eof', 'lost'])
        self.assertEqual(bytes(p.data), b'last words')

    def test_peer_reset(self):
        t, p, peer = self.pair()
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\1\0\0\0\0\0\0\0')
        peer.close()
        exc = self.run_coro(p.lost)
        self.assertIsInstance(exc, ConnectionResetError)
        self.assertTrue(t.is_closing())
        self.assertEqual(p.calls, ['made', 'lost'])

    def test_write_after_peer_reset_does_not_raise(self):
        # asyncio: a send that fails ends the transport (connection_lost
        # with the error); later writes are counted and dropped, with a
        # warning from the fifth on, never an exception.
        t, p, peer = self.pair()
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\1\0\0\0\0\0\0\0')
        peer.close()
        time.sleep(0.01)  # the reset is in before the writes
        with self.assertLogs('asyncio', 'WARNING') as logs:
            for _ in range(10):
                t.write(b'after the reset')
            exc = self.run_coro(p.lost)
            for _ in range(3):
                t.write(b'after connection_lost')
        self.assertIsInstance(exc, (ConnectionResetError, BrokenPipeError))
        self.assertTrue(t.is_closing())
        self.assertIn('socket.send() raised exception.', logs.output[-1])
        self.assertEqual(p.calls, ['made', 'lost'])

    def test_data_received_error_goes_to_handler(self):
        self.collect_errors()

        class Bad(Recorder):
            def data_received(self, data):
                raise ValueError('boom')
        t, p, peer = self.pair(lambda: Bad(self.loop))
        peer.sendall(b'x')
        exc = self.run_coro(p.lost)
        self.assertIsInstance(exc, ValueError)
        self.assertEqual(len(self.errors), 1)
        ctx = self.errors[0]
        self.assertEqual(ctx['message'], 'Fatal error: protocol.data_received() call failed.')
        self.assertIs(ctx['exception'], exc)
        self.assertIs(ctx['transport'], t)
        self.assertIs(ctx['protocol'], p)

    def test_data_received_error_handled_in_the_protocols_context(self):
        # The exception handler runs in the context data_received ran in,
        # and a variable data_received set stays for its next call.
        seen = []
        self.loop.set_exception_handler(
            lambda loop, ctx: seen.append(('handler', VAR.get())))

        class Bad(Recorder):
            def data_received(self, data):
                seen.append(('data', VAR.get()))
                VAR.set('set by data_received')
                super().data_received(data)
                if len(self.data) >= 2:
                    raise ValueError('boom')
        t, p, peer = self.pair(lambda: Bad(self.loop))
        peer.sendall(b'x')
        self.run_coro(p.wait_for_bytes(1))
        peer.sendall(b'y')
        self.assertIsInstance(self.run_coro(p.lost), ValueError)
        self.assertEqual(seen, [('data', 'unset'), ('data', 'set by data_received'),
                                ('handler', 'set by data_received')])

    def test_eof_received_error_goes_to_handler(self):
        self.collect_errors()

        class Bad(Recorder):
            def eof_received(self):
                raise ValueError('eof boom')
        t, p, peer = self.pair(lambda: Bad(self.loop))
        peer.shutdown(socket.SHUT_WR)
        self.assertIsInstance(self.run_coro(p.lost), ValueError)
        self.assertEqual(self.errors[0]['message'],
                         'Fatal error: protocol.eof_received() call failed.')

    def test_connection_lost_error_goes_to_handler(self):
        self.collect_errors()

        class Bad(Recorder):
            def connection_lost(self, exc):
                super().connection_lost(exc)
                raise ValueError('lost boom')
        t, p, peer = self.pair(lambda: Bad(self.loop))
        t.close()
        self.run_coro(p.lost)
        self.run_coro(asyncio.sleep(0.01))
        self.assertEqual(len(self.errors), 1)
        self.assertIsInstance(self.errors[0]['exception'], ValueError)

    def test_unclosed_transport_warns(self):
        t, p, peer = self.pair()
        self.opened.clear()
        self.loop.close()  # the loop lets go of its transports
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            p.transport = None
            del t
            gc.collect()
        msgs = [str(x.message) for x in w if x.category is ResourceWarning]
        self.assertTrue(any(m.startswith('unclosed transport') for m in msgs), msgs)

    def test_closed_transport_does_not_warn(self):
        t, p, peer = self.pair()
        t.close()
        self.run_coro(p.lost)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            t = p.transport = None
            self.opened.clear()
            gc.collect()
        msgs = [str(x.message) for x in w if x.category is ResourceWarning]
        self.assertFalse(any(m.startswith('unclosed transport') for m in msgs), msgs)

    def test_protocol_callbacks_see_the_creators_context(self):
        seen = []

        class Ctx(Recorder):
            def connection_made(self, transport):
                seen.append(('made', VAR.get()))
                super().connection_made(transport)

            def data_received(self, data):
                seen.append(('data', VAR.get()))
                super().data_received(data)

            def connection_lost(self, exc):
                seen.append(('lost', VAR.get()))
                super().connection_lost(exc)

        listener = listening_socket()
        self.addCleanup(listener.close)

        async def main():
            VAR.set('creator')
            fut = self.loop.create_task(self.loop.create_connection(
                lambda: Ctx(self.loop), *listener.getsockname()))
            conn, _ = await self.loop.sock_accept(listener)
            t, p = await fut
            VAR.set('changed later')
            await self.loop.sock_sendall(conn, b'data')
            await p.wait_for_bytes(4)
            conn.close()
            await p.lost
        self.run_coro(main())
        self.assertEqual(seen, [('made', 'creator'), ('data', 'creator'), ('lost', 'creator')])

    def test_set_get_protocol(self):
        t, p, peer = self.pair()
        self.assertIs(t.get_protocol(), p)
        q = Recorder(self.loop)
        t.set_protocol(q)
        self.assertIs(t.get_protocol(), q)
        peer.sendall(b'to q')
        self.run_coro(q.wait_for_bytes(4))
        self.assertEqual(bytes(q.data), b'to q')
        self.assertEqual(bytes(p.data), b'')


class Buffered(asyncio.BufferedProtocol):
    def __init__(self, loop, size):
        self.buf = bytearray(size)
        self.got = bytearray()
        self.sizes = []
        self.lost = loop.create_future()

    def connection_made(self, transport):
        self.transport = transport

    def get_buffer(self, sizehint):
        return self.buf

    def buffer_updated(self, nbytes):
        self.sizes.append(nbytes)
        self.got += self.buf[:nbytes]

    def eof_received(self):
        return False

    def connection_lost(self, exc):
        self.lost.set_result(exc)


class BufferedTests(TransportTests):
    """BufferedProtocol: get_buffer/buffer_updated, data bigger than the buffer."""

    def test_buffered_protocol_small_buffer(self):
        payload = bytes(range(256)) * 4000
        t, p, peer = self.pair(lambda: Buffered(self.loop, 1000))
        peer.sendall(payload)
        peer.shutdown(socket.SHUT_WR)
        self.assertIsNone(self.run_coro(p.lost))
        self.assertEqual(bytes(p.got), payload)
        self.assertLessEqual(max(p.sizes), 1000)

    def test_buffered_protocol_wide_items_and_slices(self):
        """get_buffer may return any writable buffer: a slice of a
        memoryview (as sslproto's), or items wider than a byte; nbytes
        counts bytes."""
        import array
        payload = bytes(range(256)) * 400
        wide = array.array('H', bytes(2000))
        views = iter([memoryview(bytearray(3000))[100:1100], memoryview(wide)] * 1000)

        class Any(Buffered):
            def get_buffer(self, sizehint):
                self.buf = next(views)
                return self.buf

            def buffer_updated(self, nbytes):
                self.sizes.append(nbytes)
                self.got += self.buf.cast('B')[:nbytes] if self.buf.format != 'B' else self.buf[:nbytes]

        t, p, peer = self.pair(lambda: Any(self.loop, 0))
        peer.sendall(payload)
        peer.shutdown(socket.SHUT_WR)
        self.assertIsNone(self.run_coro(p.lost))
        self.assertEqual(bytes(p.got), payload)
        self.assertLessEqual(max(p.sizes), 2000)

    def test_get_buffer_error(self):
        self.collect_errors()

        class Bad(Buffered):
            def get_buffer(self, sizehint):
                raise ValueError('no buffer')
        t, p, peer = self.pair(lambda: Bad(self.loop, 10))
        peer.sendall(b'x')
        self.assertIsInstance(self.run_coro(p.lost), ValueError)
        self.assertEqual(self.errors[0]['message'],
                         'Fatal error: protocol.get_buffer() call failed.')


def _recv_exactly(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


twin(BufferedTests, globals())
