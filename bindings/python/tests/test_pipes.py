# SPDX-License-Identifier: MIT
"""connect_read_pipe / connect_write_pipe: pipes, ptys, EOF, broken pipes."""

import asyncio
import gc
import os
import pty
import socket
import tempfile
import tty
import warnings

from .base import LoopCase, twin
from .netbase import wait_until


class Reader(asyncio.Protocol):
    def __init__(self, loop):
        self.data = b''
        self.events = []
        self.lost = loop.create_future()

    def connection_made(self, transport):
        self.events.append('made')

    def data_received(self, data):
        self.data += data

    def eof_received(self):
        self.events.append('eof')

    def connection_lost(self, exc):
        self.events.append('lost')
        self.lost.set_result(exc)


class Writer(asyncio.BaseProtocol):
    def __init__(self, loop):
        self.lost = loop.create_future()

    def connection_lost(self, exc):
        self.lost.set_result(exc)


class PipeTests(LoopCase):

    def test_read_and_write_pipe_until_eof(self):
        async def main():
            r, w = os.pipe()
            rfile, wfile = open(r, 'rb', 0), open(w, 'wb', 0)
            rt, rp = await self.loop.connect_read_pipe(lambda: Reader(self.loop), rfile)
            wt, wp = await self.loop.connect_write_pipe(lambda: Writer(self.loop), wfile)
            self.assertIs(rt.get_extra_info('pipe'), rfile)
            self.assertIs(wt.get_extra_info('pipe'), wfile)
            self.assertTrue(wt.can_write_eof())
            payload = os.urandom(300_000)    # more than a pipe holds
            wt.write(payload)
            wt.close()
            self.assertIsNone(await rp.lost)
            self.assertIsNone(await wp.lost)
            self.assertEqual(rp.data, payload)
            self.assertEqual(rp.events, ['made', 'eof', 'lost'])
            self.assertTrue(rfile.closed and wfile.closed)   # closed after connection_lost
        self.run_coro(main())

    def test_pause_and_resume_reading(self):
        async def main():
            r, w = os.pipe()
            rt, rp = await self.loop.connect_read_pipe(lambda: Reader(self.loop), open(r, 'rb', 0))
            rt.pause_reading()   # (is_reading() is missing on older 3.11 pipes)
            os.write(w, b'held')
            await asyncio.sleep(0.05)
            self.assertEqual(rp.data, b'')
            rt.resume_reading()
            os.close(w)
            await rp.lost
            self.assertEqual(rp.data, b'held')
        self.run_coro(main())

    def test_write_pipe_reader_gone_is_broken_pipe(self):
        async def main():
            r, w = os.pipe()
            wt, wp = await self.loop.connect_write_pipe(lambda: Writer(self.loop), open(w, 'wb', 0))
            os.close(r)
            wt.write(b'x' * 100_000)
            exc = await wp.lost
            self.assertIsInstance(exc, BrokenPipeError)
            self.assertTrue(wt.is_closing())
            wt.write(b'more')   # ignored after the loss, as asyncio
        self.run_coro(main())

    def test_write_pipe_reader_closes_while_idle(self):
        async def main():
            r, w = os.pipe()
            wt, wp = await self.loop.connect_write_pipe(lambda: Writer(self.loop), open(w, 'wb', 0))
            os.close(r)
            self.assertIsNone(await wp.lost)   # nothing was buffered: a clean close
        self.run_coro(main())

    def test_pty_read(self):
        async def main():
            master, slave = pty.openpty()
            rt, rp = await self.loop.connect_read_pipe(lambda: Reader(self.loop), open(master, 'rb', 0))
            os.write(slave, b'from the tty\n')
            await asyncio.sleep(0.05)
            os.close(slave)
            exc = await rp.lost
            self.assertIn(b'from the tty', rp.data)
            self.assertIsInstance(exc, OSError)   # EIO: Linux's end of a pty
        self.run_coro(main())

    def test_regular_file_is_refused(self):
        async def main():
            with tempfile.TemporaryFile() as f:
                with self.assertRaisesRegex(ValueError, 'Pipe transport is for pipes/sockets only.'):
                    await self.loop.connect_read_pipe(asyncio.Protocol, f)
                with self.assertRaisesRegex(ValueError, 'pipes, sockets and character devices'):
                    await self.loop.connect_write_pipe(asyncio.Protocol, f)
        self.run_coro(main())

    def test_stream_reader_over_pipe(self):
        async def main():
            r, w = os.pipe()
            reader = asyncio.StreamReader()
            await self.loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), open(r, 'rb', 0))
            os.write(w, b'line one\nline two\n')
            os.close(w)
            self.assertEqual(await reader.readline(), b'line one\n')
            self.assertEqual(await reader.read(), b'line two\n')
            self.assertTrue(reader.at_eof())
        self.run_coro(main())


    def test_data_received_error_keeps_the_pipe_open(self):
        # asyncio's read pipe does not catch data_received's exception: it
        # reaches the exception handler as a callback error and the pipe
        # keeps reading.
        self.collect_errors()

        class Failing(Reader):
            def data_received(self, data):
                super().data_received(data)
                if data == b'bad':
                    raise ValueError('bad data')
                self.events.append('good')

        async def main():
            r, w = os.pipe()
            rt, rp = await self.loop.connect_read_pipe(lambda: Failing(self.loop), open(r, 'rb', 0))
            os.write(w, b'bad')
            for _ in range(200):
                if self.errors:
                    break
                await asyncio.sleep(0.005)
            os.write(w, b'good')
            for _ in range(200):
                if 'good' in rp.events:
                    break
                await asyncio.sleep(0.005)
            self.assertFalse(rt.is_closing())
            os.close(w)
            await rp.lost
            return rp
        rp = self.run_coro(main())
        self.assertEqual(len(self.errors), 1)
        self.assertIsInstance(self.errors[0]['exception'], ValueError)
        self.assertTrue(self.errors[0]['message'].startswith('Exception in callback '))
        self.assertEqual(rp.data, b'badgood')
        self.assertEqual(rp.events, ['made', 'good', 'eof', 'lost'])

    def test_write_pipe_over_a_socket_ends_when_the_peer_closes(self):
        # connect_write_pipe takes a socket too; its reader going away (the
        # other end of the socketpair closed) ends it, as a FIFO's does.
        async def main():
            rsock, wsock = socket.socketpair()
            rsock.setblocking(False)
            wt, wp = await self.loop.connect_write_pipe(
                lambda: Writer(self.loop), open(wsock.detach(), 'wb', 0))
            wt.write(b'1')
            self.assertEqual(await self.loop.sock_recv(rsock, 16), b'1')
            rsock.close()
            self.assertIsNone(await asyncio.wait_for(wp.lost, 5))
            self.assertTrue(wt.is_closing())
        self.run_coro(main())

    def test_pty_written_and_read_through_two_transports(self):
        # A tty's slave open twice: one read pipe, one write pipe. Input
        # arriving on the slave is for the reader; it does not end the
        # write transport (a FIFO's write end reading ready would mean its
        # reader went away; a tty's does not).
        async def read_master(master, n):
            got = b''
            for _ in range(500):
                try:
                    got += os.read(master, 1024)
                except BlockingIOError:
                    pass
                if len(got) >= n:
                    return got
                await asyncio.sleep(0.01)
            return got

        async def main():
            master, slave = pty.openpty()
            tty.setraw(slave)
            os.set_blocking(master, False)
            write_slave = os.dup(slave)
            rt, rp = await self.loop.connect_read_pipe(
                lambda: Reader(self.loop), open(slave, 'rb', 0))
            wt, wp = await self.loop.connect_write_pipe(
                lambda: Writer(self.loop), open(write_slave, 'wb', 0))
            wt.write(b'1')
            self.assertEqual(await read_master(master, 1), b'1')
            os.write(master, b'abc')
            for _ in range(500):
                if len(rp.data) >= 3:
                    break
                await asyncio.sleep(0.01)
            self.assertEqual(rp.data, b'abc')
            await asyncio.sleep(0.05)
            self.assertFalse(wp.lost.done())
            self.assertFalse(wt.is_closing())
            wt.write(b'2345')
            self.assertEqual(await read_master(master, 4), b'2345')
            os.close(master)
            rt.close()
            await rp.lost
            wt.close()
            self.assertIsNone(await wp.lost)
        self.run_coro(main())

    def test_connect_read_pipe_returns_before_the_first_data(self):
        # Bytes already in the pipe wait until the coroutine that awaited
        # connect_read_pipe has the transport (asyncio's transport starts
        # reading after its waiter's callbacks ran).
        r, w = os.pipe()
        os.write(w, b'early')
        returned = []
        seen = []

        class Proto(asyncio.Protocol):
            def data_received(self, data):
                seen.append((data, bool(returned)))

        async def main():
            t, _ = await self.loop.connect_read_pipe(Proto, open(r, 'rb', 0))
            returned.append(t)
            await wait_until(lambda: seen)
            t.close()
        self.run_coro(main())
        os.close(w)
        self.assertEqual(seen, [(b'early', True)])

    def test_loop_close_leaves_unclosed_pipe_transports_open(self):
        # Closing the loop does not close the transports nobody closed:
        # their repr still says open, as asyncio's does, and the pipe
        # objects the caller passed stay open.
        r, w = os.pipe()
        rfile, wfile = open(r, 'rb', 0), open(w, 'wb', 0)
        rt, _ = self.loop.run_until_complete(
            self.loop.connect_read_pipe(lambda: Reader(self.loop), rfile))
        wt, _ = self.loop.run_until_complete(
            self.loop.connect_write_pipe(lambda: Writer(self.loop), wfile))
        self.loop.close()
        for text in (repr(rt), repr(wt)):
            self.assertIn('open', text)
            self.assertNotIn('clos', text)
        self.assertFalse(rfile.closed or wfile.closed)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ResourceWarning)  # unclosed, on purpose
            del rt, wt
            gc.collect()
        rfile.close()
        wfile.close()


twin(PipeTests, globals())
