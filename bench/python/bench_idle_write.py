# SPDX-License-Identifier: MIT
"""Per-call cost of a 64 B ll_transport_write_async_size (`ll`) or of the
binding's own ll_transport_write_async_packed call (`packed`: the hot path's
builtin, _hotpath.transport_write; an older binding's raw ctypes call) made from a
call_soon callback (outside any event delivery, as the binding's flush at
the end of a trampoline makes it) to an idle Unix socketpair transport
whose peer a child process drains. `sock` times Python's socket.send on
the same fd instead, for reference. Prints the median of 15 rounds of
4,000 calls, in ns per call (each round fits the enlarged socket buffer,
so nothing is buffered; a round that buffers stops the run).

    python3 bench/python/bench_idle_write.py [ll|packed|sock]
"""

import asyncio
import ctypes
import os
import socket
import statistics
import sys
import time

import libloop
from libloop import _netlib as _net

N, ROUNDS = 4_000, 15
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33  # Linux; need CAP_NET_ADMIN


def _drain(sock):
    while True:
        try:
            if not sock.recv(1 << 20):
                return
        except OSError:
            return


async def _main(mine, pid, mode):
    loop = asyncio.get_running_loop()
    t, _ = await loop.create_unix_connection(asyncio.Protocol, sock=mine)
    tid, size, data = t._tid, ctypes.c_size_t(), b'x' * 64
    write = _net.ll_transport_write_async_size
    # `packed`: the binding's write call (0 is all sent, nothing buffered):
    # the builtin, or an older binding's raw ctypes call (no argtypes, the
    # id as a c_uint64)
    raw_packed = getattr(_net, 'write_packed_raw', None)
    if raw_packed is not None:
        ctid = ctypes.c_uint64(tid)

        def packed(_tid, data, n):
            return raw_packed(ctid, data, n)
    else:
        from libloop import _hotpath
        builtin = _hotpath.transport_write

        def packed(tid, data, _n):
            return builtin(tid, data)
    raw = None
    if mode == 'sock':
        raw = socket.socket(fileno=os.dup(mine.fileno()))
        send = raw.send

        def write(_tid, data, n, _size):
            return send(data) - n
    res = []
    for _ in range(ROUNDS):
        fut = loop.create_future()

        def timed():
            t0 = time.perf_counter_ns()
            if mode == 'packed':
                for _ in range(N):
                    if packed(tid, data, 64) != 0:
                        raise SystemExit('a write was buffered: the peer did not keep up')
            else:
                for _ in range(N):
                    if write(tid, data, 64, size) != 0 or size.value:
                        raise SystemExit('a write was buffered: the peer did not keep up')
            fut.set_result((time.perf_counter_ns() - t0) / N)
        loop.call_soon(timed)
        res.append(await fut)
        while t.get_write_buffer_size():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.01)
    t.close()
    if raw is not None:
        raw.close()
    await asyncio.sleep(0.01)
    os.waitpid(pid, 0)
    return res


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else 'll'
    mine, peer = socket.socketpair()
    mine.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 64 << 20)
    peer.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
    pid = os.fork()
    if pid == 0:
        mine.close()
        _drain(peer)
        os._exit(0)
    peer.close()
    loop = libloop.new_event_loop()
    try:
        res = loop.run_until_complete(_main(mine, pid, mode))
    finally:
        loop.close()
    print(f'{mode}: median {statistics.median(res):.0f} ns per 64 B write '
          f'(rounds: {", ".join(str(round(x)) for x in res)})')


if __name__ == '__main__':
    main()
