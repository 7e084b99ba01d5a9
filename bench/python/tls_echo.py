# SPDX-License-Identifier: MIT
"""W11's Python TLS echo servers (bench/run_tls.sh): asyncio, uvloop or
libloop's Python loop with an ssl= context (OpenSSL, through asyncio's
sslproto on asyncio and libloop, uvloop's own), a Protocol that writes back
what it reads; libloop-tls: libloop's loop with a libloop.TLSConfig (the
library's TLS, Go's crypto/tls, plaintext to the Protocol). Prints
"PORT <n>" once listening; stops itself after 900 s.

    /usr/bin/python3 tls_echo.py asyncio|uvloop|libloop|libloop-tls CERT.pem KEY.pem

libloop needs PYTHONPATH=bindings/python (run_tls.sh sets it).
"""
import asyncio
import ssl
import sys


class Echo(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


async def main(kind, cert, key):
    if kind == "libloop-tls":
        import libloop
        ctx = libloop.TLSConfig()
    else:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    loop = asyncio.get_running_loop()
    srv = await loop.create_server(Echo, "127.0.0.1", 0, ssl=ctx, backlog=1024)
    print("PORT %d" % srv.sockets[0].getsockname()[1], flush=True)
    await asyncio.sleep(900)


if __name__ == "__main__":
    kind, cert, key = sys.argv[1:4]
    if kind == "uvloop":
        import uvloop  # Debian's python3-uvloop (0.17: no uvloop.run)
        uvloop.install()
    elif kind in ("libloop", "libloop-tls"):
        import libloop
        libloop.install()
    elif kind != "asyncio":
        raise SystemExit("tls_echo.py: unknown loop %r" % kind)
    asyncio.run(main(kind, cert, key))
