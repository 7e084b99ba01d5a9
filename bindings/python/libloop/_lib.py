# SPDX-License-Identifier: MIT
"""Low-level ctypes layer over libloop's C ABI (include/libloop.h).

Loading order: $LIBLOOP_LIBRARY, then libloop.so next to this package, then
<repo>/build/libloop.so relative to this file, then an installed one
(_loader.py, which opens it at the first loop). Each wrapper declares its
argtypes/restype beside it. Short calls that never block or call back into
Python for long go through a PyDLL handle (the GIL stays held: ~100-200 ns
cheaper per call); calls that run the loop go through CDLL, which releases
the GIL so executor threads can run while the loop waits in poll.
"""

import asyncio
import ctypes
import errno as _errno
import os
from ctypes import (CFUNCTYPE, POINTER, c_char_p, c_double, c_int, c_size_t,
                    c_uint64, c_void_p)

from . import _loader

__all__ = ["LIB", "PYLIB", "LibloopError", "check", "describe"]


# The library is found and checked at import and opened at the first loop
# (_loader.py: a Go runtime does not survive fork()). LIB and PYLIB name
# the handle a function is called through.
LIB, PYLIB = _loader.CDLL, _loader.PYDLL
PATH = _loader.PATH
_fn = _loader.declare   # _fn(LIB or PYLIB, name, restype, argtypes)


# ---- errors -----------------------------------------------------------------

# LL_EINVAL ... LL_EFORKED and ERRORS (code -> name, message) are generated
# from include/libloop/errno.h's LL_ERRNO_MAP (tools/errtab.py). The TLS codes are
# those of libloop's own TLS transports; the asyncio loop does TLS with the
# ssl module instead, so Python sees them only from C code it calls.
# LL_EFORKED: this process is a fork() child of the one that loaded libloop
# (libloop.h: Forking).
# Every name of _errcodes.__all__ is libloop._lib's too (docs/errors.md), as a
# star import made it; spelt out so that pyflakes still sees undefined names
# in this module. check() names its codes.
from . import _errcodes  # noqa: E402
from ._errcodes import (LL_EBADHANDLE, LL_ECANCELLED, LL_ECLOSED, LL_EFORKED,  # noqa: E402
                        LL_EINVAL, LL_ENOMEM, LL_ERUNNING, LL_ESTATE, LL_ETIMEDOUT)
globals().update((name, getattr(_errcodes, name)) for name in _errcodes.__all__)

ll_strerror = _fn(LIB, "ll_strerror", c_char_p, [c_int])

ll_err_name = _fn(LIB, "ll_err_name", c_char_p, [c_int])

ll_version_string = _fn(LIB, "ll_version_string", c_char_p, [])


def describe(code):
    """Return 'NAME: description' for a libloop error code."""
    return (f"{ll_err_name(code).decode()}: "
            f"{ll_strerror(code).decode(errors='replace')}")


class LibloopError(RuntimeError):
    """A libloop library error (an LL_E* code) with no closer Python type."""

    def __init__(self, code, what=""):
        self.code = code
        super().__init__(f"{what}: {describe(code)}" if what else describe(code))


def check(rc, what=""):
    """Raise the Python exception matching a negative return code."""
    if rc >= 0:
        return rc
    if rc > -10000:
        err = -rc
        msg = os.strerror(err)
        raise OSError(err, f"{what}: {msg}" if what else msg)
    if rc == LL_ECLOSED:
        raise RuntimeError("Event loop is closed")
    if rc == LL_ERUNNING:
        raise RuntimeError("This event loop is already running")
    if rc == LL_EFORKED:
        raise RuntimeError(
            "libloop cannot be used in a fork() child of the process that loaded it: "
            "its runtime's threads did not survive the fork. Exec in the child, or "
            "load libloop only after forking (see docs/python.md)")
    if rc == LL_ESTATE:
        raise asyncio.InvalidStateError(f"{what}: {describe(rc)}")
    if rc == LL_ECANCELLED:
        raise asyncio.CancelledError()
    if rc == LL_ETIMEDOUT:
        raise TimeoutError(describe(rc))
    if rc == LL_ENOMEM:
        raise MemoryError(f"{what}: {describe(rc)}")
    if rc in (LL_EINVAL, LL_EBADHANDLE):
        raise ValueError(f"{what}: {describe(rc)}")
    raise LibloopError(rc, what)


