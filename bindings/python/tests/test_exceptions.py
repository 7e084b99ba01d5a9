# SPDX-License-Identifier: MIT
"""Exception handler API, debug mode, async generators shutdown."""

import asyncio
import logging
import unittest

from .base import LoopCase, twin


class ErrorsTests(LoopCase):

    def test_callback_exception_goes_to_handler(self):
        self.collect_errors()

        def bad():
            raise ValueError('bad callback')
        self.loop.call_soon(bad)
        self.loop.call_later(0, bad)
        self.loop.call_later(0.01, self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(len(self.errors), 2)
        for ctx in self.errors:
            self.assertTrue(ctx['message'].startswith('Exception in callback'))
            self.assertIsInstance(ctx['exception'], ValueError)
            self.assertIsInstance(ctx['handle'], asyncio.Handle)

    def test_handler_api(self):
        self.assertIsNone(self.loop.get_exception_handler())

        def handler(loop, ctx):
            pass
        self.loop.set_exception_handler(handler)
        self.assertIs(self.loop.get_exception_handler(), handler)
        with self.assertRaises(TypeError):
            self.loop.set_exception_handler(1)
        self.loop.set_exception_handler(None)
        self.assertIsNone(self.loop.get_exception_handler())

    def test_default_handler_logs(self):
        with self.assertLogs('asyncio', level='ERROR') as cm:
            self.loop.call_exception_handler({'message': 'custom msg',
                                              'exception': KeyError('k')})
        self.assertIn('custom msg', cm.output[0])

    def test_failing_handler(self):
        def handler(loop, ctx):
            raise RuntimeError('handler failed')
        self.loop.set_exception_handler(handler)
        with self.assertLogs('asyncio', level='ERROR') as cm:
            self.loop.call_exception_handler({'message': 'm'})
        self.assertIn('Unhandled error in exception handler', cm.output[0])

    def test_keyboard_interrupt_propagates(self):
        out = []

        def interrupt():
            raise KeyboardInterrupt
        self.loop.call_soon(interrupt)
        self.loop.call_soon(out.append, 'after')
        with self.assertRaises(KeyboardInterrupt):
            self.loop.run_forever()
        self.loop.call_soon(self.loop.stop)
        self.loop.run_forever()
        self.assertEqual(out, ['after'])

    def test_debug_slow_callback(self):
        import time
        self.assertFalse(self.loop.get_debug())
        self.loop.set_debug(True)
        self.assertTrue(self.loop.get_debug())
        self.loop.slow_callback_duration = 0.01
        self.loop.call_soon(time.sleep, 0.03)
        self.loop.call_soon(self.loop.stop)
        with self.assertLogs('asyncio', level=logging.WARNING) as cm:
            self.loop.run_forever()
        self.assertTrue(any('Executing' in line and 'took' in line
                            for line in cm.output), cm.output)

    def test_debug_as_set_and_seen_by_new_futures(self):
        # get_debug() returns what set_debug() was given, every time; a
        # Future and a Task made after set_debug(True) record where they
        # were made (asyncio's C Future asks the loop's get_debug()), and
        # those made after set_debug(False) do not.
        async def nothing():
            pass
        for value in (True, 0, 1, False):
            self.loop.set_debug(value)
            self.assertIs(self.loop.get_debug(), value)
            fut = self.loop.create_future()
            task = self.loop.create_task(nothing())
            self.assertEqual(fut._source_traceback is not None, bool(value))
            self.assertEqual(task._source_traceback is not None, bool(value))
            self.assertIs(fut.get_loop(), self.loop)
            self.loop.run_until_complete(task)
            fut.cancel()

    def test_subclass_get_debug_and_create_future_are_kept(self):
        made = []

        class Loop(type(self.loop)):
            def get_debug(self):
                return 'own'

            def create_future(self):
                made.append(super().create_future())
                return made[-1]
        loop = Loop()
        try:
            loop.set_debug(True)
            self.assertEqual(loop.get_debug(), 'own')
            fut = loop.create_future()
            self.assertEqual(made, [fut])
            self.assertIs(fut.get_loop(), loop)
        finally:
            loop.close()

    def test_unretrieved_task_exception_reported(self):
        self.collect_errors()

        async def fail():
            raise ValueError('never retrieved')

        async def main():
            self.loop.create_task(fail())
            await asyncio.sleep(0.01)
        self.loop.run_until_complete(main())
        import gc
        gc.collect()
        self.loop.run_until_complete(asyncio.sleep(0))
        self.assertTrue(any('never retrieved' in ctx['message']
                            for ctx in self.errors), self.errors)

    def test_shutdown_asyncgens(self):
        out = []

        async def agen():
            try:
                yield 1
                yield 2
            finally:
                out.append('closed')

        async def main():
            g = agen()
            self.assertEqual(await g.__anext__(), 1)
            self.keep = g
        self.loop.run_until_complete(main())
        self.assertEqual(out, [])
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.assertEqual(out, ['closed'])

    def test_asyncgen_finalized_by_gc(self):
        out = []

        async def agen():
            try:
                yield 1
                yield 2
            finally:
                out.append('finalized')

        async def main():
            g = agen()
            await g.__anext__()
            del g
            import gc
            gc.collect()
            await asyncio.sleep(0.01)
        self.loop.run_until_complete(main())
        self.assertEqual(out, ['finalized'])


twin(ErrorsTests, globals(), task_machine=True)

if __name__ == '__main__':
    unittest.main()
