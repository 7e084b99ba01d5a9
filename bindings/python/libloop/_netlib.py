# SPDX-License-Identifier: MIT
"""ctypes declarations of libloop's network, process and signal ABI
(include/libloop/transport.h and process.h), beside _lib.py's core ones.

Events reach Python in arrays: every transport is opened with a NULL
protocol fn, so its events go to the loop's batch sink
(ll_loop_set_event_batch), one ctypes callback per batch.
"""

import ctypes
import struct
import sys
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int64,
                    c_size_t, c_uint, c_uint32, c_uint64, c_void_p)

from ._lib import LIB, PYLIB, _fn

# Event kinds (LL_CONNECTION_MADE ...).
CONNECTION_MADE = 1
DATA_RECEIVED = 2
EOF_RECEIVED = 3
CONNECTION_LOST = 4
PAUSE_WRITING = 5
RESUME_WRITING = 6
DATAGRAM_RECEIVED = 7
ERROR_RECEIVED = 8
PROCESS_EXITED = 9

# Transport kinds for ll_transport_open.
STREAM, PIPE_READ, PIPE_WRITE, DATAGRAM = 1, 2, 3, 4

# Stdio choices and flags for ll_spawn.
STDIO_INHERIT, STDIO_PIPE, STDIO_DEVNULL, STDIO_STDOUT = -1, -2, -3, -4
PROCESS_NEW_SESSION, PROCESS_NEW_GROUP = 1, 2


class Event(Structure):
    """struct ll_event."""
    _fields_ = [
        ("kind", c_int),
        ("code", c_int),
        ("fd", c_int),
        ("transport", c_uint64),
        ("data", c_void_p),
        ("len", c_size_t),
        ("addr", c_void_p),
        ("addrlen", c_uint32),
        ("result", c_int),
        ("arg", c_void_p),
    ]


class ProcessOptions(Structure):
    """struct ll_process_options."""
    _fields_ = [
        ("file", c_char_p),
        ("argv", POINTER(c_char_p)),
        ("env", POINTER(c_char_p)),
        ("cwd", c_char_p),
        ("stdio", c_int * 3),
        ("flags", c_int),
    ]


class SpawnExtra(Structure):
    """struct ll_spawn_extra (ll_spawn_ex): Popen's pass_fds, close_fds,
    user, group, extra_groups, umask, process_group and pipesize."""
    _fields_ = [
        ("size", c_size_t),
        ("pass_fds", POINTER(c_int)),
        ("n_pass_fds", c_int),
        ("inherit_fds", c_int),
        ("uid", c_int),
        ("gid", c_int),
        ("groups", POINTER(c_uint)),
        ("n_groups", c_int),
        ("umask", c_int),
        ("pgid", c_int),
        ("pipe_size", c_int),
    ]

    def __init__(self):
        # LL_SPAWN_EXTRA_INIT: nothing asked (0 is a uid, a gid, a umask).
        super().__init__(ctypes.sizeof(SpawnExtra), None, 0, 0, -1, -1, None, -1, -1, -1, 0)


# The batch sink gets the events' address (an int, 0 for NULL: c_size_t,
# not c_void_p, which gives None): NetworkMixin._on_events reads them with
# event_head, or as Event.from_address for the rare kinds. ll_event_batch_fn
# has a fourth parameter, arg, which the binding sets NULL and does not
# declare: ctypes would convert it on every batch (~34 ns, a third of the
# arguments' cost), and on the C calling conventions of every platform
# CPython's ctypes supports the caller passes and removes the arguments, so
# a callee that reads fewer of them is called correctly.
EVENT_BATCH = CFUNCTYPE(None, c_uint64, c_size_t, c_size_t)
EVENT_SIZE = ctypes.sizeof(Event)

# The process's address space as one char array: MEM[a:a + n] is a bytes
# copy of n bytes at address a (a quarter of ctypes.string_at's cost: no
# foreign call), and struct.unpack_from(MEM, a) reads a C struct at a.
# A 64-bit process's addresses all fit below sys.maxsize; a 32-bit one's
# do not (MEM is None there, and the sink takes the ctypes path).
MEM = (ctypes.c_char * sys.maxsize).from_address(0) if ctypes.sizeof(c_void_p) == 8 else None

# kind, transport, data, len of an ll_event at an address in MEM.
_HEAD = struct.Struct('i12xQPN')
assert (Event.transport.offset, Event.data.offset, Event.len.offset) == (16, 24, 32)
event_head = _HEAD.unpack_from
CALLBACK = CFUNCTYPE(None, c_uint64, c_void_p)

_u64p = POINTER(c_uint64)
_P = PYLIB  # short calls: the GIL stays held

