# SPDX-License-Identifier: MIT
"""loop.stats() and loop.event_loop_utilization() (libloop only: asyncio
and uvloop have no metrics)."""

import asyncio
import os
import threading
import time
import unittest

import libloop


class StatsTests(unittest.TestCase):

    def setUp(self):
        self.loop = libloop.new_event_loop()

    def tearDown(self):
        self.loop.close()

    def test_call_soon_callbacks_counted(self):
        before = self.loop.stats()
        for _ in range(50):
            self.loop.call_soon(lambda: None)
        h = self.loop.call_soon(lambda: None)
        h.cancel()
        self.assertEqual(self.loop.stats().ready - before.ready, 51)
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        after = self.loop.stats()
        self.assertEqual(after.callbacks - before.callbacks, 51)  # 50 + stop
        self.assertEqual(after.ready, 0)

    def test_chain_counts_iterations(self):
        # A chain of call_soon runs one iteration per link, even where
        # the Python loop runs several inside one host-queue call.
        left = [200]

        def link():
            left[0] -= 1
            if left[0]:
                self.loop.call_soon(link)
            else:
                self.loop.stop()
        before = self.loop.stats()
        self.loop.call_soon(link)
        self.loop.run_forever()
        after = self.loop.stats()
        self.assertEqual(after.callbacks - before.callbacks, 200)
        self.assertGreaterEqual(after.iterations - before.iterations, 200)
        self.assertLessEqual(after.iterations - before.iterations, 202)

    def test_timers_fds_tasks(self):
        hs = [self.loop.call_later(10, lambda: None) for _ in range(4)]
        hs[1].cancel()
        r, w = os.pipe()
        try:
            base_fds = self.loop.stats().fds
            self.loop.add_reader(r, lambda: None)
            self.loop.add_writer(w, lambda: None)
            st = self.loop.stats()
            self.assertEqual(st.timers, 3)
            self.assertEqual(st.fds - base_fds, 2)
            self.loop.remove_writer(w)
            self.assertEqual(self.loop.stats().fds - base_fds, 1)
            self.loop.remove_reader(r)
        finally:
            os.close(r)
            os.close(w)

        async def main():
            t = [asyncio.ensure_future(asyncio.sleep(0.01)) for _ in range(3)]
            await asyncio.sleep(0)
            seen = self.loop.stats()
            await asyncio.gather(*t)
            return seen
        seen = self.loop.run_until_complete(main())
        self.assertEqual(seen.tasks, 4)     # main and the three sleepers
        self.assertGreaterEqual(seen.timers, 6)  # the three sleeps + ours
        self.assertEqual(self.loop.stats().tasks, 0)

    def test_idle_while_blocked_not_while_busy(self):
        before = self.loop.stats()
        self.loop.run_until_complete(asyncio.sleep(0.05))
        mid = self.loop.stats()
        self.assertGreaterEqual(mid.idle_ns - before.idle_ns, 45_000_000)
        self.assertLess(mid.busy_ns - before.busy_ns, 30_000_000)

        def spin():
            end = time.monotonic() + 0.05
            while time.monotonic() < end:
                pass
        self.loop.call_soon(spin)
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        after = self.loop.stats()
        self.assertLess(after.idle_ns - mid.idle_ns, 5_000_000)
        self.assertGreaterEqual(after.busy_ns - mid.busy_ns, 50_000_000)

    def test_event_loop_utilization(self):
        first = self.loop.event_loop_utilization()
        self.loop.run_until_complete(asyncio.sleep(0.05))
        idle = self.loop.event_loop_utilization(first)
        self.assertGreaterEqual(idle.idle, 0.045)
        self.assertLess(idle.utilization, 0.5)

        def spin():
            end = time.monotonic() + 0.05
            while time.monotonic() < end:
                pass
        mark = self.loop.event_loop_utilization()
        self.loop.call_soon(spin)
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        busy = self.loop.event_loop_utilization(mark)
        self.assertGreater(busy.utilization, 0.8)
        # The two-argument form is the delta between two snapshots.
        later = self.loop.event_loop_utilization()
        d = self.loop.event_loop_utilization(later, mark)
        self.assertAlmostEqual(d.active, busy.active, delta=0.01)

    def test_wrong_thread_refused(self):
        got = []

        def probe():
            try:
                self.loop.stats()
            except libloop.LibloopError as exc:
                got.append(exc)
            self.loop.call_soon_threadsafe(self.loop.stop)

        self.loop.call_soon(lambda: threading.Thread(target=probe).start())
        self.loop.run_forever()
        self.assertEqual(len(got), 1)
        self.assertIn("LL_EWRONGTHREAD", str(got[0]))

    def test_closed_loop_refused(self):
        self.loop.close()
        with self.assertRaises(RuntimeError):
            self.loop.stats()
        with self.assertRaises(RuntimeError):
            self.loop.event_loop_utilization()


if __name__ == "__main__":
    unittest.main()
