# SPDX-License-Identifier: MIT
"""Count ctypes crossings (Python->C calls and C->Python callbacks) of the
task benchmark: python3 count_crossings.py [libloop|libloop-tm] [NTASKS STEPS]

Every ll_* function of libloop._lib is wrapped in a counter, and so are the
loop's trampolines (host queue, timers, thread-safe drain) and, for
libloop-tm, the task machine's step trampoline. Prints crossings per task
step and the split by function. Counting slows the run: no timings here.
"""

import asyncio
import collections
import sys

import libloop
from libloop import _lib, loop as loop_mod, scheduling, task_machine

counts = collections.Counter()


def wrap_calls():
    for name in dir(_lib):
        fn = getattr(_lib, name)
        if name.startswith('ll_') and callable(fn):
            def counted(*args, _fn=fn, _name=name):
                counts[_name] += 1
                return _fn(*args)
            setattr(_lib, name, counted)
            for mod in (task_machine, scheduling, loop_mod):
                for attr, val in list(vars(mod).items()):
                    if val is fn:
                        setattr(mod, attr, counted)


def wrap_callbacks():
    cls = libloop.EventLoop
    for name in ('_host_run', '_timer_fire', '_ts_fire'):
        orig = getattr(cls, name)

        def counted(self, *args, _orig=orig, _name=name):
            counts['callback ' + _name] += 1
            return _orig(self, *args)
        setattr(cls, name, counted)


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else 'libloop-tm'
    ntasks = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    wrap_calls()
    wrap_callbacks()
    loop = libloop.new_event_loop(task_machine=(kind == 'libloop-tm'))

    async def worker():
        for _ in range(steps):
            await asyncio.sleep(0)

    async def main_coro():
        await asyncio.gather(*(worker() for _ in range(ntasks)))
    loop.run_until_complete(main_coro())
    if loop._tm is not None:
        counts['callback step (ll_step_fn)'] = loop._tm.steps
    loop.close()
    total_steps = ntasks * steps
    total = sum(counts.values())
    print(f'{kind}: {ntasks} tasks x {steps} sleep(0): '
          f'{total} crossings, {total / total_steps:.3f} per step')
    for name, n in counts.most_common():
        print(f'  {name}: {n} ({n / total_steps:.4f} per step)')


if __name__ == '__main__':
    main()
