# SPDX-License-Identifier: MIT
"""What a Python event loop costs a process before it does any work: threads
and resident memory after its module is imported, and after one loop ran one
timer (driven by bench/run_footprint.sh, which adds the library sizes and the
10,000 idle connections, measured on bench_net.py's echo server).

    footprint.py LOOP      LOOP: asyncio | uvloop | libloop

One line per phase (the format of bench/footprint.c):
    RESULT impl=<py-LOOP> phase=<phase> threads=<n> rss_kib=<VmRSS> vsz_kib=<VmSize>
phases: start (the interpreter with asyncio imported: every loop needs it),
load (the loop's module imported: uvloop, libloop; asyncio: nothing more),
loop (a new loop ran until a 1 ms call_later fired, the loop still open),
closed (after loop.close()); each once the thread count has held for 200 ms
(as bench/footprint.c: a Go runtime finishes starting on its own thread).
"""

import asyncio
import os
import sys
import time


def status_kib(field):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    return -1


def threads():
    return len(os.listdir('/proc/self/task'))


def settle():
    """Wait until the thread count has held for 200 ms (at most 3 s)."""
    n, same = threads(), 0
    for _ in range(150):
        if same >= 10:
            break
        time.sleep(0.02)
        m = threads()
        same = same + 1 if m == n else 0
        n = m


def report(impl, phase):
    print(f'RESULT impl={impl} phase={phase} threads={threads()} '
          f'rss_kib={status_kib("VmRSS")} vsz_kib={status_kib("VmSize")}', flush=True)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ('asyncio', 'uvloop', 'libloop'):
        raise SystemExit('usage: footprint.py asyncio|uvloop|libloop')
    name = sys.argv[1]
    impl = 'py-' + name
    report(impl, 'start')
    if name == 'uvloop':
        import uvloop
        new_loop = uvloop.new_event_loop
    elif name == 'libloop':
        import libloop
        new_loop = libloop.new_event_loop
    else:
        new_loop = asyncio.SelectorEventLoop
    settle()
    report(impl, 'load')
    loop = new_loop()
    fired = []
    loop.call_later(0.001, lambda: (fired.append(1), loop.stop()))
    loop.run_forever()
    if not fired:
        raise SystemExit(f'{impl}: the timer did not fire')
    settle()
    report(impl, 'loop')
    loop.close()
    settle()
    report(impl, 'closed')


if __name__ == '__main__':
    main()
