# SPDX-License-Identifier: MIT
"""The fault campaign of issue 13, as twin tests (asyncio's loop and
libloop's give the same results): peers that reset mid-write, vanish
mid-handshake or mid-read, drip one byte at a time beside 1,000 served
connections, never read, half-close and keep reading; accept under EMFILE;
connect/close and spawn/kill cycles with the fd count flat.
LIBLOOP_LONG_TESTS=1 runs longer variants."""

import asyncio
import os
import socket
import ssl
import struct
import subprocess
import sys
import textwrap
import threading
import time

from .base import LoopCase, twin
from .netbase import Echo, tls_contexts

LONG = bool(os.environ.get('LIBLOOP_LONG_TESTS'))


def open_fds():
    return len(os.listdir('/proc/self/fd'))


def fd_table():
    """fd -> what it is, for a failure message."""
    out = {}
    for name in os.listdir('/proc/self/fd'):
        try:
            out[int(name)] = os.readlink('/proc/self/fd/' + name)
        except OSError:
            pass
    return out


def reset_close(sock):
    """Close with SO_LINGER 0: the peer sees a reset."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    sock.close()


def pattern(offset, n):
    return bytes((offset + i) * 131 + 7 & 0xff for i in range(n))


class Collect(asyncio.Protocol):
    """A server-side protocol; every instance is kept in `made`."""

    made = None

    def __init__(self, on_data=None, keep_open_on_eof=False):
        self.transport = None
        self.data = bytearray()
        self.lost = []
        self.on_data = on_data
        self.keep_open_on_eof = keep_open_on_eof
        self.paused = False
        self.pauses = self.resumes = 0

    def connection_made(self, transport):
        self.transport = transport
        Collect.made.append(self)

    def data_received(self, data):
        self.data += data
        if self.on_data:
            self.on_data(self, data)

    def eof_received(self):
        return self.keep_open_on_eof

    def pause_writing(self):
        self.paused = True
        self.pauses += 1

    def resume_writing(self):
        self.paused = False
        self.resumes += 1

    def connection_lost(self, exc):
        self.lost.append(exc)


class NetFaultTests(LoopCase):

    def setUp(self):
        super().setUp()
        Collect.made = []

    async def until(self, cond, timeout=10):
        end = time.monotonic() + timeout
        while not cond():
            self.assertLess(time.monotonic(), end, 'timed out')
            await asyncio.sleep(0.005)

    async def bystander(self, port):
        r, w = await asyncio.open_connection('127.0.0.1', port)
        return r, w

    async def check_bystander(self, rw):
        r, w = rw
        w.write(b'still-served')
        self.assertEqual(await asyncio.wait_for(r.readexactly(12), 5), b'still-served')

    def test_reset_mid_write(self):
        async def main():
            def answer(p, data):
                if len(p.data) == len(data):  # the request: answer 8 MiB
                    for i in range(128):
                        p.transport.write(bytes(65536))
            srv = await self.loop.create_server(lambda: Collect(answer), '127.0.0.1', 0)
            echo = await self.loop.create_server(Echo, '127.0.0.1', 0)
            by = await self.bystander(echo.sockets[0].getsockname()[1])
            peer = socket.create_connection(srv.sockets[0].getsockname()[:2])
            peer.sendall(b'GET')
            await self.until(lambda: Collect.made and Collect.made[0].transport.get_write_buffer_size() > 1 << 20)
            peer.recv(4096)
            reset_close(peer)
            p = Collect.made[0]
            await self.until(lambda: p.lost)
            await asyncio.sleep(0.05)
            self.assertEqual(len(p.lost), 1)
            self.assertIsInstance(p.lost[0], (ConnectionResetError, BrokenPipeError))
            await self.check_bystander(by)
            by[1].close()
            srv.close()
            echo.close()
            await srv.wait_closed()
            await echo.wait_closed()
        self.run_coro(main())

    def test_vanish_mid_handshake_and_read(self):
        async def main():
            srv = await self.loop.create_server(lambda: Collect(lambda p, d: p.transport.write(d)),
                                                '127.0.0.1', 0, backlog=64)
            port = srv.sockets[0].getsockname()[1]
            by = await self.bystander(port)
            await self.until(lambda: len(Collect.made) == 1)
            for i in range(20):
                reset_close(socket.create_connection(('127.0.0.1', port)))
            for i in range(20):
                s = socket.create_connection(('127.0.0.1', port))
                s.sendall(b'HALF-A-REQ')
                reset_close(s)
            await asyncio.sleep(0.2)
            await self.until(lambda: all(p.lost for p in Collect.made[1:]))
            for p in Collect.made[1:]:
                self.assertEqual(len(p.lost), 1)
                self.assertIn(type(p.lost[0]), (type(None), ConnectionResetError, BrokenPipeError))
            await self.check_bystander(by)
            late = await self.bystander(port)
            await self.check_bystander(late)
            by[1].close()
            late[1].close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=30)

    def test_tls_peers_vanish_mid_handshake(self):
        # Peers that send half a ClientHello and reset, or a full one and
        # reset before the server's answer is read, or connect and close:
        # the TLS server goes on serving a real client, and every failed
        # handshake ends its connection (no transport is left open).
        server_ctx, client_ctx = tls_contexts()
        hello = ssl.MemoryBIO(), ssl.MemoryBIO()
        obj = client_ctx.wrap_bio(*hello, server_hostname='localhost')
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        client_hello = hello[1].read()
        self.collect_errors()

        async def main():
            opened = []
            fds0 = open_fds()

            async def handle(r, w):
                opened.append(w)
                line = await r.readline()
                w.write(line.upper())
                await w.drain()
                w.close()
            srv = await asyncio.start_server(handle, '127.0.0.1', 0, ssl=server_ctx,
                                             ssl_handshake_timeout=5)
            port = srv.sockets[0].getsockname()[1]
            peers = []
            for i in range(30):
                s = socket.create_connection(('127.0.0.1', port))
                if i % 3 == 0:
                    s.sendall(client_hello[:len(client_hello) // 2])
                elif i % 3 == 1:
                    s.sendall(client_hello)
                peers.append(s)
            await asyncio.sleep(0.1)
            for i, s in enumerate(peers):
                if i % 2:
                    reset_close(s)
                else:
                    s.close()
            r, w = await asyncio.open_connection('127.0.0.1', port, ssl=client_ctx,
                                                 server_hostname='localhost')
            w.write(b'served\n')
            self.assertEqual(await asyncio.wait_for(r.readline(), 10), b'SERVED\n')
            w.close()
            await w.wait_closed()
            self.assertEqual(len(opened), 1)  # no failed handshake reached the handler
            srv.close()
            await srv.wait_closed()
            await self.until(lambda: open_fds() == fds0, 10)
        self.run_coro(main(), timeout=30)

    def test_slowloris_beside_1000_served(self):
        n_slow, n = 8, 1000
        nbytes, interval = (30, 1.0) if LONG else (4, 0.5)

        async def main():
            srv = await self.loop.create_server(lambda: Collect(lambda p, d: p.transport.write(d)),
                                                '127.0.0.1', 0, backlog=1024)
            port = srv.sockets[0].getsockname()[1]
            slow = [socket.create_connection(('127.0.0.1', port)) for _ in range(n_slow)]
            sent = [0]
            served = threading.Event()

            # The slow peers drip at least nbytes bytes, and go on until the
            # others are served (at most 60 s): the clients are served while
            # every slow peer still holds a partial request, however long
            # serving takes on a loaded machine. A server that waited on a
            # slow peer would not serve them at all (run_coro's timeout).
            def drip():
                b = 0
                while b < nbytes or (not served.is_set() and b * interval < 60):
                    time.sleep(interval)
                    for s in slow:
                        s.send(bytes([97 + b % 26]))
                    b += 1
                    sent[0] = b
            th = threading.Thread(target=drip)
            th.start()

            async def client(i):
                r, w = await asyncio.open_connection('127.0.0.1', port)
                msg = bytes([65 + i % 26]) * 64
                w.write(msg)
                got = await r.readexactly(64)
                w.close()
                return got == msg
            try:
                results = await asyncio.gather(*(client(i) for i in range(n)))
            finally:
                served.set()
            self.assertTrue(all(results))
            await self.loop.run_in_executor(None, th.join)
            total = sent[0]
            slow_conns = Collect.made[:n_slow]
            await self.until(lambda: all(len(p.data) == total for p in slow_conns))
            want = bytes(97 + b % 26 for b in range(total))
            for p in slow_conns:
                self.assertEqual(bytes(p.data), want)
            for s in slow:
                s.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=60)

    def test_never_reading_peer(self):
        total = 8 << 20

        async def main():
            srv = await self.loop.create_server(Collect, '127.0.0.1', 0)
            peer = socket.create_connection(srv.sockets[0].getsockname()[:2])
            await self.until(lambda: Collect.made)
            p = Collect.made[0]
            written = 0

            def pump():
                nonlocal written
                while not p.paused and written < total:
                    k = min(16384, total - written)
                    p.transport.write(pattern(written, k))
                    written += k
            pump()
            self.assertTrue(p.paused)
            held = p.transport.get_write_buffer_size()
            self.assertGreater(held, 64 * 1024)
            self.assertLess(held, 4 << 20)
            await asyncio.sleep(0.1)  # the peer reads nothing: nothing drains
            self.assertGreaterEqual(p.transport.get_write_buffer_size(), held)
            self.assertEqual(p.lost, [])
            peer.setblocking(False)
            got = bytearray()
            end = time.monotonic() + 30
            while len(got) < total and time.monotonic() < end:
                try:
                    got += peer.recv(1 << 20)
                except BlockingIOError:
                    await asyncio.sleep(0.001)
                    pump()
                    continue
                await asyncio.sleep(0)
                pump()
            self.assertEqual(len(got), total)
            self.assertEqual(bytes(got), pattern(0, total))
            self.assertGreaterEqual(p.resumes, 1)
            peer.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=60)

    def test_half_close_keep_reading(self):
        total = 4 << 20

        class Answer(Collect):
            def eof_received(self):
                for off in range(0, total, 65536):
                    self.transport.write(pattern(off, 65536))
                self.transport.close()
                return True

        async def main():
            srv = await self.loop.create_server(Answer, '127.0.0.1', 0)
            r, w = await asyncio.open_connection(*srv.sockets[0].getsockname()[:2])
            w.write(b'REQUEST')
            w.write_eof()
            got = await asyncio.wait_for(r.read(), 20)
            self.assertEqual(len(got), total)
            self.assertEqual(got, pattern(0, total))
            await self.until(lambda: Collect.made and Collect.made[0].lost)
            self.assertEqual(bytes(Collect.made[0].data), b'REQUEST')
            self.assertEqual(Collect.made[0].lost, [None])
            w.close()
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=40)

    def test_connect_close_cycles(self):
        cycles = 20000 if LONG else 2000

        async def main():
            srv = await self.loop.create_server(Collect, '127.0.0.1', 0, backlog=512)
            port = srv.sockets[0].getsockname()[1]

            async def batch(k):
                rs = await asyncio.gather(*(self.loop.create_connection(asyncio.Protocol, '127.0.0.1', port)
                                            for _ in range(k)))
                for t, _ in rs:
                    t.close()
            await batch(50)
            await asyncio.sleep(0.1)
            fds0 = open_fds()
            table0 = fd_table()
            for _ in range(cycles // 50):
                await batch(50)
            await self.until(lambda: all(p.lost for p in Collect.made))
            # The client sides close on their own schedule (a loaded machine
            # may take a while): wait for the count to come back, a leak
            # still fails here after 10 s.
            try:
                await self.until(lambda: open_fds() == fds0)
            except AssertionError:
                now = fd_table()
                self.assertEqual(open_fds(), fds0, {fd: now[fd] for fd in set(now) - set(table0)})
            self.assertEqual(len(Collect.made), cycles + 50)
            srv.close()
            await srv.wait_closed()
        self.run_coro(main(), timeout=120)

    def test_spawn_kill_cycles(self):
        cycles = 2000 if LONG else 200

        async def main():
            async def one(i):
                p = await asyncio.create_subprocess_exec(
                    sys.executable if i % 50 == 0 else '/bin/sh', *(['-c', 'pass'] if i % 50 == 0 else
                                                                    ['-c', 'echo up; exec sleep 30']),
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
                if i % 50:
                    await p.stdout.readline()
                    p.kill()
                await p.stdout.read()
                return await p.wait()
            await asyncio.gather(*(one(i) for i in range(1, 5)))
            fds0 = open_fds()
            codes = []
            for start in range(0, cycles, 16):
                codes += await asyncio.gather(*(one(i) for i in range(start, min(cycles, start + 16))))
            self.assertEqual(len(codes), cycles)
            for i, code in enumerate(codes):
                self.assertEqual(code, 0 if i % 50 == 0 else -9, i)
            await asyncio.sleep(0.05)
            self.assertEqual(open_fds(), fds0)
        self.run_coro(main(), timeout=120)

    def test_accept_under_emfile(self):
        # A child with RLIMIT_NOFILE just above what it has open: the server
        # hits EMFILE while accepting, rests, and serves again once fds free.
        flavour = 'libloop' if 'Libloop' in type(self).__name__ else 'asyncio'
        script = textwrap.dedent('''
            import asyncio, os, resource, socket, sys
            import libloop
            errors = []
            async def main():
                loop = asyncio.get_running_loop()
                loop.set_exception_handler(lambda l, c: errors.append(c.get('exception')))
                srv = await loop.create_server(asyncio.Protocol, '127.0.0.1', 0)
                port = srv.sockets[0].getsockname()[1]
                n = len(os.listdir('/proc/self/fd'))
                resource.setrlimit(resource.RLIMIT_NOFILE, (n + 6, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
                hog = []
                clients = []
                while True:  # fill the table with our own fds
                    try:
                        hog.append(os.open('/dev/null', os.O_RDONLY))
                    except OSError:
                        break
                for _ in range(hog and 1):
                    os.close(hog.pop())  # room for one client socket, not for the accepted one
                c = socket.socket()
                c.setblocking(False)
                try:
                    c.connect(('127.0.0.1', port))
                except BlockingIOError:
                    pass
                clients.append(c)
                await asyncio.sleep(0.3)
                for fd in hog:
                    os.close(fd)
                hog.clear()
                # the server rests a second after EMFILE, then accepts the waiting client
                r, w = await asyncio.open_connection('127.0.0.1', port)
                w.close()
                await asyncio.sleep(1.5)
                emfile = [e for e in errors if isinstance(e, OSError) and e.errno == 24]
                print('EMFILE' if emfile else 'NO-EMFILE', srv.is_serving())
                srv.close()
            if sys.argv[1] == 'libloop':
                libloop.run(main())
            else:
                asyncio.run(main())
        ''')
        env = dict(os.environ)
        res = subprocess.run([sys.executable, '-c', script, flavour], capture_output=True, text=True, env=env,
                             timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stdout.split(), ['EMFILE', 'True'], res.stderr)


twin(NetFaultTests, globals())
