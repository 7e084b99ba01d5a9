# SPDX-License-Identifier: MIT
"""Summarise bench_loops.py RESULT lines: medians per (workload, loop) and
ratios (asyncio/libloop = speed-up over asyncio; uvloop/libloop < 1 means
libloop is slower than uvloop); libloop-tm (task_machine=True) gets its own
table against the three. Usage: python3 report.py RAWFILE"""

import statistics
import sys


def parse(path):
    rows, header = [], []
    for line in open(path):
        if line.startswith('#'):
            header.append(line.rstrip())
            continue
        if 'RESULT' not in line:
            continue
        kv = dict(tok.split('=', 1) for tok in line.split() if '=' in tok)
        rows.append(kv)
    return header, rows


def main():
    header, rows = parse(sys.argv[1])
    med = {}
    for w in dict.fromkeys(r['workload'] for r in rows):
        for l in dict.fromkeys(r['loop'] for r in rows):
            sel = [r for r in rows if r['workload'] == w and r['loop'] == l]
            if sel:
                med[w, l] = {k: statistics.median(float(r[k]) for r in sel)
                             for k in ('ns_per_op', 'wall_s', 'cpu_s',
                                       'maxrss_mib', 'posts_per_s', 'cb_ns')
                             if k in sel[0]} | {'runs': len(sel)}
    print('\n'.join(header))
    print()
    print('| workload | metric | asyncio | uvloop | libloop | '
          'libloop speed-up vs asyncio | libloop vs uvloop |')
    print('|---|---|---|---|---|---|---|')
    for w in dict.fromkeys(k[0] for k in med):
        metric = 'cpu_s' if w == 'W3' else 'ns_per_op'
        label = {'cpu_s': 'CPU s', 'ns_per_op': 'ns/op (wall)'}[metric]
        vals = {l: med.get((w, l), {}).get(metric) for l in
                ('asyncio', 'uvloop', 'libloop')}
        fmt = (lambda v: '-' if v is None else
               (f'{v:.3f}' if metric == 'cpu_s' else f'{v:.0f}'))
        ll = vals['libloop']
        up = f"{vals['asyncio'] / ll:.2f}x" if ll and vals['asyncio'] else '-'
        vs = (f"{vals['uvloop'] / ll:.2f}x ({ll / vals['uvloop']:.2f}x the time)"
              if ll and vals['uvloop'] else '-')
        runs = med.get((w, 'libloop'), {}).get('runs', 0)
        print(f'| {w} | {label}, median of {runs} | {fmt(vals["asyncio"])} | '
              f'{fmt(vals["uvloop"])} | {fmt(ll)} | {up} | {vs} |')
    tm = {w: v for (w, l), v in med.items() if l == 'libloop-tm'}
    if tm:
        print()
        print('libloop-tm = libloop with task_machine=True (libloop.Task, '
              'stepped by the C task machine):')
        print()
        print('| workload | libloop-tm ns/op | vs asyncio | vs uvloop | '
              'vs libloop (asyncio.Task) |')
        print('|---|---|---|---|---|')
        for w, v in tm.items():
            t = v['ns_per_op']
            ratio = {l: med.get((w, l), {}).get('ns_per_op')
                     for l in ('asyncio', 'uvloop', 'libloop')}
            cells = [f'{ratio[l] / t:.2f}x ({t / ratio[l]:.2f}x the time)'
                     if ratio[l] else '-' for l in ratio]
            print(f'| {w} (median of {v["runs"]}) | {t:.0f} | ' +
                  ' | '.join(cells) + ' |')
    if any(k[0] == 'W3' for k in med):
        print()
        print('W3 wall s (includes the ~1 s over which the timers are due): ' +
              ', '.join(f"{l} {med[('W3', l)]['wall_s']:.3f}"
                        for l in ('asyncio', 'uvloop', 'libloop')
                        if ('W3', l) in med))
    if any(k[0] == 'W3' for k in med):
        print('Peak RSS MiB (W3): ' + ', '.join(
            f"{l} {med[('W3', l)]['maxrss_mib']:.1f}"
            for l in ('asyncio', 'uvloop', 'libloop') if ('W3', l) in med))
    if any(k[0] == 'W6' for k in med):
        print('W6 (posts from another thread): ' + '; '.join(
            f"{l} {med[('W6', l)]['posts_per_s'] / 1e6:.2f}M posts/s, "
            f"{med[('W6', l)]['cb_ns']:.0f} ns/callback, "
            f"CPU {med[('W6', l)]['cpu_s']:.3f} s"
            for l in ('asyncio', 'uvloop', 'libloop') if ('W6', l) in med))
    if any(k[0] == 'W2' for k in med):
        print('Peak RSS MiB (W2): ' + ', '.join(
            f"{l} {med[('W2', l)]['maxrss_mib']:.0f}"
            for l in ('asyncio', 'uvloop', 'libloop') if ('W2', l) in med))
    before = {w: v for (w, l), v in med.items() if l == 'libloop-before'}
    if before:
        print()
        print('libloop-before = libloop with LIBLOOP_BEFORE_LIBRARY (and '
              'LIBLOOP_BEFORE_PYTHON), interleaved with libloop in this run:')
        print()
        print('| workload | metric | before | after | after / before |')
        print('|---|---|---|---|---|')
        for w, b in before.items():
            a = med.get((w, 'libloop'))
            if not a:
                continue
            metric = 'cpu_s' if w == 'W3' else 'ns_per_op'
            print(f'| {w} | {metric}, median of {b["runs"]}/{a["runs"]} | '
                  f'{b[metric]:.4g} | {a[metric]:.4g} | '
                  f'{a[metric] / b[metric]:.3f} |')


if __name__ == '__main__':
    main()
