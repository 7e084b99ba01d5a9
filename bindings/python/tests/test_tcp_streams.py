# SPDX-License-Identifier: MIT
"""asyncio streams (start_server/open_connection) and sendfile: twin tests
(asyncio's loop and libloop's give the same results)."""

import asyncio
import os
import socket
import sys
import tempfile

from .base import LoopCase, twin
from .netbase import Recorder, listening_socket


class StreamsTests(LoopCase):

    def test_echo_lines_and_exact(self):
        async def handle(r, w):
            line = await r.readline()
            n = int(line)
            body = await r.readexactly(n)
            w.write(b'%d\n' % len(body))
            w.write(body[::-1])
            await w.drain()
            w.close()
            await w.wait_closed()

        async def main():
            srv = await asyncio.start_server(handle, '127.0.0.1', 0)
            port = srv.sockets[0].getsockname()[1]
            r, w = await asyncio.open_connection('127.0.0.1', port)
            body = os.urandom(300_000)
            w.write(b'%d\n' % len(body) + body)
            await w.drain()
            self.assertEqual(await r.readline(), b'300000\n')
            self.assertEqual(await r.readexactly(300_000), body[::-1])
            self.assertEqual(await r.read(), b'')
            self.assertTrue(r.at_eof())
            with self.assertRaises(asyncio.IncompleteReadError):
                await r.readexactly(1)
            w.close()
            await w.wait_closed()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_drain_with_slow_reader(self):
        # The writer's drain() must wait while the peer does not read:
        # pause_writing reaches the protocol during write().
        listener = listening_socket()
        self.addCleanup(listener.close)

        async def main():
            conn_task = asyncio.ensure_future(self.loop.sock_accept(listener))
            r, w = await asyncio.open_connection(*listener.getsockname())
            conn, _ = await conn_task
            w.transport.set_write_buffer_limits(high=64 * 1024)
            chunk = b'd' * 65536
            blocked = None
            for i in range(1000):
                w.write(chunk)
                try:
                    await asyncio.wait_for(w.drain(), 0.05)
                except asyncio.TimeoutError:
                    blocked = i
                    break
            self.assertIsNotNone(blocked, 'drain() never waited')
            # the buffer is bounded: nothing ran away
            self.assertLess(w.transport.get_write_buffer_size(), 64 * 1024 + 2 * 65536)
            sent = (blocked + 1) * 65536
            drain = asyncio.ensure_future(w.drain())
            got = 0
            while got < sent:
                got += len(await self.loop.sock_recv(conn, 1 << 20))
            await asyncio.wait_for(drain, 5)
            self.assertEqual(got, sent)
            conn.close()
            w.close()
        self.run_coro(main())

    def test_pause_resume_writing_reach_protocol(self):
        listener = listening_socket()
        self.addCleanup(listener.close)

        async def main():
            conn_task = asyncio.ensure_future(self.loop.sock_accept(listener))
            t, p = await self.loop.create_connection(lambda: Recorder(self.loop),
                                                     *listener.getsockname())
            conn, _ = await conn_task
            while 'pause' not in p.calls:
                t.write(b'p' * 65536)
            self.assertEqual(p.calls, ['made', 'pause'])
            while 'resume' not in p.calls:
                await self.loop.sock_recv(conn, 1 << 20)
            self.assertEqual(p.calls, ['made', 'pause', 'resume'])
            t.close()
            conn.close()
            await p.lost
        self.run_coro(main())

    def test_drain_raises_when_the_peer_is_gone(self):
        # write/drain in a loop must end with a connection error once the
        # peer closed, not spin (bpo-25441).
        listener = listening_socket()
        self.addCleanup(listener.close)

        async def main():
            conn_task = asyncio.ensure_future(self.loop.sock_accept(listener))
            r, w = await asyncio.open_connection(*listener.getsockname())
            conn, _ = await conn_task
            conn.close()
            with self.assertRaises((ConnectionResetError, BrokenPipeError)):
                for _ in range(100_000):
                    w.write(b'foo\n')
                    await w.drain()
            w.close()
        self.run_coro(main())

    def test_drain_after_close_raises(self):
        # close() then write()+drain(): connection_lost runs before the
        # task resumes, so drain() raises ConnectionResetError.
        async def handle(r, w):
            w.write(b'bye')
            w.close()

        async def main():
            srv = await asyncio.start_server(handle, '127.0.0.1', 0)
            r, w = await asyncio.open_connection(*srv.sockets[0].getsockname())
            self.assertEqual(await r.read(), b'bye')
            w.close()
            with self.assertRaises(ConnectionResetError):
                w.write(b'data')
                await w.drain()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main())

    def test_stream_server_unix(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, 'streams.sock')

        async def handle(r, w):
            w.write((await r.readline()).upper())
            await w.drain()
            w.close()

        async def main():
            srv = await asyncio.start_unix_server(handle, path)
            r, w = await asyncio.open_unix_connection(path)
            w.write(b'shout\n')
            self.assertEqual(await r.readline(), b'SHOUT\n')
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

    def make_file(self, size):
        f = tempfile.TemporaryFile()
        data = os.urandom(size)
        f.write(data)
        f.seek(0)
        self.addCleanup(f.close)
        return f, data

    def sendfile_pair(self):
        listener = listening_socket()
        self.addCleanup(listener.close)

        async def main():
            conn_task = asyncio.ensure_future(self.loop.sock_accept(listener))
            t, p = await self.loop.create_connection(lambda: Recorder(self.loop),
                                                     *listener.getsockname())
            conn, _ = await conn_task
            return t, p, conn
        t, p, conn = self.run_coro(main())
        self.addCleanup(conn.close)
        return t, p, conn

    async def read_all(self, conn, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = await self.loop.sock_recv(conn, 1 << 20)
            if not chunk:
                break
            buf += chunk
        return bytes(buf)

    def test_sendfile(self):
        t, p, conn = self.sendfile_pair()
        f, data = self.make_file(1_000_000)

        async def main():
            t.write(b'head:')
            reader = asyncio.ensure_future(self.read_all(conn, 5 + 1_000_000 + 500))
            sent = await self.loop.sendfile(t, f)
            self.assertEqual(sent, 1_000_000)
            self.assertEqual(f.tell(), 1_000_000)
            f.seek(100)
            sent = await self.loop.sendfile(t, f, 100, 500)
            self.assertEqual(sent, 500)
            self.assertEqual(f.tell(), 600)
            got = await reader
            self.assertEqual(got, b'head:' + data + data[100:600])
            t.close()
            await p.lost
        self.run_coro(main())

    def test_sendfile_errors(self):
        t, p, conn = self.sendfile_pair()
        f, data = self.make_file(100)

        async def main():
            with self.assertRaisesRegex(ValueError, 'offset must be a non-negative integer'):
                await self.loop.sendfile(t, f, -1)
            with self.assertRaisesRegex(ValueError, 'count must be a positive integer'):
                await self.loop.sendfile(t, f, 0, 0)
            with tempfile.TemporaryFile('w') as tf:
                with self.assertRaisesRegex(ValueError, 'binary mode'):
                    await self.loop.sendfile(t, tf)
            t.close()
            with self.assertRaisesRegex(RuntimeError, 'Transport is closing'):
                await self.loop.sendfile(t, f)
            await p.lost
        self.run_coro(main())

    def test_sendfile_fallback_for_non_files(self):
        import io
        t, p, conn = self.sendfile_pair()
        buf = io.BytesIO(b'in memory' * 1000)

        async def main():
            reader = asyncio.ensure_future(self.read_all(conn, 9000))
            with self.assertRaises(asyncio.SendfileNotAvailableError):
                await self.loop.sendfile(t, buf, fallback=False)
            self.assertEqual(await self.loop.sendfile(t, buf), 9000)
            self.assertEqual(await reader, b'in memory' * 1000)
            t.close()
            await p.lost
        self.run_coro(main())

    def small_buffers(self, t):
        """Socket buffers of a few KiB, so a file of a few MiB takes many
        rounds of the loop to go out."""
        t.get_extra_info('socket').setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        t.set_write_buffer_limits(high=4096)

    def test_sendfile_refuses_writes_while_it_runs(self):
        # A write in the middle of the file would land inside it: asyncio's
        # transport refuses one while its sendfile runs (and does not read
        # meanwhile), and takes writes again once it is done.
        t, p, conn = self.sendfile_pair()
        self.small_buffers(t)
        size = 4 << 20
        f, data = self.make_file(size)

        async def main():
            self.assertTrue(t.is_reading())
            sending = asyncio.ensure_future(self.loop.sendfile(t, f))
            await asyncio.sleep(0)
            self.assertFalse(sending.done())
            with self.assertRaisesRegex(RuntimeError, 'sendfile is in progress'):
                t.write(b'data')
            self.assertFalse(t.is_reading())
            reader = asyncio.ensure_future(self.read_all(conn, size + 5))
            self.assertEqual(await sending, size)
            self.assertTrue(t.is_reading())
            t.write(b'after')
            self.assertEqual(await reader, data + b'after')
            t.close()
            await p.lost
        self.run_coro(main())

    def test_sendfile_peer_closes_in_the_middle(self):
        # The peer reads a little and closes: sendfile raises a
        # ConnectionError, the file's offset is moved past what went out,
        # and the transport ends.
        t, p, conn = self.sendfile_pair()
        self.small_buffers(t)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        size = 4 << 20
        f, data = self.make_file(size)

        async def peer():
            got = b''
            while len(got) < 1024:
                got += await self.loop.sock_recv(conn, 1024)
            conn.close()

        async def main():
            closer = asyncio.ensure_future(peer())
            with self.assertRaises(ConnectionError):
                await self.loop.sendfile(t, f)
            await closer
            self.assertTrue(1024 <= f.tell() < size, f.tell())
            await asyncio.wait_for(p.lost, 5)
            self.assertTrue(t.is_closing())
        self.run_coro(main())

    def test_sock_sendfile(self):
        f, data = self.make_file(200_000)
        a, b = socket.socketpair()
        a.setblocking(False)
        b.setblocking(False)
        self.addCleanup(a.close)
        self.addCleanup(b.close)

        async def main():
            reader = asyncio.ensure_future(self.read_all(b, 200_000))
            sent = await self.loop.sock_sendfile(a, f)
            self.assertEqual(sent, 200_000)
            self.assertEqual(f.tell(), 200_000)
            self.assertEqual(await reader, data)
            f.seek(0)
            reader = asyncio.ensure_future(self.read_all(b, 10))
            self.assertEqual(await self.loop.sock_sendfile(a, f, 5, 10), 10)
            self.assertEqual(await reader, data[5:15])
        self.run_coro(main())


twin(StreamsTests, globals())
