# SPDX-License-Identifier: MIT
"""Summarise real_libs.sh's RESULT lines: per workload and placement
(pinned, unpinned), the median of each loop's runs (and their range), then
libloop's ratio against uvloop and against asyncio, both from the same run
(and, when real_libs.sh ran libloop-before, that build's against uvloop and
libloop's against it).

    python3 report_real.py RAWFILE HEADER.md      (markdown on stdout)

Every row is a throughput (per_s): a ratio above 1.00x means libloop did
more per second. Below the table, the CPU each loop's process spent per
operation (the client's for asyncpg and redis-py, uvicorn's per request).
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_net import BEFORE, LOOPS, cpu_line, median_cells, parse, ratio_cells  # noqa: E402

ORDER = ['pg1', 'pgpool', 'redis1', 'redispool', 'uvicorn']
WHAT = {
    'pg1': ('asyncpg, 1 connection', 'queries/s'),
    'pgpool': ('asyncpg, pool of 10, 200 tasks', 'queries/s'),
    'redis1': ('redis-py GET, 1 connection', 'ops/s'),
    'redispool': ('redis-py GET, pool of 10, 200 tasks', 'ops/s'),
    'uvicorn': ('uvicorn (h11) hello world, wrk -c50', 'requests/s'),
}
CPU = {  # the per-operation CPU figure of each workload
    'pg1': ('cpu_us', 'client CPU us per query'),
    'pgpool': ('cpu_us', 'client CPU us per query'),
    'redis1': ('cpu_us', 'client CPU us per GET'),
    'redispool': ('cpu_us', 'client CPU us per GET'),
    'uvicorn': ('srv_cpu_us', 'server CPU us per request'),
}
PINS = ['pinned', 'unpinned']


def main():
    rows = parse(sys.argv[1])
    # real_libs.sh's before/after comparison (BENCH_LOOPS with libloop-before)
    before = any(r['loop'] == BEFORE for r in rows)
    loops = LOOPS + [BEFORE] if before else LOOPS
    print(open(sys.argv[2]).read().rstrip())
    print()
    head = '| workload | placement | metric | ' + ' | '.join(loops) + ' | libloop / uvloop | libloop / asyncio |'
    if before:
        head += ' before / uvloop | libloop / before |'
    print(head)
    print('|---' * (head.count('|') - 1) + '|')
    extras = []
    for pin in PINS:
        for w in ORDER:
            name, unit = WHAT[w]
            sel = [r for r in rows if r['workload'] == w and r.get('pin') == pin]
            med, rng, cpu = {}, {}, {}
            for loop in loops:
                vals = [float(r['per_s']) for r in sel if r['loop'] == loop]
                if vals:
                    med[loop] = statistics.median(vals)
                    rng[loop] = (min(vals), max(vals), len(vals))
                key = CPU[w][0]
                cvals = [float(r[key]) for r in sel if r['loop'] == loop and key in r]
                if cvals:
                    cpu[loop] = statistics.median(cvals)
            if not med:
                continue
            cells = median_cells(med, rng, loops)
            print(f'| {name} | {pin} | {unit}, median (range) | ' + ' | '.join(cells)
                  + ratio_cells(med, False, before))
            if cpu:
                extras.append(cpu_line(f'{name}, {pin}: {CPU[w][1]}', cpu, loops))
    if extras:
        print()
        print('\n'.join(extras))


if __name__ == '__main__':
    main()
