# SPDX-License-Identifier: MIT
"""libloop-only checks of libloop.Task: its steps really go through
libloop's C task machine (ll_task_*), and the opt-in switches."""

import asyncio
import ctypes
import gc
import unittest

import libloop
from libloop import _lib


def c_all_tasks(loop):
    """The loop's live C tasks (ll_all_tasks)."""
    buf = (ctypes.c_uint64 * 64)()
    n = _lib.ll_all_tasks(loop._id, buf, 64)
    return set(buf[:min(n, 64)]) if n >= 0 else n


def c_current_task(loop):
    out = ctypes.c_uint64()
    _lib.check(_lib.ll_current_task(loop._id, ctypes.byref(out)))
    return out.value


class TaskMachineTests(unittest.TestCase):

    def setUp(self):
        self.loop = libloop.new_event_loop(task_machine=True)

    def tearDown(self):
        if not self.loop.is_closed():
            self.loop.close()
        self.loop = None
        gc.collect()

    def test_steps_go_through_the_c_machine(self):
        loop = self.loop
        seen = {}

        async def worker(n):
            for _ in range(n):
                await asyncio.sleep(0)
            me = asyncio.current_task()
            seen['current'] = (c_current_task(loop), me._ll_id)
            seen['c_tasks'] = c_all_tasks(loop)
            seen['py_tasks'] = {t._ll_id for t in asyncio.all_tasks()}
            return n

        async def main():
            return await asyncio.gather(worker(10), worker(20))
        self.assertEqual(loop.run_until_complete(main()), [10, 20])
        cur, mine = seen['current']
        self.assertEqual(cur, mine)
        self.assertNotEqual(cur, 0)
        # Every asyncio-visible task is a live C task and vice versa.
        self.assertEqual(seen['c_tasks'], seen['py_tasks'])
        self.assertEqual(len(seen['c_tasks']), 2)   # main + the worker
        # main: 2 steps; worker(10): 11 + 1; worker(20): 21 + ... one step
        # per sleep(0) plus the first, and one wake-up per awaited future.
        self.assertGreaterEqual(loop._tm.steps, 10 + 20 + 2 + 2)
        self.assertEqual(c_all_tasks(loop), set())
        self.assertEqual(loop._tm.tasks, {})

    def test_task_type_and_ids(self):
        async def main():
            t = asyncio.current_task()
            return t, t._ll_id
        t, tid = self.loop.run_until_complete(main())
        self.assertIsInstance(t, libloop.Task)
        self.assertIsInstance(t, asyncio.Task)
        self.assertNotEqual(tid, 0)
        self.assertEqual(t._ll_id, 0)                    # released when done
        self.assertEqual(_lib.ll_future_state(tid), _lib.LL_EBADHANDLE)

    def test_cancel_counts_are_the_c_tasks(self):
        async def main():
            t = self.loop.create_task(asyncio.sleep(1))
            await asyncio.sleep(0)
            t.cancel()
            t.cancel()
            counts = (t.cancelling(), _lib.ll_task_cancelling(t._ll_id))
            t.uncancel()
            counts += (_lib.ll_task_cancelling(t._ll_id),)
            await asyncio.gather(t, return_exceptions=True)
            return counts, t.cancelled()
        self.assertEqual(self.run_main(main()), ((2, 2, 1), True))

    def run_main(self, coro):
        return self.loop.run_until_complete(coro)

    def test_default_is_unchanged(self):
        loop = libloop.new_event_loop()
        try:
            async def main():
                return type(asyncio.current_task())
            self.assertIs(loop.run_until_complete(main()), asyncio.Task)
            self.assertIsNone(loop._tm)
        finally:
            loop.close()

    def test_task_factory_switch(self):
        loop = libloop.new_event_loop()
        try:
            loop.set_task_factory(libloop.task_factory)
            self.assertIs(loop.get_task_factory(), libloop.task_factory)

            async def main():
                t = loop.create_task(asyncio.sleep(0, 'x'), name='named')
                return type(asyncio.current_task()), t.get_name(), await t
            self.assertEqual(loop.run_until_complete(main()),
                             (libloop.Task, 'named', 'x'))
            self.assertGreater(loop._tm.steps, 0)
        finally:
            loop.close()

    def test_factory_needs_a_libloop_loop(self):
        loop = asyncio.new_event_loop()
        try:
            coro = asyncio.sleep(0)
            with self.assertRaises(TypeError):
                libloop.task_factory(loop, coro)
            coro.close()
        finally:
            loop.close()

    def test_run_entry_point(self):
        async def main():
            await asyncio.sleep(0)
            return type(asyncio.current_task()).__module__
        self.assertEqual(libloop.run(main(), task_machine=True),
                         'libloop.task_machine')

    def test_close_with_pending_tasks(self):
        errors = []
        self.loop.set_exception_handler(lambda loop, ctx: errors.append(ctx))

        async def forever():
            await self.loop.create_future()

        async def main():
            t = self.loop.create_task(forever())
            await asyncio.sleep(0)
            return t
        t = self.run_main(main())
        self.assertFalse(t.done())
        self.loop.close()
        self.assertEqual(self.loop._tm.tasks, {})
        del t
        gc.collect()
        self.assertTrue(any('destroyed but it is pending' in e['message']
                            for e in errors))

    def test_many_tasks_and_awaits(self):
        async def worker(i):
            fut = self.loop.create_future()
            self.loop.call_soon(fut.set_result, i)
            v = await fut
            await asyncio.sleep(0)
            return v

        async def main():
            return sum(await asyncio.gather(*(worker(i) for i in range(500))))
        self.assertEqual(self.run_main(main()), sum(range(500)))
        self.assertEqual(c_all_tasks(self.loop), set())


if __name__ == '__main__':
    unittest.main()
