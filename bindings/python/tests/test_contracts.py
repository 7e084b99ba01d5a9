# SPDX-License-Identifier: MIT
"""Issue 13's contract cases as twin tests (asyncio's loop and libloop's
agree): deadlines in the distant past run in asyncio's order, and
wait_for takes a 1e10 s timeout and leaves nothing behind when cancelled."""

import asyncio
import math

from .base import LoopCase, twin


class ContractTests(LoopCase):

    def test_distant_past_order(self):
        got = []
        loop = self.loop
        loop.call_at(-1e300, got.append, 'at-1e300')
        loop.call_later(-1e300, got.append, 'later-1e300')
        loop.call_later(-math.inf, got.append, 'later-inf')
        loop.call_at(-1, got.append, 'at-1')
        loop.call_later(0, got.append, 'later0')
        loop.call_soon(got.append, 'soon')
        loop.run_until_complete(asyncio.sleep(0.01))
        self.assertEqual(got, ['soon', 'later-inf', 'at-1e300', 'later-1e300', 'at-1', 'later0'])

    def test_wait_for_long_timeout(self):
        async def main():
            fut = self.loop.create_future()
            self.loop.call_later(0.01, fut.set_result, 42)
            return await asyncio.wait_for(fut, 1e10)
        self.assertEqual(self.run_coro(main()), 42)

    def test_wait_for_long_timeout_cancel_leaves_nothing(self):
        async def main():
            before = len(asyncio.all_tasks())
            for _ in range(2000):
                fut = self.loop.create_future()
                t = asyncio.ensure_future(asyncio.wait_for(fut, 1e10))
                await asyncio.sleep(0)
                t.cancel()
                try:
                    await t
                except asyncio.CancelledError:
                    pass
                self.assertTrue(fut.cancelled())
            return len(asyncio.all_tasks()) - before
        self.assertEqual(self.run_coro(main()), 0)


twin(ContractTests, globals(), task_machine=True)
