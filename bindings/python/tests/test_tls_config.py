# SPDX-License-Identifier: MIT
"""TLS servers whose certificate is loaded through libloop (libloop.TLSConfig,
served by the library's TLS) behave as asyncio's TLS servers: twin tests
where asyncio's loop serves with an ssl.SSLContext and libloop's with a
TLSConfig set up the same way, and the protocol and the clients (asyncio's
ssl, on the same loop) see the same things. Then what only TLSConfig has."""

import asyncio
import socket
import ssl
import unittest

import libloop

from .base import LibloopLoop, LoopCase, twin
from .netbase import self_signed_cert


class Recorder(asyncio.Protocol):
    """A server protocol that logs its calls and echoes (unless told not to)."""

    def __init__(self, log, echo=True):
        self.log, self.echo = log, echo
        self.transport = None
        self.lost = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport
        self.log.append('made')

    def data_received(self, data):
        self.log.append(('data', len(data)))
        if self.echo:
            self.transport.write(data)

    def eof_received(self):
        self.log.append('eof')

    def connection_lost(self, exc):
        self.log.append(('lost', exc))
        self.lost.set_result(None)


class TLSServerTests(LoopCase):

    def setUp(self):
        super().setUp()
        cert = self_signed_cert()
        if cert is None:
            raise unittest.SkipTest('no openssl command to make a test certificate')
        self.cert, self.key = cert
        self.client_ctx = ssl.create_default_context(cafile=self.cert)

    def server_ssl(self, verify_mode=None, cafile=None, alpn=None):
        """This flavour's server config: libloop's loop gets a TLSConfig,
        asyncio's an ssl.SSLContext, set up alike."""
        if isinstance(self.loop, libloop.EventLoop):
            ctx = libloop.TLSConfig()
            self.addCleanup(ctx.close)
        else:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        if cafile is not None:
            ctx.load_verify_locations(cafile=cafile)
        if verify_mode is not None:
            ctx.verify_mode = verify_mode
        if alpn is not None:
            ctx.set_alpn_protocols(alpn)
        return ctx

    async def serve(self, log, ctx=None, **kw):
        protos = []

        def factory():
            protos.append(Recorder(log, **kw))
            return protos[-1]
        srv = await self.loop.create_server(factory, '127.0.0.1', 0, ssl=ctx or self.server_ssl())
        return srv, srv.sockets[0].getsockname()[1], protos

    async def connect(self, port, ctx=None):
        return await asyncio.open_connection('127.0.0.1', port, ssl=ctx or self.client_ctx,
                                             server_hostname='localhost')

    def test_echo_events_and_extra_info(self):
        async def main():
            log = []
            ctx = self.server_ssl()
            srv, port, protos = await self.serve(log, ctx)
            r, w = await self.connect(port)
            body = bytes(range(256)) * 800  # 200 KiB, many records
            w.write(body)
            self.assertEqual(await r.readexactly(len(body)), body)
            t = protos[0].transport
            self.assertIs(t.get_extra_info('sslcontext'), ctx)
            self.assertEqual(t.get_extra_info('ssl_object').version(), 'TLSv1.3')
            name, version, bits = t.get_extra_info('cipher')
            self.assertTrue(name.startswith('TLS_'))
            self.assertEqual((version, bits in (128, 256)), ('TLSv1.3', True))
            self.assertIsNone(t.get_extra_info('peercert'))  # no client certificate
            self.assertIsNone(t.get_extra_info('compression'))
            self.assertEqual(t.get_extra_info('peername'), w.get_extra_info('sockname'))
            self.assertEqual(t.get_extra_info('nothing', 'dflt'), 'dflt')
            self.assertFalse(t.can_write_eof())
            with self.assertRaises(NotImplementedError):
                t.write_eof()
            w.close()  # close_notify: the server's protocol hears EOF, then loses
            await w.wait_closed()
            await protos[0].lost
            self.assertEqual(log[0], 'made')
            self.assertEqual(sum(n for kind, n in log[1:-2]), len(body))
            self.assertEqual(log[-2:], ['eof', ('lost', None)])
            self.assertEqual(t.get_extra_info('ssl_object').version(), 'TLSv1.3')  # still known
            self.assertEqual(t.get_extra_info('cipher')[1], 'TLSv1.3')
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_server_close_flushes_then_ends(self):
        async def main():
            log = []
            srv, port, protos = await self.serve(log, echo=False)
            r, w = await self.connect(port)
            w.write(b'go')
            while not log[1:]:
                await asyncio.sleep(0.01)
            t = protos[0].transport
            t.write(b'x' * 300_000)
            t.close()
            self.assertTrue(t.is_closing())
            self.assertEqual(await r.read(), b'x' * 300_000)  # then EOF
            await protos[0].lost
            self.assertEqual(log[-1], ('lost', None))
            w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_abort_ends_the_connection(self):
        async def main():
            log = []
            srv, port, protos = await self.serve(log, echo=False)
            r, w = await self.connect(port)
            w.write(b'go')
            while not log[1:]:
                await asyncio.sleep(0.01)
            protos[0].transport.abort()
            await protos[0].lost
            self.assertEqual(log[-1], ('lost', None))
            try:
                self.assertEqual(await r.read(), b'')
            except (ConnectionError, ssl.SSLError):
                pass  # an abort may reach the client as a reset
            w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_pause_and_resume_reading(self):
        async def main():
            log = []
            srv, port, protos = await self.serve(log, echo=False)
            r, w = await self.connect(port)
            w.write(b'a' * 10)
            while not log[1:]:
                await asyncio.sleep(0.01)
            t = protos[0].transport
            t.pause_reading()
            self.assertFalse(t.is_reading())
            w.write(b'b' * 5000)
            await w.drain()
            await asyncio.sleep(0.2)
            self.assertEqual(log, ['made', ('data', 10)])
            t.resume_reading()
            self.assertTrue(t.is_reading())
            while sum(n for kind, n in log[1:]) < 5010:
                await asyncio.sleep(0.01)
            w.close()
            await protos[0].lost
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_failed_handshake_never_reaches_the_protocol(self):
        async def main():
            log = []
            srv, port, protos = await self.serve(log)
            with self.assertRaises(ssl.SSLCertVerificationError):
                await self.connect(port, ssl.create_default_context())  # no trust in ours
            raw = socket.create_connection(('127.0.0.1', port))  # not TLS at all
            raw.sendall(b'GET / HTTP/1.0\r\n\r\n')
            raw.setblocking(False)
            try:  # an alert perhaps, then the server closes it
                while await self.loop.sock_recv(raw, 1024):
                    pass
            except ConnectionError:
                pass
            r, w = await self.connect(port)  # the server goes on
            w.write(b'ok')
            self.assertEqual(await r.readexactly(2), b'ok')
            raw.close()
            w.close()
            await protos[-1].lost
            self.assertEqual(log, ['made', ('data', 2), 'eof', ('lost', None)])
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_client_certificate_required(self):
        async def main():
            log = []
            ctx = self.server_ssl(verify_mode=ssl.CERT_REQUIRED, cafile=self.cert)
            srv, port, protos = await self.serve(log, ctx)
            client = ssl.create_default_context(cafile=self.cert)
            client.load_cert_chain(self.cert, self.key)
            r, w = await self.connect(port, client)
            w.write(b'hi')
            self.assertEqual(await r.readexactly(2), b'hi')
            t = protos[0].transport
            peer = t.get_extra_info('peercert')
            self.assertIn((('commonName', 'localhost'),), peer['subject'])
            der = t.get_extra_info('ssl_object').getpeercert(binary_form=True)
            with open(self.cert) as f:
                self.assertEqual(der, ssl.PEM_cert_to_DER_cert(f.read()))
            w.close()
            await protos[0].lost
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_alpn(self):
        async def main():
            log = []
            srv, port, protos = await self.serve(log, self.server_ssl(alpn=['h2', 'http/1.1']))
            client = ssl.create_default_context(cafile=self.cert)
            client.set_alpn_protocols(['http/1.1'])
            r, w = await self.connect(port, client)
            w.write(b'hi')
            await r.readexactly(2)
            self.assertEqual(w.get_extra_info('ssl_object').selected_alpn_protocol(), 'http/1.1')
            self.assertEqual(
                protos[0].transport.get_extra_info('ssl_object').selected_alpn_protocol(), 'http/1.1')
            w.close()
            await protos[0].lost
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_handshake_timeout(self):
        async def main():
            log = []
            srv = await self.loop.create_server(lambda: Recorder(log), '127.0.0.1', 0,
                                                ssl=self.server_ssl(), ssl_handshake_timeout=0.3)
            port = srv.sockets[0].getsockname()[1]
            r, w = await asyncio.open_connection('127.0.0.1', port)  # says nothing
            t0 = self.loop.time()
            self.assertEqual(await r.read(), b'')  # the server gave up on it
            self.assertGreaterEqual(self.loop.time() - t0, 0.25)
            self.assertEqual(log, [])
            w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_start_server_streams(self):
        async def handle(r, w):
            w.write((await r.readline()).upper())
            await w.drain()
            w.close()

        async def main():
            srv = await asyncio.start_server(handle, '127.0.0.1', 0, ssl=self.server_ssl())
            port = srv.sockets[0].getsockname()[1]
            r, w = await self.connect(port)
            w.write(b'hello\n')
            self.assertEqual(await r.readline(), b'HELLO\n')
            self.assertEqual(await r.read(), b'')
            w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)


