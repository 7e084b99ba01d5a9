# SPDX-License-Identifier: MIT
"""Twin-suite support: each test mixin runs once on asyncio's default loop
and once on libloop's (as uvloop's tests do), asserting the same outputs."""

import asyncio
import gc
import threading
import unittest

import libloop


class LoopCase:
    """Mixin: self.loop is a fresh loop from new_loop() (given by the
    flavour class: AsyncioLoop or LibloopLoop); closed afterwards."""

    def setUp(self):
        super().setUp()
        self._threads_before = set(threading.enumerate())
        self.loop = self.new_loop()
        self.errors = []

    def tearDown(self):
        loop = self.loop
        if not loop.is_closed():
            if not loop.is_running():
                loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
        asyncio.set_event_loop(None)
        self.loop = None
        gc.collect()
        super().tearDown()

    def run_coro(self, coro, timeout=10):
        """Run a coroutine on self.loop with a safety timeout."""
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def collect_errors(self):
        """Record exception-handler contexts in self.errors."""
        self.loop.set_exception_handler(
            lambda loop, ctx: self.errors.append(ctx))


class AsyncioLoop:
    """new_loop() gives asyncio's default (selector) loop."""

    def new_loop(self):
        return asyncio.SelectorEventLoop()


class LibloopLoop:
    """new_loop() gives libloop.EventLoop."""

    def new_loop(self):
        return libloop.new_event_loop()


class LibloopTaskMachineLoop:
    """new_loop() gives libloop.EventLoop(task_machine=True): create_task
    builds libloop.Task, stepped by libloop's C task machine."""

    def new_loop(self):
        return libloop.new_event_loop(task_machine=True)


def twin(mixin, module_globals, task_machine=False):
    """Define Test<Mixin>Asyncio and Test<Mixin>Libloop in a test module,
    and with task_machine=True also Test<Mixin>LibloopTaskMachine."""
    base = mixin.__name__.replace('Tests', '')
    flavours = [('Asyncio', AsyncioLoop), ('Libloop', LibloopLoop)]
    if task_machine:
        flavours.append(('LibloopTaskMachine', LibloopTaskMachineLoop))
    for suffix, flavour in flavours:
        name = f'Test{base}{suffix}'
        module_globals[name] = type(name, (mixin, flavour, unittest.TestCase), {})
