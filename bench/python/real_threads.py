# SPDX-License-Identifier: MIT
"""CPU per operation of one real_libs.py client, split by thread: the loop's
thread (the one running Python) and every other thread of the process (for
libloop, the Go runtime's: sysmon, the Ms woken by the loop's 5 ms yield),
read from /proc/self/task/*/schedstat (nanoseconds on CPU and time slices,
exact, unlike getrusage's). Run under `real_libs.sh servers`:

    BENCH_PINS=pinned bash bench/python/real_libs.sh servers bash -c \\
      'taskset -c 0 python3 bench/python/real_threads.py redis1 libloop $REAL_REDIS_PORT 30000'

prints one line:
    THREADS loop=.. workload=.. n=.. per_s=.. total_ns=.. loop_ns=..
            loop_slices=.. others_ns=.. others_slices=..
(*_ns: CPU ns per operation; *_slices: times scheduled in per operation).
The figures cover the whole client coroutine (connecting included), as
real_libs.py's cpu_us does.
"""

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real_libs import CLIENTS, make_loop  # noqa: E402


def schedstat():
    """{thread id: (ns on CPU, time slices)} of this process's threads."""
    out = {}
    for tid in os.listdir('/proc/self/task'):
        try:
            with open(f'/proc/self/task/{tid}/schedstat') as f:
                fields = f.read().split()
        except OSError:     # (a thread that ended meanwhile)
            continue
        out[int(tid)] = (int(fields[0]), int(fields[2]))
    return out


def main(argv):
    if len(argv) not in (4, 5) or argv[1] not in CLIENTS:
        print(__doc__, file=sys.stderr)
        return 2
    name, loop_name, port = argv[1], argv[2], int(argv[3])
    n = int(argv[4]) if len(argv) == 5 else CLIENTS[name][1]
    loop = make_loop(loop_name)
    asyncio.set_event_loop(loop)
    me = os.getpid()    # (the main thread's id is the process's)
    before = schedstat()
    t0 = time.perf_counter()
    try:
        dt = loop.run_until_complete(CLIENTS[name][0](port, n))
    finally:
        after = schedstat()
        wall = time.perf_counter() - t0
        loop.close()
    delta = {t: (ns - before.get(t, (0, 0))[0], sl - before.get(t, (0, 0))[1])
             for t, (ns, sl) in after.items()}
    mine = delta.get(me, (0, 0))
    others = [d for t, d in delta.items() if t != me]
    o_ns, o_sl = sum(d[0] for d in others), sum(d[1] for d in others)
    print(f'THREADS loop={loop_name} workload={name} n={n} per_s={n / dt:.0f} '
          f'total_ns={(mine[0] + o_ns) / n:.0f} loop_ns={mine[0] / n:.0f} '
          f'loop_slices={mine[1] / n:.3f} others_ns={o_ns / n:.0f} '
          f'others_slices={o_sl / n:.3f} wall_s={wall:.2f}', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