twin(TLSServerTests, globals())


class TLSConfigTests(LoopCase, LibloopLoop, unittest.TestCase):
    """What only libloop.TLSConfig has: its errors and where it is refused."""

    def setUp(self):
        super().setUp()
        cert = self_signed_cert()
        if cert is None:
            raise unittest.SkipTest('no openssl command to make a test certificate')
        self.cert, self.key = cert
        self.cfg = libloop.TLSConfig()
        self.addCleanup(self.cfg.close)

    def test_bad_files_and_arguments(self):
        with self.assertRaises(FileNotFoundError):
            self.cfg.load_cert_chain('/nonexistent/cert.pem')
        with self.assertRaises(ssl.SSLError):
            self.cfg.load_cert_chain(self.cert, self.cert)  # no key in it
        with self.assertRaises(ValueError):
            self.cfg.load_cert_chain(self.cert, self.key, password='x')
        with self.assertRaises(TypeError):
            self.cfg.load_verify_locations()
        with self.assertRaises(ValueError):
            self.cfg.verify_mode = 7
        with self.assertRaises(ValueError):
            self.cfg.minimum_version = ssl.TLSVersion.TLSv1_1
        with self.assertRaises(ValueError):
            self.cfg.set_timeouts(handshake=-1)
        self.cfg.load_cert_chain(self.cert, self.key)  # still usable
        self.cfg.minimum_version = ssl.TLSVersion.TLSv1_3
        self.assertEqual(self.cfg.minimum_version, ssl.TLSVersion.TLSv1_3)
        self.cfg.close()
        with self.assertRaises(ValueError):
            self.cfg.load_cert_chain(self.cert, self.key)

    def test_closed_config_is_refused(self):
        async def main():
            self.cfg.close()
            with self.assertRaises(ValueError):
                srv = await self.loop.create_server(asyncio.Protocol, '127.0.0.1', 0,
                                                    ssl=self.cfg, start_serving=False)
                try:
                    await srv.start_serving()
                finally:
                    srv.close()
        self.run_coro(main(), timeout=30)

    def test_version_floor_refuses_older_clients(self):
        async def main():
            self.cfg.load_cert_chain(self.cert, self.key)
            self.cfg.minimum_version = ssl.TLSVersion.TLSv1_3
            srv = await self.loop.create_server(asyncio.Protocol, '127.0.0.1', 0, ssl=self.cfg)
            port = srv.sockets[0].getsockname()[1]
            client = ssl.create_default_context(cafile=self.cert)
            client.maximum_version = ssl.TLSVersion.TLSv1_2
            with self.assertRaises((ssl.SSLError, ConnectionError)):
                await asyncio.open_connection('127.0.0.1', port, ssl=client,
                                              server_hostname='localhost')
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_clients_and_start_tls_refuse_it(self):
        async def main():
            srv = await self.loop.create_server(asyncio.Protocol, '127.0.0.1', 0)
            port = srv.sockets[0].getsockname()[1]
            with self.assertRaises(TypeError):
                await self.loop.create_connection(asyncio.Protocol, '127.0.0.1', port,
                                                  ssl=self.cfg, server_hostname='localhost')
            tr, _ = await self.loop.create_connection(asyncio.Protocol, '127.0.0.1', port)
            with self.assertRaises(TypeError):
                await self.loop.start_tls(tr, tr.get_protocol(), self.cfg)
            tr.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)


if __name__ == '__main__':
    unittest.main()
