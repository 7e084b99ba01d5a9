# SPDX-License-Identifier: MIT
"""I/O between callbacks: asyncio polls once per iteration, so data that
arrives while a chain of call_soon callbacks runs is delivered in the next
iteration, behind the one callback queued before the poll. libloop's
binding runs several iterations per crossing when nothing else can happen
(scheduling.py, _run_ready); an open transport or listener must stop that,
as a registered reader does."""

import asyncio
import socket

from .base import LoopCase, twin
from .netbase import Recorder, connected_pair


class IterationIOTests(LoopCase):

    def chain_until_data(self, p, send):
        """Steps 0, 1, ... one per iteration; send() in step 5. Returns how
        many steps had run when data_received was called."""
        steps, seen_at = [], []
        done = self.loop.create_future()
        received = p.data_received

        def data_received(data):
            seen_at.append(len(steps))
            received(data)
        p.data_received = data_received

        def step():
            k = len(steps)
            steps.append(k)
            if k == 5:
                send()
            if seen_at or k == 500:
                done.set_result(None)
            else:
                self.loop.call_soon(step)
        self.loop.call_soon(step)
        self.loop.run_until_complete(done)
        return seen_at

    def test_stream_data_in_the_next_iteration(self):
        t, p, peer = connected_pair(self)
        # Step 5's send is in the kernel before step 5 returns; iteration 6
        # polls it and runs its read after step 6: 7 steps have run.
        self.assertEqual(self.chain_until_data(p, lambda: peer.send(b'x')), [7])
        t.close()
        self.run_coro(asyncio.sleep(0))

    def test_transport_made_in_the_same_run(self):
        # The transport is made and the chain runs in one run_until_complete:
        # nothing at the run's start tells the binding that it is open.
        listener = socket.socket()
        self.addCleanup(listener.close)
        listener.bind(('127.0.0.1', 0))
        listener.listen(1)
        steps, seen_at = [], []

        class Proto(asyncio.Protocol):
            def data_received(self, data):
                seen_at.append(len(steps))

        async def main():
            t, _ = await self.loop.create_connection(Proto, *listener.getsockname())
            peer, _ = listener.accept()
            done = self.loop.create_future()

            def step():
                k = len(steps)
                steps.append(k)
                if k == 5:
                    peer.send(b'x')
                if seen_at or k == 500:
                    done.set_result(None)
                else:
                    self.loop.call_soon(step)
            self.loop.call_soon(step)
            await done
            t.close()
            peer.close()
            await asyncio.sleep(0)
        self.run_coro(main())
        self.assertEqual(seen_at, [7])

    def test_accept_in_the_next_iteration(self):
        steps, accepted = [], []

        protocols = []

        def factory():
            accepted.append(len(steps))
            protocols.append(Recorder(self.loop))
            return protocols[-1]
        server = self.run_coro(self.loop.create_server(factory, '127.0.0.1', 0))
        port = server.sockets[0].getsockname()[1]
        done = self.loop.create_future()
        client = socket.socket()
        self.addCleanup(client.close)
        client.setblocking(False)

        def step():
            k = len(steps)
            steps.append(k)
            if k == 5:
                try:
                    client.connect(('127.0.0.1', port))
                except BlockingIOError:
                    pass
            if accepted or k == 500:
                done.set_result(None)
            else:
                self.loop.call_soon(step)
        self.loop.call_soon(step)
        self.loop.run_until_complete(done)
        server.close()
        for p in protocols:   # 3.12's wait_closed waits for the connections too
            p.transport.close()
        self.run_coro(server.wait_closed())
        # The loopback handshake is done when connect returns; the listener
        # is polled in the next iteration and the connection made within a
        # few more (asyncio: accept, then connection_made via call_soon),
        # never after rounds of callbacks with no poll.
        self.assertEqual(len(accepted), 1)
        self.assertLess(accepted[0], 12)


twin(IterationIOTests, globals())


class IterationReaderTests(LoopCase):
    """A reader or writer added or removed inside a call_soon chain: while
    one is registered every iteration polls (its callback runs in the next
    iteration, as on asyncio); once removed the chain runs on."""

    def test_reader_added_mid_chain_fires_next_iteration(self):
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        b.send(b'x')            # readable from the start
        steps, fired = [], []
        done = self.loop.create_future()

        def on_readable():
            fired.append(len(steps))
            self.loop.remove_reader(a)

        def step():
            k = len(steps)
            steps.append(k)
            if k == 5:
                self.loop.add_reader(a, on_readable)
            if (fired and k >= fired[0] + 5) or k == 500:
                done.set_result(None)
            else:
                self.loop.call_soon(step)
        self.loop.call_soon(step)
        self.loop.run_until_complete(done)
        # Added in step 5, polled in iteration 6, run after step 6.
        self.assertEqual(fired, [7])
        self.assertEqual(len(steps), 13)  # the chain went on after the removal

    def test_writer_added_mid_chain_fires_next_iteration(self):
        a, b = socket.socketpair()
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        steps, fired = [], []
        done = self.loop.create_future()

        def on_writable():
            fired.append(len(steps))
            self.loop.remove_writer(a)

        def step():
            k = len(steps)
            steps.append(k)
            if k == 3:
                self.loop.add_writer(a, on_writable)
            if fired or k == 500:
                done.set_result(None)
            else:
                self.loop.call_soon(step)
        self.loop.call_soon(step)
        self.loop.run_until_complete(done)
        self.assertEqual(fired, [5])


twin(IterationReaderTests, globals())
