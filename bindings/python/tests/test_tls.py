# SPDX-License-Identifier: MIT
"""TLS through asyncio's sslproto on the loop's transports: ssl= on
create_server/create_connection and start_tls. Twin tests (asyncio's loop
and libloop's give the same results). The certificate is made at test
time with the openssl command."""

import asyncio
import ssl

from .base import LoopCase, twin
from .netbase import tls_contexts


class TLSTests(LoopCase):

    def setUp(self):
        super().setUp()
        self.server_ctx, self.client_ctx = tls_contexts()

    async def upper_server(self, **kw):
        async def handle(r, w):
            while line := await r.readline():
                w.write(line.upper())
                await w.drain()
            w.close()
        return await asyncio.start_server(handle, '127.0.0.1', 0, **kw)

    def test_ssl_server_and_client(self):
        async def main():
            srv = await self.upper_server(ssl=self.server_ctx)
            port = srv.sockets[0].getsockname()[1]
            r, w = await asyncio.open_connection('127.0.0.1', port, ssl=self.client_ctx,
                                                 server_hostname='localhost')
            self.assertIsNotNone(w.get_extra_info('peercert'))
            self.assertIsInstance(w.get_extra_info('ssl_object'), ssl.SSLObject)
            body = b'x' * 60_000 + b'\n'  # under the reader's 64 KiB line limit
            w.write(b'hello tls\n' + body)
            self.assertEqual(await r.readline(), b'HELLO TLS\n')
            self.assertEqual(await r.readline(), body.upper())
            w.close()
            await w.wait_closed()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=20)

    def test_bad_certificate_fails_handshake(self):
        async def main():
            srv = await self.upper_server(ssl=self.server_ctx)
            port = srv.sockets[0].getsockname()[1]
            with self.assertRaises(ssl.SSLCertVerificationError):
                await asyncio.open_connection('127.0.0.1', port,
                                              ssl=ssl.create_default_context(),
                                              server_hostname='localhost')
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=20)

    def test_start_tls(self):
        async def handle(r, w):
            self.assertEqual(await r.readline(), b'STARTTLS\n')
            w.write(b'GO\n')
            await w.drain()
            await w.start_tls(self.server_ctx)
            self.assertIsNotNone(w.get_extra_info('ssl_object'))
            w.write((await r.readline()).upper())
            await w.drain()
            w.close()

        async def main():
            srv = await asyncio.start_server(handle, '127.0.0.1', 0)
            port = srv.sockets[0].getsockname()[1]
            r, w = await asyncio.open_connection('127.0.0.1', port)
            w.write(b'STARTTLS\n')
            self.assertEqual(await r.readline(), b'GO\n')
            await w.start_tls(self.client_ctx, server_hostname='localhost')
            self.assertIsNotNone(w.get_extra_info('peercert'))
            w.write(b'secret\n')
            self.assertEqual(await r.readline(), b'SECRET\n')
            self.assertEqual(await r.read(), b'')
            w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=20)

    def test_loop_start_tls_on_a_protocol_transport(self):
        async def main():
            srv = await self.upper_server(ssl=self.server_ctx)
            port = srv.sockets[0].getsockname()[1]
            got = asyncio.Queue()

            class P(asyncio.Protocol):
                def data_received(self, data):
                    got.put_nowait(data)
            t, p = await self.loop.create_connection(P, '127.0.0.1', port)
            tls = await self.loop.start_tls(t, p, self.client_ctx,
                                            server_hostname='localhost')
            self.assertIsNot(tls, t)
            self.assertIs(tls.get_protocol(), p)
            tls.write(b'over tls\n')
            self.assertEqual(await got.get(), b'OVER TLS\n')
            tls.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=20)


twin(TLSTests, globals())
