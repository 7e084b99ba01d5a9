# SPDX-License-Identifier: MIT
"""One benchmark run: python3 bench_loops.py LOOP WORKLOAD [N].

LOOP: asyncio | uvloop | libloop | libloop-tm (libloop with task_machine=True:
tasks are libloop.Task, stepped by libloop's C task machine).
WORKLOAD: W1 | W2 | W3 | W6 | tasks.
Prints one line: RESULT loop=.. workload=.. n=.. wall_s=.. cpu_s=.. ns_per_op=..
W1: N call_soon callbacks, each scheduling the next (one per iteration).
W2: N call_soon scheduled up front from a first callback, then run.
W3: N call_later timers, timer i after i/1000 ms, no-op callbacks.
W6: a second thread posts N call_soon_threadsafe callbacks as fast as it can
    while the loop runs; each counts, the Nth stops the loop. Adds
    posts_per_s (N / the posting thread's time) and cb_ns (first post to the
    last callback run, / N); ns_per_op is the whole run / N.
tasks: 10,000 tasks each awaiting asyncio.sleep(0) 100 times (N ignored).
"""

import asyncio
import resource
import sys
import threading
import time


def make_loop(name):
    if name == "asyncio":
        return asyncio.SelectorEventLoop()
    if name == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    if name == "libloop":
        import libloop
        return libloop.new_event_loop()
    if name == "libloop-tm":
        import libloop
        return libloop.new_event_loop(task_machine=True)
    raise SystemExit(f"unknown loop {name}")


def w1(loop, n):
    count = 0

    def cb():
        nonlocal count
        count += 1
        if count < n:
            loop.call_soon(cb)
        else:
            loop.stop()
    loop.call_soon(cb)
    loop.run_forever()
    assert count == n, count


def w2(loop, n):
    count = 0

    def cb():
        nonlocal count
        count += 1
        if count == n:
            loop.stop()

    def start():
        for _ in range(n):
            loop.call_soon(cb)
    loop.call_soon(start)
    loop.run_forever()
    assert count == n, count


def w3(loop, n):
    count = 0

    def cb():
        nonlocal count
        count += 1
        if count == n:
            loop.stop()

    def start():
        for i in range(n):
            loop.call_later(i / 1e6, cb)
    loop.call_soon(start)
    loop.run_forever()
    assert count == n, count


def w6(loop, n):
    count = 0
    t = {}

    def cb():
        nonlocal count
        count += 1
        if count == n:
            t['last'] = time.perf_counter()
            loop.stop()

    def poster():
        post = loop.call_soon_threadsafe
        t0 = time.perf_counter()
        for _ in range(n):
            post(cb)
        t['post'] = time.perf_counter() - t0
        t['first'] = t0

    th = threading.Thread(target=poster)
    # Start the poster from a callback: the loop is running when it posts.
    loop.call_soon(th.start)
    loop.run_forever()
    th.join()
    assert count == n, count
    return n, {'posts_per_s': f"{n / t['post']:.0f}",
               'cb_ns': f"{(t['last'] - t['first']) / n * 1e9:.1f}"}


def tasks(loop, n):
    ntasks, steps = 10_000, 100

    async def worker():
        for _ in range(steps):
            await asyncio.sleep(0)

    async def main():
        await asyncio.gather(*(worker() for _ in range(ntasks)))
    loop.run_until_complete(main())
    return ntasks * steps


def main():
    loop_name, workload = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
    fn = {"W1": w1, "W2": w2, "W3": w3, "W6": w6, "tasks": tasks}[workload]
    loop = make_loop(loop_name)
    asyncio.set_event_loop(loop)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    ops = fn(loop, n) or n
    extra = {}
    if isinstance(ops, tuple):
        ops, extra = ops
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    loop.close()
    print(f"RESULT loop={loop_name} workload={workload} n={ops} "
          f"wall_s={wall:.4f} cpu_s={cpu:.4f} ns_per_op={wall / ops * 1e9:.1f} "
          f"maxrss_mib={r1.ru_maxrss / 1024:.1f} python={sys.version.split()[0]}"
          + ''.join(f" {k}={v}" for k, v in extra.items()))


if __name__ == "__main__":
    main()