# ---- callback types -----------------------------------------------------------

CALLBACK = CFUNCTYPE(None, c_uint64, c_void_p)            # ll_callback
IO_CALLBACK = CFUNCTYPE(None, c_uint64, c_int, c_void_p)  # ll_io_callback
HOST_RUN = CFUNCTYPE(c_int, c_uint64, c_void_p)           # ll_host_run_fn

# ---- ids, loops ---------------------------------------------------------------

ll_release = _fn(LIB, "ll_release", c_int, [c_uint64])

ll_loop_new = _fn(LIB, "ll_loop_new", c_int, [POINTER(c_uint64)])

ll_loop_close = _fn(LIB, "ll_loop_close", c_int, [c_uint64])


class ErrorContext(ctypes.Structure):
    """ll_error_context: what the library reports to a loop's exception handler."""
    _fields_ = [("message", c_char_p), ("code", c_int), ("future", c_uint64),
                ("task", c_uint64), ("handle", c_uint64)]


# ll_exception_handler
EXCEPTION_HANDLER = CFUNCTYPE(None, c_uint64, POINTER(ErrorContext), c_void_p)
ll_loop_set_exception_handler = _fn(LIB, "ll_loop_set_exception_handler", c_int,
                                    [c_uint64, EXCEPTION_HANDLER, c_void_p])


class LoopStats(ctypes.Structure):
    """struct ll_loop_stats (tests/c/test_abi_layout.c pins its layout)."""
    _fields_ = [(name, c_uint64) for name in (
        "size", "iterations", "events", "callbacks", "idle_ns", "running_ns",
        "ready", "timers", "fds", "tasks")]


LL_LOOP_STATS_V1_SIZE = 80  # sizeof(LoopStats): the fields above
assert ctypes.sizeof(LoopStats) == LL_LOOP_STATS_V1_SIZE


ll_loop_stats = _fn(PYLIB, "ll_loop_stats", c_int, [c_uint64, POINTER(LoopStats)])

# Runs the loop: CDLL, so the GIL is released while it polls.
ll_loop_run_forever = _fn(LIB, "ll_loop_run_forever", c_int, [c_uint64])

LL_RUN_ONCE, LL_RUN_NOWAIT = 0, 1  # ll_loop_run_once modes

ll_loop_run_once = _fn(LIB, "ll_loop_run_once", c_int, [c_uint64, c_int])

ll_loop_stop = _fn(PYLIB, "ll_loop_stop", c_int, [c_uint64])

ll_loop_is_running = _fn(PYLIB, "ll_loop_is_running", c_int, [c_uint64])

ll_loop_is_closed = _fn(PYLIB, "ll_loop_is_closed", c_int, [c_uint64])
ll_loop_backend_fd = _fn(PYLIB, "ll_loop_backend_fd", c_int, [c_uint64])

ll_loop_time = _fn(PYLIB, "ll_loop_time", c_double, [c_uint64])

ll_loop_set_debug = _fn(PYLIB, "ll_loop_set_debug", c_int, [c_uint64, c_int])

# ---- callbacks and timers -----------------------------------------------------

ll_call_at = _fn(PYLIB, "ll_call_at", c_int, [c_uint64, c_double, CALLBACK, c_void_p, POINTER(c_uint64)])

ll_call_later = _fn(PYLIB, "ll_call_later", c_int, [c_uint64, c_double, CALLBACK, c_void_p, POINTER(c_uint64)])

# Thread-safe and called from foreign threads: CDLL (releases the GIL).
ll_call_soon_threadsafe = _fn(LIB, "ll_call_soon_threadsafe", c_int, [c_uint64, CALLBACK, c_void_p])

