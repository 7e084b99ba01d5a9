# SPDX-License-Identifier: MIT
"""python_tls.py — a TLS server whose certificate is loaded through libloop
(libloop.TLSConfig: the library's TLS, plaintext to the protocol), and an
asyncio client with an ordinary ssl.SSLContext on the same loop.

The certificate is made here with the openssl command (skipped without it)."""

import asyncio
import os
import shutil
import ssl
import subprocess
import sys
import tempfile

import libloop


async def upper(reader, writer):
    tls = writer.get_extra_info('ssl_object')      # a libloop.TLSInfo
    assert tls.version() == 'TLSv1.3', tls.version()
    writer.write((await reader.readline()).upper())
    await writer.drain()
    writer.close()                                  # close_notify, then close


async def main(cert, key):
    cfg = libloop.TLSConfig()
    cfg.load_cert_chain(cert, key)                  # as ssl.SSLContext's
    server = await asyncio.start_server(upper, '127.0.0.1', 0, ssl=cfg)
    port = server.sockets[0].getsockname()[1]

    client = ssl.create_default_context(cafile=cert)
    reader, writer = await asyncio.open_connection('127.0.0.1', port, ssl=client,
                                                   server_hostname='localhost')
    writer.write(b'hello over tls\n')
    line = await reader.readline()
    assert line == b'HELLO OVER TLS\n', line
    assert await reader.read() == b''               # the server's close
    writer.close()
    server.close()
    await server.wait_closed()
    cfg.close()
    return line


if __name__ == '__main__':
    if shutil.which('openssl') is None:
        print('python_tls.py: no openssl command to make a certificate; skipped')
        sys.exit(0)
    with tempfile.TemporaryDirectory() as d:
        cert, key = os.path.join(d, 'cert.pem'), os.path.join(d, 'key.pem')
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                        'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert,
                        '-days', '1', '-subj', '/CN=localhost',
                        '-addext', 'subjectAltName=DNS:localhost'],
                       check=True, capture_output=True)
        print(libloop.run(main(cert, key)).decode().strip())
