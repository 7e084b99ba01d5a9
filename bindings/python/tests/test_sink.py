# SPDX-License-Identifier: MIT
"""data_received as the C sink delivers it (libloop-cpython.so, cpython/sink.c): the
twin tests hold asyncio's behaviour on both loops — a KeyboardInterrupt
out of data_received, a protocol that swaps its own data_received, a
switch to a BufferedProtocol, each transport's context in one batch — and
the libloop-only ones what the binding relies on: which transports the C
sink takes, and that their data costs no ctypes callback."""

import asyncio
import contextvars
import os
import subprocess
import sys
import unittest

from libloop import _hotpath

from .base import LibloopLoop, LoopCase, twin
from .netbase import Recorder, connected_pair, listening_socket, recv_exactly

VAR = contextvars.ContextVar('VAR', default='unset')


class CSinkTests(LoopCase):

    def test_keyboard_interrupt_leaves_data_received_and_the_loop_runs_on(self):
        t, p, peer = connected_pair(self)
        raised = []

        def data_received(data):
            if not raised:
                raised.append(data)
                raise KeyboardInterrupt
            p.data += data
            p.got_data.set()
        p.data_received = data_received
        peer.sendall(b'first')
        with self.assertRaises(KeyboardInterrupt):
            self.loop.run_forever()
        self.assertEqual(raised, [b'first'])
        self.assertFalse(t.is_closing())
        peer.sendall(b'second')
        self.run_coro(p.wait_for_bytes(6))
        self.assertEqual(bytes(p.data), b'second')
        t.write(b'still open')
        self.assertEqual(recv_exactly(self, peer, 10), b'still open')
        t.close()
        self.run_coro(p.lost)

    def test_a_protocol_that_swaps_its_own_data_received(self):
        # The method is looked up for each event, as asyncio's transports
        # call self._protocol.data_received(data).
        t, p, peer = connected_pair(self)
        seen = []

        class Swapping(Recorder):
            def data_received(self, data):
                seen.append(('header', data))
                self.data_received = self.body

            def body(self, data):
                seen.append(('body', data))
        q = Swapping(self.loop)
        q.transport = t
        t.set_protocol(q)
        for chunk in (b'H', b'B1', b'B2'):
            peer.sendall(chunk)
            self.run_coro(self._until(lambda: len(seen) == 1 + [b'H', b'B1', b'B2'].index(chunk)))
        self.assertEqual(seen, [('header', b'H'), ('body', b'B1'), ('body', b'B2')])
        t.close()

    async def _until(self, cond):
        while not cond():
            await asyncio.sleep(0.001)

    def test_set_protocol_to_a_buffered_protocol_mid_stream(self):
        t, p, peer = connected_pair(self)
        peer.sendall(b'plain')
        self.run_coro(p.wait_for_bytes(5))
        got = bytearray()

        class Buffered(asyncio.BufferedProtocol):
            buf = bytearray(3)

            def get_buffer(self, sizehint):
                return self.buf

            def buffer_updated(self, nbytes):
                got.extend(self.buf[:nbytes])
        t.set_protocol(Buffered())
        peer.sendall(b'buffered')
        self.run_coro(self._until(lambda: len(got) == 8))
        self.assertEqual(bytes(got), b'buffered')
        t.set_protocol(p)
        peer.sendall(b'again')
        self.run_coro(p.wait_for_bytes(10))
        self.assertEqual(bytes(p.data), b'plainagain')
        t.close()

    def test_each_transport_in_its_own_context_within_one_batch(self):
        listener = listening_socket()
        self.addCleanup(listener.close)
        seen = []

        class Ctx(Recorder):
            def data_received(self, data):
                seen.append((VAR.get(), bytes(data)))
                super().data_received(data)

        async def connect(name):
            VAR.set(name)  # (a task: its own context, copied by the transport)
            fut = self.loop.create_task(self.loop.create_connection(
                lambda: Ctx(self.loop), *listener.getsockname()))
            conn, _ = await self.loop.sock_accept(listener)
            t, p = await fut
            return t, p, conn

        async def main():
            pairs = [await self.loop.create_task(connect(f'ctx{i}')) for i in range(4)]
            for i, (_, _, conn) in enumerate(pairs):
                conn.sendall(b'%d' % i)  # all sent before the loop polls
            for _, p, _ in pairs:
                await p.wait_for_bytes(1)
            for t, _, conn in pairs:
                t.close()
                conn.close()
            return VAR.get()
        self.assertEqual(self.run_coro(main()), 'unset')
        self.assertEqual(sorted(seen), [(f'ctx{i}', b'%d' % i) for i in range(4)])


