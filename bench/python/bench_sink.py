# SPDX-License-Identifier: MIT
"""Per-event Python cost of libloop's batch sink, without the kernel:
loop._on_events called from Python on a 1-event batch (DATA_RECEIVED, 64 B)
for a real transport whose protocol writes the data back (`write`) or does
nothing (`nowrite`); `gather` times instead a 64 B write in gather mode (as
from a task or call_soon callback) and the loop's flush that sends it. The
C write is replaced by a no-op C function of the same ctypes signature
(CPython's PyErr_Occurred: returns 0, ignores its arguments; no argtypes
for the binding's raw packed write), so what is timed is the binding's
Python plus one ctypes call's argument conversions. Prints the median of 7
rounds of 200,000 calls.

    python3 bench/python/bench_sink.py [write|nowrite|gather]
"""

import asyncio
import ctypes
import socket
import sys
import time
from ctypes import POINTER, c_char_p, c_int, c_int64, c_size_t, c_uint64

import libloop
from libloop import _netlib as _net
from libloop import stream_transport

N, ROUNDS = 200_000, 7


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
    mod, name = (stream_transport, '_write_raw') if hasattr(stream_transport, '_write_raw') \
        else (_net, 'll_transport_write_async_size')
    if mod is stream_transport:
        noop.argtypes = None
        noop.restype = c_int64
    real = getattr(mod, name)
    setattr(mod, name, noop)
    sink = loop._on_events
    # (an older binding's sink also takes the batch's C arg)
    args = (0, addr, 1, None)[:sink.__code__.co_argcount - 1]
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
    what = {'write': 'sink, 1 DATA event, written back',
            'nowrite': 'sink, 1 DATA event',
            'gather': 'gathered write + flush'}[mode]
    print(f'{what}: median {res[ROUNDS // 2]:.0f} ns per call (min {res[0]:.0f})')


if __name__ == '__main__':
    main()
