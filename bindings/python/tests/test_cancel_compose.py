# SPDX-License-Identifier: MIT
"""Cancellation through nested gather / wait_for / await, on asyncio's loop,
libloop's, and libloop's C task machine: the awaiting task must resume
with CancelledError (these compositions once hung on libloop's helpers)."""

import asyncio

from .base import LoopCase, twin


class CancelComposeTests(LoopCase):

    def test_gather_of_gather_of_cancelled_future(self):
        async def main():
            fut = self.loop.create_future()
            outer = asyncio.gather(asyncio.gather(fut))
            self.loop.call_soon(fut.cancel)
            with self.assertRaises(asyncio.CancelledError):
                await outer
            # asyncio: a gather is never cancelled(); it fails instead.
            return outer.cancelled(), type(outer.exception()).__name__
        self.assertEqual(self.run_coro(main()), (False, 'CancelledError'))

    def test_cancelled_inner_gather_cancels_awaiting_task(self):
        async def child():
            await asyncio.sleep(60)

        async def waiter(inner):
            await asyncio.gather(inner)

        async def main():
            inner = asyncio.gather(child())
            task = self.loop.create_task(waiter(inner))
            await asyncio.sleep(0)
            inner.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            return task.cancelled()
        self.assertTrue(self.run_coro(main()))

    def test_wait_for_of_cancelled_gather_and_its_timeout(self):
        async def main():
            fut = self.loop.create_future()
            g = asyncio.gather(fut)
            self.loop.call_soon(fut.cancel)
            with self.assertRaises(asyncio.CancelledError):
                await asyncio.wait_for(g, 60)
            slow = asyncio.gather(asyncio.sleep(60))
            with self.assertRaises(asyncio.TimeoutError):
                await asyncio.wait_for(slow, 0.01)
            return 'ok'
        self.assertEqual(self.run_coro(main()), 'ok')

    def test_gather_return_exceptions_stops_the_cancellation(self):
        async def main():
            fut = self.loop.create_future()
            inner = asyncio.gather(fut)
            self.loop.call_soon(fut.cancel)
            res = await asyncio.gather(inner, return_exceptions=True)
            return [type(r).__name__ for r in res]
        self.assertEqual(self.run_coro(main()), ['CancelledError'])


twin(CancelComposeTests, globals(), task_machine=True)