twin(CSinkTests, globals())


@unittest.skipUnless(_hotpath.ENABLED, 'the C side is off (LIBLOOP_PY_HOTPATH=0)')
class TestCSinkListLibloop(LoopCase, LibloopLoop, unittest.TestCase):
    """libloop only: the C sink's list and what it saves."""

    def test_the_list_follows_the_protocol_and_the_transport(self):
        self.assertIsNotNone(self.loop._c_sink)
        t, p, peer = connected_pair(self)
        self.assertEqual(self.loop._fast[t._tid], (t._context, p, t))
        buffered = asyncio.BufferedProtocol()
        t.set_protocol(buffered)
        self.assertNotIn(t._tid, self.loop._fast)
        q = Recorder(self.loop)
        t.set_protocol(q)
        self.assertEqual(self.loop._fast[t._tid], (t._context, q, t))
        t.close()
        peer.close()
        self.run_coro(q.lost)
        self.assertNotIn(t._tid, self.loop._fast)

    def test_data_of_listed_transports_costs_no_ctypes_callback(self):
        t, p, peer = connected_pair(self)
        calls = []
        code = type(self.loop)._on_events.__code__

        def profile(frame, event, arg):
            if event == 'call' and frame.f_code is code:
                calls.append(frame)
        sys.setprofile(profile)
        try:
            for i in range(20):
                peer.sendall(b'x')
                self.run_coro(p.wait_for_bytes(i + 1))
        finally:
            sys.setprofile(None)
        self.assertEqual(bytes(p.data), b'x' * 20)
        self.assertEqual(calls, [])
        t.close()
        self.run_coro(p.lost)

    def test_the_loop_frees_its_sink_when_closed(self):
        loop = self.loop
        self.assertIsNotNone(loop._c_sink)
        loop.close()
        self.assertIsNone(loop._c_sink)



class TestFallbackLibloop(unittest.TestCase):
    """LIBLOOP_PY_HOTPATH=0 (and where the C side cannot be bound)."""

    def test_without_the_c_side_the_ctypes_sink_takes_everything(self):
        # LIBLOOP_PY_HOTPATH=0: no C sink; an echo still works.
        script = (
            "import asyncio, libloop\n"
            "from libloop import _hotpath\n"
            "assert not _hotpath.ENABLED\n"
            "class Echo(asyncio.Protocol):\n"
            "    def connection_made(self, t): self.t = t\n"
            "    def data_received(self, d): self.t.write(d)\n"
            "async def main():\n"
            "    loop = asyncio.get_running_loop()\n"
            "    assert loop._c_sink is None\n"
            "    srv = await loop.create_server(Echo, '127.0.0.1', 0)\n"
            "    r, w = await asyncio.open_connection(*srv.sockets[0].getsockname())\n"
            "    w.write(b'ping')\n"
            "    print((await r.readexactly(4)).decode())\n"
            "    w.close(); srv.close()\n"
            "libloop.run(main())\n")
        env = dict(os.environ, LIBLOOP_PY_HOTPATH='0')
        out = subprocess.run([sys.executable, '-c', script], env=env, capture_output=True,
                             text=True, timeout=60)
        self.assertEqual((out.returncode, out.stdout, out.stderr), (0, 'ping\n', ''))


if __name__ == '__main__':
    unittest.main()
