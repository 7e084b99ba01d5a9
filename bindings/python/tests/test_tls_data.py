# SPDX-License-Identifier: MIT
"""Application data over TLS with an ssl.SSLContext (asyncio's sslproto on
asyncio's loop, libloop's wrapped-state path on libloop's): records split
into tiny TCP segments and many records in one, large echoes, pause and
resume of reading and writing, close/abort/EOF while data flows, a peer
that sends garbage, get_extra_info. Twin tests: both loops must behave
alike. The peer is a hand-driven ssl.SSLObject over a plain socket, so a
test chooses how the TLS bytes are cut."""

import asyncio
import socket
import ssl

from .base import LoopCase, twin
from .netbase import Recorder, tls_contexts


class RawTLSPeer:
    """A TLS client over a non-blocking socket whose records the test
    sends in chosen pieces (loop.sock_* calls)."""

    def __init__(self, loop, ctx):
        self.loop = loop
        self.inc = ssl.MemoryBIO()
        self.out = ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_hostname='localhost')
        self.sock = socket.socket()
        self.sock.setblocking(False)
        self.plain = bytearray()
        self.eof = False

    async def connect(self, port):
        await self.loop.sock_connect(self.sock, ('127.0.0.1', port))
        while True:
            try:
                self.obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                await self.flush()
                await self._feed()
        await self.flush()

    async def flush(self, piece=None):
        """Send what OpenSSL produced, in pieces of `piece` bytes."""
        data = self.out.read()
        step = piece or len(data) or 1
        for i in range(0, len(data), step):
            await self.loop.sock_sendall(self.sock, data[i:i + step])
            if piece:
                await asyncio.sleep(0)

    async def _feed(self):
        data = await self.loop.sock_recv(self.sock, 65536)
        if not data:
            self.eof = True
            self.inc.write_eof()
        else:
            self.inc.write(data)

    def encrypt(self, data):
        self.obj.write(data)

    async def read_plain(self, n):
        """At least n plaintext bytes (fewer if the peer ends)."""
        while len(self.plain) < n and not self.eof:
            try:
                chunk = self.obj.read(65536)
                if not chunk:
                    break
                self.plain += chunk
                continue
            except ssl.SSLWantReadError:
                pass
            await self._feed()
        return bytes(self.plain[:n])

    def close(self):
        self.sock.close()