ll_loop_set_event_batch = _fn(_P, "ll_loop_set_event_batch", c_int, [c_uint64, EVENT_BATCH, c_void_p])
# Called by the hot path's C sink (libloop-cpython.so gets its address,
# _hotpath.py); the ctypes sink knows its transports' state itself
# (transports.event_dispatch), cheaper than a foreign call per event.
ll_event_withhold = _fn(_P, "ll_event_withhold", c_int, [c_void_p])
ll_transport_open = _fn(_P, "ll_transport_open", c_int, [c_uint64, c_int, c_int, c_void_p, c_void_p, _u64p])
ll_transport_set_protocol = _fn(_P, "ll_transport_set_protocol", c_int, [c_uint64, c_void_p, c_void_p])
ll_transport_write = _fn(_P, "ll_transport_write_async", c_int, [c_uint64, c_char_p, c_size_t])  # asyncio's write()
ll_transport_write_async_size = _fn(_P, "ll_transport_write_async_size", c_int,
                                    [c_uint64, c_char_p, c_size_t, POINTER(c_size_t)])
ll_transport_write_async_packed = _fn(_P, "ll_transport_write_async_packed", c_int64,
                                      [c_uint64, c_char_p, c_size_t])
ll_transport_write_eof = _fn(_P, "ll_transport_write_eof", c_int, [c_uint64])
ll_transport_can_write_eof = _fn(_P, "ll_transport_can_write_eof", c_int, [c_uint64])
ll_transport_close = _fn(_P, "ll_transport_close", c_int, [c_uint64])
ll_transport_abort = _fn(_P, "ll_transport_abort", c_int, [c_uint64])
ll_transport_pause_reading = _fn(_P, "ll_transport_pause_reading", c_int, [c_uint64])
ll_transport_resume_reading = _fn(_P, "ll_transport_resume_reading", c_int, [c_uint64])
ll_transport_is_reading = _fn(_P, "ll_transport_is_reading", c_int, [c_uint64])
ll_transport_set_write_buffer_limits = _fn(_P, "ll_transport_set_write_buffer_limits", c_int,
                                           [c_uint64, c_size_t, c_size_t])
ll_transport_get_write_buffer_size = _fn(_P, "ll_transport_get_write_buffer_size", c_int,
                                         [c_uint64, POINTER(c_size_t)])
ll_transport_fd = _fn(_P, "ll_transport_fd", c_int, [c_uint64])
ll_transport_sendfile = _fn(_P, "ll_transport_sendfile", c_int, [c_uint64, c_int, c_int64, c_int64, _u64p])
ll_transport_sendto = _fn(_P, "ll_transport_sendto", c_int, [c_uint64, c_char_p, c_size_t, c_char_p, c_uint32])
ll_server_open = _fn(_P, "ll_server_open", c_int, [c_uint64, c_int, c_void_p, c_void_p, _u64p])
ll_server_close = _fn(_P, "ll_server_close", c_int, [c_uint64])
ll_spawn = _fn(LIB, "ll_spawn", c_int, [c_uint64, POINTER(ProcessOptions), c_void_p, c_void_p, _u64p])
ll_spawn_ex = _fn(LIB, "ll_spawn_ex", c_int,
                  [c_uint64, POINTER(ProcessOptions), POINTER(SpawnExtra), c_void_p, c_void_p, _u64p])
ll_process_pid = _fn(_P, "ll_process_pid", c_int, [c_uint64, POINTER(c_int)])
ll_process_pipe = _fn(_P, "ll_process_pipe", c_int, [c_uint64, c_int, _u64p])
ll_process_send_signal = _fn(_P, "ll_process_send_signal", c_int, [c_uint64, c_int])
ll_process_returncode = _fn(_P, "ll_process_returncode", c_int, [c_uint64, POINTER(c_int)])
ll_add_signal_handler = _fn(_P, "ll_add_signal_handler", c_int, [c_uint64, c_int, CALLBACK, c_void_p])
ll_remove_signal_handler = _fn(_P, "ll_remove_signal_handler", c_int, [c_uint64, c_int])
ll_future_result = _fn(_P, "ll_future_result", c_int, [c_uint64, POINTER(c_size_t)])


def u64():
    """An out-parameter for an id."""
    return c_uint64()


def data_at(ev):
    """The bytes of a data or datagram event (a copy: the buffer is reused)."""
    if MEM is not None:
        return MEM[ev.data:ev.data + ev.len]
    return ctypes.string_at(ev.data, ev.len)

DONE_CALLBACK = CFUNCTYPE(None, c_uint64, c_void_p)  # ll_done_callback
ll_future_add_done_callback = _fn(_P, "ll_future_add_done_callback", c_int, [c_uint64, DONE_CALLBACK, c_void_p])
ll_future_exception_code = _fn(_P, "ll_future_exception", c_int,
                               [c_uint64, POINTER(c_int), c_void_p, c_void_p])
