# SPDX-License-Identifier: MIT
"""Timers scheduled in and out of deadline order, cancelled in bulk; handle
arguments; call_soon_threadsafe's queue and wake-ups (libloop keeps in-order
timers in a deque and the others in a heap, and posts thread-safe handles
straight to its ready queue: see libloop/timers.py, scheduling.py)."""

import asyncio
import random
import threading
import tracemalloc
import unittest

import libloop
from libloop import _lib

from .base import LoopCase, twin


class TimerStoreTests(LoopCase):

    def run_timers(self, deadlines, cancel=()):
        # Schedule one timer per offset (ms from now, in the given order),
        # cancel the given indexes, run until all are due; the fired indexes.
        out = []
        now = self.loop.time()
        hs = [self.loop.call_at(now + d / 1000, out.append, i)
              for i, d in enumerate(deadlines)]
        for i in cancel:
            hs[i].cancel()
        self.loop.call_at(now + (max(deadlines) + 5) / 1000, self.loop.stop)
        self.loop.run_forever()
        return out

    def test_mixed_order_fires_in_deadline_order(self):
        rnd = random.Random(7)
        deadlines = ([d / 7 for d in range(40)]               # ascending
                     + [20 - d / 3 for d in range(40)]         # descending
                     + [rnd.uniform(0, 25) for _ in range(200)])
        out = self.run_timers(deadlines)
        self.assertEqual(sorted(out), list(range(len(deadlines))))
        fired = [deadlines[i] for i in out]
        self.assertEqual(fired, sorted(fired))

    def test_bulk_cancel_keeps_order(self):
        # Over half cancelled, more than 50: the store is purged while
        # timers are still being scheduled.
        rnd = random.Random(11)
        deadlines = sorted(rnd.uniform(0, 15) for _ in range(300))
        deadlines += [rnd.uniform(0, 15) for _ in range(300)]
        cancel = set(range(0, 600, 3)) | set(range(1, 600, 3))
        out = []
        now = self.loop.time()
        hs = []
        for i, d in enumerate(deadlines):
            hs.append(self.loop.call_at(now + d / 1000, out.append, i))
            if i - 5 in cancel:
                hs[i - 5].cancel()
        for i in range(595, 600):
            if i in cancel:
                hs[i].cancel()
        self.loop.call_at(now + 0.02, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(sorted(out), sorted(set(range(600)) - cancel))
        fired = [deadlines[i] for i in out]
        self.assertEqual(fired, sorted(fired))
        self.assertTrue(all(h.cancelled() for i, h in enumerate(hs)
                            if i in cancel))

    def test_timer_scheduled_by_a_due_timer_runs_next_iteration(self):
        out = []

        def first():
            out.append('first')
            self.loop.call_at(self.loop.time() - 1, out.append, 'past')
            self.loop.call_soon(out.append, 'soon')
        now = self.loop.time()
        self.loop.call_at(now, first)
        self.loop.call_at(now, out.append, 'second')
        self.loop.call_later(0.01, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out[:2], ['first', 'second'])
        self.assertEqual(sorted(out[2:]), ['past', 'soon'])

    def test_handle_arguments(self):
        out = []
        self.loop.call_soon(lambda: out.append(()))
        self.loop.call_soon(lambda a: out.append((a,)), 1)
        self.loop.call_soon(lambda a, b: out.append((a, b)), 1, 2)
        self.loop.call_soon(lambda *a: out.append(a), 1, 2, 3)
        self.loop.call_soon(lambda a: out.append((a,)), None)
        self.loop.call_soon(lambda a: out.append((a,)), ())
        self.loop.call_later(0, lambda a: out.append((a,)), 'timer')
        self.loop.call_soon_threadsafe(lambda a, b: out.append((a, b)), 3, 4)
        self.loop.call_later(0.01, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, [(), (1,), (1, 2), (1, 2, 3), (None,), ((),),
                               (3, 4), ('timer',)])

    def test_threadsafe_from_loop_thread_keeps_fifo(self):
        # asyncio appends both to one ready queue: call order is run order.
        out = []

        def cb():
            for i in range(6):
                if i % 2:
                    self.loop.call_soon_threadsafe(out.append, i)
                else:
                    self.loop.call_soon(out.append, i)
            self.loop.call_soon(self.loop.stop)
        self.loop.call_soon(cb)
        self.loop.run_forever()
        self.assertEqual(out, list(range(6)))

    def test_threadsafe_posters_deliver_each_once_in_order(self):
        n, threads = 20000, 3
        got = [[] for _ in range(threads)]
        done = []

        def post(k):
            post_ = self.loop.call_soon_threadsafe
            app = got[k].append
            for i in range(n):
                post_(app, i)
            post_(done.append, k)

        def check():
            if len(done) == threads:
                self.loop.stop()
            else:
                self.loop.call_later(0.001, check)
        ths = [threading.Thread(target=post, args=(k,))
               for k in range(threads)]
        self.loop.call_soon(lambda: [t.start() for t in ths])
        self.loop.call_soon(check)
        self.loop.run_forever()
        for t in ths:
            t.join()
        for k in range(threads):
            self.assertEqual(got[k], list(range(n)))


twin(TimerStoreTests, globals(), task_machine=True)


class LibloopTimerStoreTests(unittest.TestCase):
    """What only libloop promises: equal deadlines in scheduling order;
    no crossing for a post while the loop runs its ready queue; timers
    scheduled in order cost no more memory than asyncio's."""

    def setUp(self):
        self.loop = libloop.new_event_loop()

    def tearDown(self):
        self.loop.close()

    def test_equal_deadlines_in_scheduling_order(self):
        # Few distinct deadlines, many timers: ties between the run and the
        # heap, inside each, and across a purge.
        rnd = random.Random(3)
        out = []
        now = self.loop.time()
        keys, hs = [], []
        for i in range(800):
            d = rnd.choice((1, 2, 3, 5, 8)) if i % 4 else 1 + i // 100
            keys.append((d, i))
            hs.append(self.loop.call_at(now + d / 1000, out.append, i))
            if i % 3 == 0:
                hs[i].cancel()
        self.loop.call_at(now + 0.02, self.loop.stop)
        self.loop.run_forever()
        want = [i for d, i in sorted(keys) if i % 3]
        self.assertEqual(out, want)
        self.assertEqual(self.loop.stats().timers, 0)

    def test_stats_count_both_places(self):
        now = self.loop.time()
        hs = [self.loop.call_at(now + 10 + d, lambda: None)
              for d in (3, 4, 1, 5, 2)]       # 1 and 2 go to the heap
        self.assertEqual(self.loop.stats().timers, 5)
        hs[2].cancel()
        hs[0].cancel()
        self.assertEqual(self.loop.stats().timers, 3)

    def count_posts(self, body):
        real = _lib.ll_call_soon_threadsafe
        calls = []

        def counting(*a):
            calls.append(a)
            return real(*a)
        _lib.ll_call_soon_threadsafe = counting
        try:
            body()
        finally:
            _lib.ll_call_soon_threadsafe = real
        return len(calls)

    def test_post_while_ready_queue_runs_costs_no_crossing(self):
        out = []

        def body():
            def cb():
                for i in range(100):
                    self.loop.call_soon_threadsafe(out.append, i)
                self.loop.call_soon(self.loop.stop)
            self.loop.call_soon(cb)
            self.loop.run_forever()
        self.assertEqual(self.count_posts(body), 0)
        self.assertEqual(out, list(range(100)))

    def test_post_to_a_blocked_loop_wakes_it(self):
        fut = self.loop.create_future()

        def body():
            t = threading.Timer(0.05, self.loop.call_soon_threadsafe,
                                (fut.set_result, 'woke'))
            t.start()
            self.assertEqual(self.loop.run_until_complete(
                asyncio.wait_for(fut, 5)), 'woke')
            t.join()
        self.assertEqual(self.count_posts(body), 1)

    def test_in_order_timers_cost_no_more_than_asyncios(self):
        def traced(loop):
            cb = lambda: None   # noqa: E731
            tracemalloc.start()
            try:
                base = tracemalloc.get_traced_memory()[0]
                hs = [loop.call_later(1000 + i / 1e6, cb)
                      for i in range(20000)]
                used = tracemalloc.get_traced_memory()[0] - base
            finally:
                tracemalloc.stop()
            for h in hs:
                h.cancel()
            return used
        other = asyncio.SelectorEventLoop()
        try:
            theirs = traced(other)
        finally:
            other.close()
        ours = traced(self.loop)
        self.assertLessEqual(ours, theirs * 1.02, (ours, theirs))


if __name__ == '__main__':
    unittest.main()