ll_loop_wakeup = _fn(LIB, "ll_loop_wakeup", c_int, [c_uint64])

ll_handle_cancel = _fn(PYLIB, "ll_handle_cancel", c_int, [c_uint64])

# ---- file descriptors ----------------------------------------------------------

ll_add_reader = _fn(PYLIB, "ll_add_reader", c_int, [c_uint64, c_int, IO_CALLBACK, c_void_p])

ll_remove_reader = _fn(PYLIB, "ll_remove_reader", c_int, [c_uint64, c_int])

ll_add_writer = _fn(PYLIB, "ll_add_writer", c_int, [c_uint64, c_int, IO_CALLBACK, c_void_p])

ll_remove_writer = _fn(PYLIB, "ll_remove_writer", c_int, [c_uint64, c_int])

# ---- host queue ----------------------------------------------------------------

ll_loop_set_host_queue = _fn(PYLIB, "ll_loop_set_host_queue", c_int, [c_uint64, HOST_RUN, c_void_p])

ll_loop_host_ready = _fn(PYLIB, "ll_loop_host_ready", c_int, [c_uint64])


# ---- futures and tasks (the task machine; libloop/task_machine.py) -----------

STEP_FN = CFUNCTYPE(None, c_uint64, c_void_p)             # ll_step_fn

LL_PENDING, LL_CANCELLED, LL_FINISHED = 0, 1, 2


# Values are uintptr_t (c_size_t) and free functions are passed as NULL (None).
ll_future_new = _fn(PYLIB, "ll_future_new", c_int, [c_uint64, POINTER(c_uint64)])
ll_future_state = _fn(PYLIB, "ll_future_state", c_int, [c_uint64])
ll_future_set_result = _fn(PYLIB, "ll_future_set_result", c_int, [c_uint64, c_size_t, c_void_p])
ll_future_cancel = _fn(PYLIB, "ll_future_cancel", c_int, [c_uint64, c_char_p])
ll_future_exception = _fn(PYLIB, "ll_future_exception", c_int, [c_uint64, c_void_p, c_void_p, c_void_p])
ll_task_new = _fn(PYLIB, "ll_task_new", c_int, [c_uint64, STEP_FN, c_void_p, POINTER(c_uint64)])
ll_task_await = _fn(PYLIB, "ll_task_await", c_int, [c_uint64, c_uint64])
ll_task_yield = _fn(PYLIB, "ll_task_yield", c_int, [c_uint64])
ll_task_return = _fn(PYLIB, "ll_task_return", c_int, [c_uint64, c_size_t, c_void_p])
ll_task_raise = _fn(PYLIB, "ll_task_raise", c_int, [c_uint64, c_int, c_char_p, c_size_t, c_void_p])
ll_task_must_raise_cancel = _fn(PYLIB, "ll_task_must_raise_cancel", c_int, [c_uint64])
ll_task_cancel = _fn(PYLIB, "ll_task_cancel", c_int, [c_uint64, c_char_p])
ll_task_uncancel = _fn(PYLIB, "ll_task_uncancel", c_int, [c_uint64])
ll_task_cancelling = _fn(PYLIB, "ll_task_cancelling", c_int, [c_uint64])
ll_current_task = _fn(PYLIB, "ll_current_task", c_int, [c_uint64, POINTER(c_uint64)])
ll_all_tasks = _fn(PYLIB, "ll_all_tasks", c_int, [c_uint64, POINTER(c_uint64), c_size_t])


def new_loop_id():
    """Create a libloop loop and return its id (opening the library at the
    first; RuntimeError in a fork() child of a process that had opened it)."""
    _loader.load()
    out = c_uint64()
    check(ll_loop_new(ctypes.byref(out)), "ll_loop_new")
    return out.value


def errno_name(code):
    """Name of an errno value (for messages)."""
    return _errno.errorcode.get(code, str(code))
