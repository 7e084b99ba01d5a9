# SPDX-License-Identifier: MIT
"""Per-event cost of libloop's batch sink, without the kernel: the loop's
sink called on a 1-event batch (DATA_RECEIVED, 64 B) for a real transport
whose protocol writes the data back (`write`) or does nothing (`nowrite`);
`gather` times instead a 64 B write in gather mode (as from a task or
call_soon callback) and the loop's flush that sends it.

The sink is the loop's: with the hot path's C side (bindings/python/cpython)
the C sink; without it (LIBLOOP_PY_HOTPATH=0, or an older binding) the
ctypes sink loop._on_events, entered as libloop enters it (its ctypes
callback). Either is called through its C function pointer by one ctypes
call of the same signature (that call's cost is in both figures: libloop
itself calls the sink from C). The write's C
call is replaced by a no-op of its form (a builtin taking the id and the
bytes: operator.is_; for older bindings a ctypes function of the same
signature, CPython's PyErr_Occurred, which ignores its arguments), so what
is timed is the binding's own work. Prints the median of 7 rounds of
200,000 calls.

    python3 bench/python/bench_sink.py [write|nowrite|gather]
"""

import asyncio
import ctypes
import operator
import socket
import sys
import time
from ctypes import POINTER, c_char_p, c_int, c_int64, c_size_t, c_uint64

import libloop
from libloop import _netlib as _net
from libloop import stream_transport

N, ROUNDS = 200_000, 7
_CALL = ctypes.PYFUNCTYPE(None, c_uint64, c_size_t, c_size_t, ctypes.c_void_p)
_KIND = ''


class _Echo(asyncio.Protocol):
    def __init__(self, write):
        self.write = write

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        if self.write:
            self.transport.write(data)


async def _main(loop, mode):
    write = mode != 'nowrite'
    noop = ctypes.PyDLL(None).PyErr_Occurred   # a fresh function object
    noop.restype = c_int
    noop.argtypes = [c_uint64, c_char_p, c_size_t, POINTER(c_size_t)]
    a, b = socket.socketpair()
    t, _ = await loop.connect_accepted_socket(lambda: _Echo(write), a)
    buf = ctypes.create_string_buffer(b'p' * 64)
    ev = (_net.Event * 1)()
    ev[0].kind = _net.DATA_RECEIVED
    ev[0].transport = t._tid
    ev[0].data = ctypes.addressof(buf)
    ev[0].len = 64
    addr = ctypes.addressof(ev)
    # The binding's write calls its raw packed form (stream_transport's
    # _write_raw: no argtypes); an older binding calls the 4-argument
    # ll_transport_write_async_size through _netlib (kept, to time one
    # against the other: LIBLOOP_BEFORE_PYTHON).
    if hasattr(stream_transport, '_transport_write'):
        mod, name, noop = stream_transport, '_transport_write', operator.is_
    elif hasattr(stream_transport, '_write_raw'):
        mod, name = stream_transport, '_write_raw'
        noop.argtypes = None
        noop.restype = c_int64
    else:
        mod, name = _net, 'll_transport_write_async_size'
    real = getattr(mod, name)
    setattr(mod, name, noop)
    # The sink as libloop calls it (its C function pointer, with the loop's
    # arg), through one ctypes call of the same signature for either sink.
    c_sink = getattr(loop, '_c_sink', None)
    if c_sink is not None:
        from libloop import _hotpath
        fn, arg = ctypes.cast(_hotpath.DELIVER, ctypes.c_void_p).value, c_sink
    else:
        fn, arg = ctypes.cast(loop._c_events, ctypes.c_void_p).value, None
    sink = _CALL(fn)
    args = (loop._id, addr, 1, arg)
    global _KIND
    _KIND = 'C sink' if c_sink is not None else 'ctypes sink'
    res = []
    msg = b'p' * 64
    flush = loop._flush_writes
    try:
        for _ in range(ROUNDS):
            t0 = time.perf_counter_ns()
            if mode == 'gather':
                for _ in range(N):
                    loop._gather = True
                    t.write(msg)
                    flush()
            else:
                for _ in range(N):
                    sink(*args)
            res.append((time.perf_counter_ns() - t0) / N)
    finally:
        setattr(mod, name, real)
    t.close()
    b.close()
    res.sort()
    return res


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else 'write'
    if mode not in ('write', 'nowrite', 'gather'):
        raise SystemExit(__doc__)
    loop = libloop.new_event_loop()
    try:
        res = loop.run_until_complete(_main(loop, mode))
    finally:
        loop.close()
    what = {'write': f'{_KIND}, 1 DATA event, written back',
            'nowrite': f'{_KIND}, 1 DATA event',
            'gather': 'gathered write + flush'}[mode]
    print(f'{what}: median {res[ROUNDS // 2]:.0f} ns per call (min {res[0]:.0f})')


if __name__ == '__main__':
    main()
