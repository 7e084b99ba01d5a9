# SPDX-License-Identifier: MIT
"""Awaiting a libloop C future (ll_transport_sendfile, ll_process_wait)
from Python: one done-callback trampoline per loop, routed by token."""

import ctypes
import itertools

from . import _lib
from . import _netlib as _net
from ._lib import check


class CFuturesMixin:
    """_await_c_future for libloop.EventLoop."""

    def _init_cfutures(self):
        self._cfut_waiters = {}           # token -> (C future id, asyncio future, failed)
        self._cfut_tokens = itertools.count(1)
        self._c_cfut_done = _net.DONE_CALLBACK(self._cfut_done)

    async def _await_c_future(self, cfut, failed=None):
        """Wait for C future cfut and return its value as an int (it is
        released here); its failure is raised as the matching exception.
        failed, if given, is called first with the failure's code and
        payload (an int, ll_future_exception's); an exception it returns
        is raised instead."""
        fut = self.create_future()
        token = next(self._cfut_tokens)
        self._cfut_waiters[token] = (cfut, fut, failed)
        rc = _net.ll_future_add_done_callback(cfut, self._c_cfut_done, token)
        if rc < 0:
            del self._cfut_waiters[token]
            _lib.ll_release(cfut)
            check(rc, 'll_future_add_done_callback')
        return await fut

    def _cfut_done(self, cfut, token):
        try:
            cfut_id, fut, failed = self._cfut_waiters.pop(token)
            value = ctypes.c_size_t()
            rc = _net.ll_future_result(cfut_id, ctypes.byref(value))
            if rc != 0 and failed is not None:
                _net.ll_future_exception_code(cfut_id, None, None, ctypes.byref(value))
            _lib.ll_release(cfut_id)
            if fut.done():
                return
            if rc == 0:
                fut.set_result(ctypes.c_ssize_t(value.value).value)
            else:
                exc = failed(rc, value.value) if failed is not None else None
                if exc is None:
                    try:
                        check(rc, 'libloop')
                    except BaseException as err:
                        exc = err
                fut.set_exception(exc)
        except (SystemExit, KeyboardInterrupt) as exc:
            self._stash(exc)
