# SPDX-License-Identifier: MIT
"""fd readers/writers, sock_* coroutines, executor, name resolution."""

import asyncio
import concurrent.futures
import socket
import unittest

from .base import LoopCase, twin


class IOTests(LoopCase):

    def test_add_reader_socketpair(self):
        r, w = socket.socketpair()
        r.setblocking(False)
        got = []

        def on_read():
            data = r.recv(100)
            got.append(data)
            if data == b'hello':
                # Sent only now: had it been scheduled up front, a stall of
                # 20 ms would let both land in one read.
                self.loop.call_later(0.02, w.send, b'stop')
            if data == b'stop':
                self.assertTrue(self.loop.remove_reader(r))
                self.loop.stop()
        try:
            self.loop.add_reader(r.fileno(), on_read)
            self.loop.call_soon(w.send, b'hello')
            self.loop.run_forever()
            self.assertEqual(got, [b'hello', b'stop'])
            self.assertFalse(self.loop.remove_reader(r.fileno()))
        finally:
            r.close()
            w.close()

    def test_add_writer_and_replace(self):
        r, w = socket.socketpair()
        out = []
        try:
            self.loop.add_writer(w, out.append, 'first')
            self.loop.add_writer(w, lambda: (out.append('second'),
                                             self.loop.remove_writer(w),
                                             self.loop.stop()))
            self.loop.run_forever()
            self.assertEqual(out, ['second'])
            self.assertFalse(self.loop.remove_writer(w))
        finally:
            r.close()
            w.close()

    def test_add_reader_bad_fd(self):
        with self.assertRaises(ValueError):
            self.loop.add_reader(-1, print)
        with self.assertRaises(ValueError):
            self.loop.add_reader(object(), print)

    def test_sock_tcp(self):
        listener = socket.socket()
        listener.bind(('127.0.0.1', 0))
        listener.listen()
        listener.setblocking(False)
        addr = listener.getsockname()

        async def server():
            conn, _ = await self.loop.sock_accept(listener)
            with conn:
                self.assertFalse(conn.getblocking())
                data = b''
                while len(data) < 1_000_000:
                    chunk = await self.loop.sock_recv(conn, 65536)
                    if not chunk:
                        break
                    data += chunk
                await self.loop.sock_sendall(conn, b'ack:%d' % len(data))
                return len(data)

        async def client():
            s = socket.socket()
            s.setblocking(False)
            with s:
                await self.loop.sock_connect(s, addr)
                await self.loop.sock_sendall(s, b'x' * 1_000_000)
                buf = bytearray(100)
                n = await self.loop.sock_recv_into(s, buf)
                return bytes(buf[:n])

        async def main():
            return await asyncio.gather(server(), client())
        try:
            self.assertEqual(self.run_coro(main()), [1_000_000, b'ack:1000000'])
        finally:
            listener.close()

    def test_sock_connect_refused(self):
        s0 = socket.socket()
        s0.bind(('127.0.0.1', 0))
        addr = s0.getsockname()
        s0.close()

        async def main():
            s = socket.socket()
            s.setblocking(False)
            with s:
                await self.loop.sock_connect(s, addr)
        with self.assertRaises(ConnectionRefusedError):
            self.run_coro(main())

    def test_sock_recv_cancel(self):
        r, w = socket.socketpair()
        r.setblocking(False)

        async def main():
            t = self.loop.create_task(self.loop.sock_recv(r, 10))
            await asyncio.sleep(0.01)
            t.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await t
            w.send(b'after')
            return await self.loop.sock_recv(r, 10)
        try:
            self.assertEqual(self.run_coro(main()), b'after')
        finally:
            r.close()
            w.close()

    def test_run_in_executor(self):
        async def main():
            a = await self.loop.run_in_executor(None, pow, 2, 10)
            with concurrent.futures.ThreadPoolExecutor(2) as ex:
                b = await self.loop.run_in_executor(ex, sum, [1, 2, 3])
            try:
                await self.loop.run_in_executor(None, int, 'x')
            except ValueError:
                c = 'ValueError'
            return a, b, c
        self.assertEqual(self.run_coro(main()), (1024, 6, 'ValueError'))

    def test_set_default_executor_and_shutdown(self):
        ex = concurrent.futures.ThreadPoolExecutor(1)
        self.loop.set_default_executor(ex)
        with self.assertRaises(TypeError):
            self.loop.set_default_executor(object())
        self.assertEqual(self.loop.run_until_complete(
            self.loop.run_in_executor(None, len, 'abc')), 3)
        self.loop.run_until_complete(self.loop.shutdown_default_executor())
        with self.assertRaisesRegex(RuntimeError, 'Executor shutdown'):
            self.loop.run_in_executor(None, len, 'x')

    def test_getaddrinfo_getnameinfo(self):
        async def main():
            infos = await self.loop.getaddrinfo('127.0.0.1', 80,
                                                type=socket.SOCK_STREAM)
            name = await self.loop.getnameinfo(('127.0.0.1', 80),
                                               socket.NI_NUMERICHOST |
                                               socket.NI_NUMERICSERV)
            return infos[0][4], name
        self.assertEqual(self.run_coro(main()),
                         (('127.0.0.1', 80), ('127.0.0.1', '80')))


twin(IOTests, globals(), task_machine=True)

if __name__ == '__main__':
    unittest.main()