class Echo(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


class TLSDataTests(LoopCase):

    def setUp(self):
        super().setUp()
        self.server_ctx, self.client_ctx = tls_contexts()
        self.peers = []

    async def serve(self, factory=None):
        """A TLS server of factory (a Recorder by default); its protocols
        go in self.made."""
        self.made = []

        def made():
            p = factory() if factory else Recorder(self.loop)
            self.made.append(p)
            return p
        srv = await self.loop.create_server(made, '127.0.0.1', 0, ssl=self.server_ctx)
        self.srv = srv
        return srv, srv.sockets[0].getsockname()[1]

    async def peer(self, port):
        p = RawTLSPeer(self.loop, self.client_ctx)
        self.peers.append(p)
        await p.connect(port)
        return p

    async def finish(self):
        """End what a test left open (no unclosed-resource warnings)."""
        for p in self.peers:
            p.close()
        for proto in self.made:
            t = getattr(proto, 'transport', None)
            if t is not None and not t.is_closing():
                t.abort()
        self.srv.close()
        await self.srv.wait_closed()
        await asyncio.sleep(0.05)

    def test_records_cut_into_tiny_segments_are_echoed(self):
        async def main():
            _, port = await self.serve(Echo)
            p = await self.peer(port)
            msg = bytes(range(256)) * 20
            p.encrypt(msg)
            await p.flush(piece=7)  # every record arrives in 7-byte pieces
            self.assertEqual(await p.read_plain(len(msg)), msg)
            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_many_records_in_one_segment_are_all_delivered(self):
        async def main():
            _, port = await self.serve()
            server = self.made
            p = await self.peer(port)
            parts = [bytes([65 + i]) * (100 + i) for i in range(40)]
            for part in parts:
                p.encrypt(part)  # one record each
            await p.flush()      # all in one send
            want = b''.join(parts)
            await server[0].wait_for_bytes(len(want))
            self.assertEqual(bytes(server[0].data), want)
            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_large_echo_through_streams(self):
        async def handle(r, w):
            while data := await r.read(65536):
                w.write(data)
                await w.drain()
            w.close()

        async def main():
            srv = await asyncio.start_server(handle, '127.0.0.1', 0, ssl=self.server_ctx)
            port = srv.sockets[0].getsockname()[1]
            r, w = await asyncio.open_connection('127.0.0.1', port, ssl=self.client_ctx,
                                                 server_hostname='localhost')
            body = bytes(range(251)) * 8000  # ~2 MB, not a multiple of a record
            w.write(body)
            self.assertEqual(await r.readexactly(len(body)), body)
            for n in (1, 2, 16383, 16384, 16385):  # around the record size
                w.write(b'z' * n)
                self.assertEqual(await r.readexactly(n), b'z' * n)
            w.close()
            await w.wait_closed()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_buffered_protocol_app_gets_every_record(self):
        class Buffered(asyncio.BufferedProtocol):
            def __init__(self):
                self.buf = bytearray(1000)  # smaller than what arrives at once
                self.got = bytearray()

            def connection_made(self, transport):
                self.transport = transport

            def get_buffer(self, sizehint):
                return self.buf

            def buffer_updated(self, nbytes):
                self.got += self.buf[:nbytes]

        async def main():
            _, port = await self.serve(Buffered)
            p = await self.peer(port)
            msg = bytes(range(256)) * 100
            for i in range(0, len(msg), 3000):
                p.encrypt(msg[i:i + 3000])
            await p.flush()
            app = self.made[0]
            for _ in range(500):
                if len(app.got) >= len(msg):
                    break
                await asyncio.sleep(0.01)
            self.assertEqual(bytes(app.got), msg)
            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_pause_and_resume_reading(self):
        async def main():
            _, port = await self.serve()
            server = self.made
            p = await self.peer(port)
            p.encrypt(b'first')
            await p.flush()
            rec = server[0]
            await rec.wait_for_bytes(5)
            rec.transport.pause_reading()
            self.assertFalse(rec.transport.is_reading())
            p.encrypt(b'second')
            await p.flush()
            await asyncio.sleep(0.1)
            self.assertEqual(bytes(rec.data), b'first')
            rec.transport.resume_reading()
            self.assertTrue(rec.transport.is_reading())
            await rec.wait_for_bytes(11)
            self.assertEqual(bytes(rec.data), b'firstsecond')
            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_pause_and_resume_writing(self):
        async def main():
            _, port = await self.serve()
            server = self.made
            p = await self.peer(port)
            p.encrypt(b'go')
            await p.flush()
            rec = server[0]
            await rec.wait_for_bytes(2)
            t = rec.transport
            t.set_write_buffer_limits(high=64 * 1024, low=16 * 1024)
            chunk = b'w' * 65536
            sent = 0
            while 'pause' not in rec.calls and sent < 64 * 1024 * 1024:
                t.write(chunk)  # the peer reads nothing: the buffers fill
                sent += len(chunk)
                await asyncio.sleep(0)
            self.assertIn('pause', rec.calls)
            self.assertGreaterEqual(t.get_write_buffer_size(), 16 * 1024)
            self.assertEqual(await p.read_plain(sent), chunk * (sent // len(chunk)))
            for _ in range(200):
                if 'resume' in rec.calls:
                    break
                await asyncio.sleep(0.01)
            self.assertEqual([c for c in rec.calls if c in ('pause', 'resume')],
                             ['pause', 'resume'])
            await self.finish()
        self.run_coro(main(), timeout=30)

    def test_data_then_close_notify_in_one_segment(self):
        async def main():
            _, port = await self.serve()
            server = self.made
            p = await self.peer(port)
            p.encrypt(b'last words')
            try:
                p.obj.unwrap()  # close_notify after the data
            except ssl.SSLWantReadError:
                pass
            await p.flush()
            rec = server[0]
            await asyncio.wait_for(rec.lost, 10)
            self.assertEqual(bytes(rec.data), b'last words')
            self.assertEqual(rec.calls, ['made', 'data', 'eof', 'lost'])
            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_server_close_after_write_delivers_then_ends(self):
        class WriteClose(asyncio.Protocol):
            def connection_made(self, transport):
                transport.write(b'bye' * 10000)
                transport.close()

        async def main():
            _, port = await self.serve(WriteClose)
            p = await self.peer(port)
            self.assertEqual(await p.read_plain(30000), b'bye' * 10000)
            self.assertEqual(await p.read_plain(30001), b'bye' * 10000)  # then the end

            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_abort_during_data(self):
        async def main():
            _, port = await self.serve()
            server = self.made
            p = await self.peer(port)
            p.encrypt(b'x' * 1000)
            await p.flush()
            rec = server[0]
            await rec.wait_for_bytes(1000)
            rec.transport.write(b'y' * 100)
            rec.transport.abort()
            self.assertTrue(rec.transport.is_closing())
            rec.transport.write(b'after abort')  # ignored, as asyncio does
            self.assertIsNone(await asyncio.wait_for(rec.lost, 10))
            self.assertEqual(rec.calls, ['made', 'data', 'lost'])
            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_garbage_after_handshake_ends_the_connection(self):
        async def main():
            _, port = await self.serve()
            server = self.made
            p = await self.peer(port)
            p.encrypt(b'good')
            await p.flush()
            rec = server[0]
            await rec.wait_for_bytes(4)
            await self.loop.sock_sendall(p.sock, b'\x17\x03\x03\x00\x20' + b'\xee' * 32)
            exc = await asyncio.wait_for(rec.lost, 10)
            self.assertIsInstance(exc, ssl.SSLError)
            self.assertEqual(bytes(rec.data), b'good')
            self.assertEqual(rec.calls, ['made', 'data', 'lost'])
            await self.finish()
        self.collect_errors()  # (an SSLError is an OSError: asyncio reports none)
        self.run_coro(main(), timeout=20)
        self.assertEqual(self.errors, [])

    def test_extra_info(self):
        async def main():
            _, port = await self.serve()
            server = self.made
            p = await self.peer(port)
            p.encrypt(b'hi')
            await p.flush()
            rec = server[0]
            await rec.wait_for_bytes(2)
            t = rec.transport
            self.assertIs(t.get_extra_info('sslcontext'), self.server_ctx)
            obj = t.get_extra_info('ssl_object')
            self.assertIsInstance(obj, ssl.SSLObject)
            self.assertEqual(obj.version(), p.obj.version())
            self.assertEqual(t.get_extra_info('cipher'), p.obj.cipher())
            self.assertIsNone(t.get_extra_info('peercert'))  # the client sent none
            self.assertEqual(t.get_extra_info('peername'), p.sock.getsockname())
            self.assertEqual(t.get_extra_info('sockname'), ('127.0.0.1', port))
            self.assertEqual(t.get_extra_info('socket').fileno() >= 0, True)
            self.assertEqual(t.get_extra_info('nonexistent', 'dflt'), 'dflt')
            await self.finish()
        self.run_coro(main(), timeout=20)

    def test_start_tls_checks_and_failed_handshake(self):
        async def main():
            srv = await self.loop.create_server(Echo, '127.0.0.1', 0, ssl=self.server_ctx)
            port = srv.sockets[0].getsockname()[1]
            t, p = await self.loop.create_connection(asyncio.Protocol, '127.0.0.1', port)
            with self.assertRaisesRegex(TypeError, 'sslcontext is expected'):
                await self.loop.start_tls(t, p, object())
            with self.assertRaises(ssl.SSLCertVerificationError):
                await self.loop.start_tls(t, p, ssl.create_default_context(),
                                          server_hostname='localhost')
            self.assertTrue(t.is_closing())  # a failed upgrade closes the transport
            t2, p2 = await self.loop.create_connection(Echo, '127.0.0.1', port)
            tls = await self.loop.start_tls(t2, p2, self.client_ctx, server_hostname='localhost')
            got = []
            p2.data_received = got.append  # (Echo would write back to the server)
            tls.write(b'via start_tls ' * 1000)
            while sum(map(len, got)) < 14000:
                await asyncio.sleep(0.01)
            self.assertEqual(b''.join(got), b'via start_tls ' * 1000)
            tls.close()
            srv.close()
            await srv.wait_closed()
            await asyncio.sleep(0.05)
        self.collect_errors()  # (the server's side of the failed handshake, in debug mode)
        self.run_coro(main(), timeout=20)


twin(TLSDataTests, globals())
