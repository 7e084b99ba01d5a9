# SPDX-License-Identifier: MIT
"""run_in_executor and name resolution, on concurrent.futures like asyncio.

The default executor is a ThreadPoolExecutor; its futures come back to the
loop through call_soon_threadsafe (asyncio.wrap_future), i.e. through one
coalesced ll_call_soon_threadsafe wake-up per burst of results.
"""

import concurrent.futures
import socket
from asyncio import futures

from . import _versions


class ExecutorMixin:
    """Executor methods of libloop.EventLoop."""

    def _init_executor(self):
        self._default_executor = None
        self._executor_shutdown_called = False

    def _close_executor(self):
        self._executor_shutdown_called = True
        executor = self._default_executor
        if executor is not None:
            self._default_executor = None
            executor.shutdown(wait=False)

    def run_in_executor(self, executor, func, *args):
        """Run func(*args) in executor (default: a thread pool); a future."""
        self._check_closed()
        if self._debug or not callable(func):
            self._check_callback(func, 'run_in_executor')
        if executor is None:
            executor = self._default_executor
            if self._executor_shutdown_called:
                raise RuntimeError('Executor shutdown has been called')
            if executor is None:
                executor = concurrent.futures.ThreadPoolExecutor(
                    thread_name_prefix='asyncio')
                self._default_executor = executor
        return futures.wrap_future(executor.submit(func, *args), loop=self)

    def set_default_executor(self, executor):
        """Use executor (a ThreadPoolExecutor) for run_in_executor(None)."""
        if not isinstance(executor, concurrent.futures.ThreadPoolExecutor):
            raise TypeError('executor must be ThreadPoolExecutor instance')
        self._default_executor = executor

    # asyncio's own, of the running version (_versions.py): 3.12 added the
    # timeout asyncio.Runner passes.
    shutdown_default_executor = _versions.shutdown_default_executor
    _do_shutdown = _versions.do_shutdown

    async def getaddrinfo(self, host, port, *, family=0, type=0, proto=0,
                          flags=0):
        """socket.getaddrinfo in the default executor."""
        return await self.run_in_executor(
            None, socket.getaddrinfo, host, port, family, type, proto, flags)

    async def getnameinfo(self, sockaddr, flags=0):
        """socket.getnameinfo in the default executor."""
        return await self.run_in_executor(
            None, socket.getnameinfo, sockaddr, flags)
