# SPDX-License-Identifier: MIT
"""Summarise run_net.sh's RESULT lines: per workload, the median of each
loop's runs (and their range), then libloop's ratio against uvloop and
against asyncio, both from the same run.

    python3 report_net.py RAWFILE HEADER.md      (markdown on stdout)

Throughput workloads (W4, W5p, W5s, W9, W8) compare per_s: a ratio above
1.00x means libloop did more per second. W10 compares per_conn_b (server
RSS growth per idle connection): there a ratio below 1.00x means libloop
used less memory. CPU per operation (below the table) is what a busy,
shared machine disturbs least: throughput there also depends on how the
scheduler shares the cores between the server and its load generator.
"""

import statistics
import sys

ORDER = ['W4', 'W5p', 'W5s', 'W9', 'W10', 'W8']
WHAT = {
    'W4': ('round trips/s', 'per_s'),
    'W5p': ('round trips/s', 'per_s'),
    'W5s': ('round trips/s', 'per_s'),
    'W9': ('requests/s', 'per_s'),
    'W10': ('bytes per connection', 'per_conn_b'),
    'W8': ('spawns/s', 'per_s'),
}
EXTRA = {  # a second figure shown per loop, where the run has it
    'W4': ('cpu_us', 'process CPU us per round trip (both ends)'),
    'W5p': ('srv_cpu_us', 'server CPU us per round trip'),
    'W5s': ('srv_cpu_us', 'server CPU us per round trip'),
    'W9': ('srv_cpu_us', 'server CPU us per request'),
    'W8': ('cpu_us', 'parent CPU us per spawn'),
}
LOOPS = ['asyncio', 'uvloop', 'libloop']
BEFORE = 'libloop-before'  # run_net.sh's before/after comparison, when run


def parse(path):
    rows = []
    for line in open(path):
        if line.startswith('RESULT '):
            rows.append(dict(tok.split('=', 1) for tok in line.split()[1:] if '=' in tok))
    return rows


def fmt(x):
    return f'{x:,.0f}' if abs(x) >= 100 else f'{x:.1f}'


def ratio(a, b, lower_better):
    if not b:
        return '-'
    r = a / b
    note = ' (less memory)' if lower_better and r < 1 else ''
    return f'{r:.2f}x{note}'


def median_cells(med, rng, loops):
    """Each loop's median with its range and count, '-' where not run."""
    return [f'{fmt(med[l])} ({fmt(rng[l][0])}-{fmt(rng[l][1])}, n={rng[l][2]})'
            if l in med else '-' for l in loops]


def ratio_cells(med, lower_better, before):
    """A row's ratio columns: libloop / uvloop, libloop / asyncio and, in a
    before/after run, before / uvloop and libloop / before."""
    ll = med.get('libloop')
    out = [ratio(ll, med.get('uvloop'), lower_better) if ll is not None else '-',
           ratio(ll, med.get('asyncio'), lower_better) if ll is not None else '-']
    if before:
        bf = med.get(BEFORE)
        out += [ratio(bf, med.get('uvloop'), lower_better) if bf is not None else '-',
                ratio(ll, bf, lower_better) if ll is not None and bf is not None else '-']
    return ' | ' + ' | '.join(out) + ' |'


def cpu_line(label, per, loops):
    """A line of CPU per operation by loop, with libloop's ratio to uvloop's
    and asyncio's where both were measured."""
    line = f'- {label} (median): ' + ', '.join(f'{l} {per[l]:.1f}' for l in loops if l in per)
    if per.get('libloop') and per.get('uvloop'):
        line += f"; libloop uses {per['libloop'] / per['uvloop']:.2f}x uvloop's CPU"
    if per.get('libloop') and per.get('asyncio'):
        line += f", {per['libloop'] / per['asyncio']:.2f}x asyncio's"
    return line


def main():
    rows = parse(sys.argv[1])
    before = any(r['loop'] == BEFORE for r in rows)
    loops = LOOPS + [BEFORE] if before else LOOPS
    print(open(sys.argv[2]).read().rstrip())
    print()
    head = '| workload | metric | ' + ' | '.join(loops) + ' | libloop / uvloop | libloop / asyncio |'
    if before:
        head += ' before / uvloop | libloop / before |'
    print(head)
    print('|---' * (head.count('|') - 1) + '|')
    extras = []
    for w in ORDER:
        label, key = WHAT[w]
        med, rng = {}, {}
        for loop in loops:
            vals = [float(r[key]) for r in rows if r['workload'] == w and r['loop'] == loop]
            if vals:
                med[loop] = statistics.median(vals)
                rng[loop] = (min(vals), max(vals), len(vals))
        if not med:
            continue
        cells = median_cells(med, rng, loops)
        print(f'| {w} | {label}, median (range) | ' + ' | '.join(cells) + ratio_cells(med, w == 'W10', before))
        if w in EXTRA:
            k, what = EXTRA[w]
            per = {l: statistics.median(float(r[k]) for r in rows
                                        if r['workload'] == w and r['loop'] == l and k in r)
                   for l in loops if any(r['workload'] == w and r['loop'] == l and k in r
                                         for r in rows)}
            extras.append(cpu_line(f'{w} {what}', per, loops))
    if extras:
        print()
        print('\n'.join(extras))


if __name__ == '__main__':
    main()
