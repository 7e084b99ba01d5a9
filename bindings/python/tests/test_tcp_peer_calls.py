# SPDX-License-Identifier: MIT
"""Calls on one transport from another transport's callback, in the
iteration that found both readable: asyncio's pause_reading, close and
abort remove the reader, which cancels the read callback already queued,
so the second transport hears nothing more (and, after pause_reading, gets
its bytes once resumed). Twin tests: both loops behave alike."""

import asyncio

from .base import LoopCase, twin
from .netbase import ClosesOpened, Recorder, listening_socket

ROUNDS = 10


class Acting(Recorder):
    """A Recorder whose first data_received of a round acts on its pair's
    other transport (script.act), once per round; what the acted-upon
    transport receives afterwards is counted in script.late."""

    def __init__(self, loop, script):
        super().__init__(loop)
        self.script = script

    def data_received(self, data):
        s = self.script
        if self is s.target:
            s.late.append(bytes(data))
        super().data_received(data)
        if s.armed and self is not s.target:
            s.armed = False
            other = s.pair[1] if self is s.pair[0] else s.pair[0]
            s.target = other
            s.act(other.transport)

    def eof_received(self):
        if self is self.script.target:
            self.script.late.append('eof')
        return super().eof_received()


class Script:
    def __init__(self, act):
        self.act = act
        self.armed = False
        self.pair = []
        self.target = None
        self.late = []


class PeerCallTests(ClosesOpened, LoopCase):

    def two_clients(self, script):
        """Two client transports (protocols in script.pair) and their
        blocking peer sockets, in the same order."""
        listener = listening_socket()
        self.addCleanup(listener.close)
        peers = []

        async def main():
            for _ in range(2):
                fut = self.loop.create_task(self.loop.create_connection(
                    lambda: Acting(self.loop, script), *listener.getsockname()))
                conn, _ = await self.loop.sock_accept(listener)
                t, p = await fut
                self.opened.append(t)
                script.pair.append(p)
                conn.setblocking(True)
                conn.settimeout(10)
                self.addCleanup(conn.close)
                peers.append(conn)
        self.run_coro(main())
        return peers

    def send_both_then_run(self, script, peers, a, b):
        """Both peers send while the loop is idle, so one iteration finds
        both transports readable; run until the first one acted."""
        script.armed = True
        script.target = None
        script.late = []
        peers[0].sendall(a)
        peers[1].sendall(b)

        async def acted():
            while script.target is None:
                await asyncio.sleep(0)
            for _ in range(5):
                await asyncio.sleep(0)
            await asyncio.sleep(0.02)
        self.run_coro(acted())

    def test_pause_reading_from_other(self):
        script = Script(lambda t: t.pause_reading())
        peers = self.two_clients(script)
        want = [bytearray(), bytearray()]
        for r in range(ROUNDS):
            a, b = b'a%d.' % r, b'b%d.' % r
            self.send_both_then_run(script, peers, a, b)
            self.assertEqual(script.late, [])
            tg = script.target
            i = script.pair.index(tg)
            self.assertFalse(tg.transport.is_reading())
            # Newer bytes while paused: they come after the withheld ones.
            more = b'm%d.' % r
            peers[i].sendall(more)
            self.run_coro(asyncio.sleep(0.02))
            self.assertEqual(script.late, [])
            script.target = None
            tg.transport.resume_reading()
            want[i] += (a if i == 0 else b) + more
            want[1 - i] += b if i == 0 else a
            self.run_coro(tg.wait_for_bytes(len(want[i])))
            self.assertEqual(bytes(tg.data), bytes(want[i]))
            self.assertEqual(bytes(script.pair[1 - i].data), bytes(want[1 - i]))

    def close_from_other(self, act):
        for _ in range(ROUNDS):
            script = Script(act)
            peers = self.two_clients(script)
            self.send_both_then_run(script, peers, b'first', b'second')
            tg = script.target
            self.run_coro(tg.lost)
            self.assertEqual(script.late, [])
            self.assertEqual(tg.calls, ['made', 'lost'])
            self.assertIsNone(tg.exc)
            other = script.pair[1 - script.pair.index(tg)]
            self.assertEqual(other.calls, ['made', 'data'])
            other.transport.close()
            self.run_coro(other.lost)

    def test_close_from_other(self):
        self.close_from_other(lambda t: t.close())

    def test_abort_from_other(self):
        self.close_from_other(lambda t: t.abort())


twin(PeerCallTests, globals())
