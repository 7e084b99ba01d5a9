# SPDX-License-Identifier: MIT
"""Helpers of the network twin tests: a protocol that records what it is
told, an echo protocol, a blocking peer socket for the other side, and
the clean-up of the transports a test opened."""

import asyncio
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import unittest


class ClosesOpened:
    """For a LoopCase: self.opened collects the transports a test makes;
    each still open is aborted after the test and the loop runs briefly so
    their connection_lost is delivered before the loop closes."""

    def setUp(self):
        super().setUp()
        self.opened = []

    def tearDown(self):
        if not self.loop.is_closed():
            for t in self.opened:
                if not t.is_closing():
                    t.abort()
            self.run_coro(asyncio.sleep(0.01))
        self.opened = None
        super().tearDown()


class Recorder(asyncio.Protocol):
    """Records every protocol call in self.calls, data in self.data."""

    def __init__(self, loop, keep_open_on_eof=False):
        self.loop = loop
        self.calls = []
        self.data = bytearray()
        self.transport = None
        self.exc = 'not lost'
        self.keep_open_on_eof = keep_open_on_eof
        self.lost = loop.create_future()
        self.got_eof = loop.create_future()
        self.got_data = asyncio.Event()

    def connection_made(self, transport):
        self.calls.append('made')
        self.transport = transport

    def data_received(self, data):
        if not self.calls or self.calls[-1] != 'data':
            self.calls.append('data')
        self.data += data
        self.got_data.set()

    def eof_received(self):
        self.calls.append('eof')
        if not self.got_eof.done():
            self.got_eof.set_result(None)
        return self.keep_open_on_eof

    def pause_writing(self):
        self.calls.append('pause')

    def resume_writing(self):
        self.calls.append('resume')

    def connection_lost(self, exc):
        self.calls.append('lost')
        self.exc = exc
        if not self.lost.done():
            self.lost.set_result(exc)

    async def wait_for_bytes(self, n):
        while len(self.data) < n:
            self.got_data.clear()
            if self.lost.done():
                break
            await self.got_data.wait()


class Echo(asyncio.Protocol):
    """Echoes everything back; closes on EOF (asyncio's default)."""

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.transport.write(data)


def listening_socket(family=socket.AF_INET, host='127.0.0.1'):
    """A bound, listening, non-blocking TCP socket on a free port."""
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind((host, 0))
    s.listen(10)
    s.setblocking(False)
    return s


def connected_pair(case):
    """(transport, Recorder, peer socket): a create_connection on case.loop
    to a plain listening socket, accepted with sock_accept; the peer is
    closed at cleanup."""
    listener = listening_socket()
    case.addCleanup(listener.close)

    async def main():
        fut = case.loop.create_task(case.loop.create_connection(
            lambda: Recorder(case.loop), *listener.getsockname()))
        conn, _ = await case.loop.sock_accept(listener)
        t, p = await fut
        return t, p, conn
    t, p, peer = case.run_coro(main())
    case.addCleanup(peer.close)
    return t, p, peer


def recv_exactly(case, peer, n):
    """n bytes from the peer socket, read with case.loop's sock_recv (the
    socket is made non-blocking)."""
    async def main():
        got = b''
        while len(got) < n:
            got += await case.loop.sock_recv(peer, n - len(got))
        return got
    peer.setblocking(False)
    return case.run_coro(main())


async def wait_until(cond, tries=200, pause=0.005):
    """Await until cond() is true, or tries pauses have passed."""
    for _ in range(tries):
        if cond():
            return
        await asyncio.sleep(pause)


def free_port():
    """A port nothing listens on (bound then closed)."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def has_ipv6():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(('::1', 0))
        return True
    except OSError:
        return False


def tempdir(case):
    """A temporary directory removed after the test."""
    d = tempfile.mkdtemp(prefix='libloop-net-')
    case.addCleanup(shutil.rmtree, d, True)
    return d


_CERT = None


def self_signed_cert():
    """(certfile, keyfile) of a self-signed certificate for 'localhost',
    made once with the openssl command; None when openssl is missing."""
    global _CERT
    if _CERT is not None:
        return _CERT or None
    openssl = shutil.which('openssl')
    if openssl is None:
        _CERT = ()
        return None
    d = tempfile.mkdtemp(prefix='libloop-cert-')
    cert, key = os.path.join(d, 'cert.pem'), os.path.join(d, 'key.pem')
    r = subprocess.run([openssl, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes',
                        '-keyout', key, '-out', cert, '-days', '2',
                        '-subj', '/CN=localhost',
                        '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
                       capture_output=True)
    _CERT = (cert, key) if r.returncode == 0 else ()
    return _CERT or None


def tls_contexts():
    """(server context, client context) for 'localhost' on
    self_signed_cert's certificate; unittest.SkipTest without openssl."""
    cert = self_signed_cert()
    if cert is None:
        raise unittest.SkipTest('no openssl command to make a test certificate')
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(*cert)
    return server_ctx, ssl.create_default_context(cafile=cert[0])
