#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/chart.py — one PNG showing libloop against each peer, from the raw
RESULT lines the bench runners write (bench/run.sh, run_net.sh,
run_spawn.sh: `RESULT impl=.. workload=..`; bench/python/run.sh:
`RESULT loop=.. workload=..`; bench/python/real_libs.sh, the real libraries
against real servers: `RESULT loop=.. workload=.. pin=..`, a row per
workload and placement, its throughput per_s, labelled as
bench/python/report_real.py labels its table).

Each row is one workload's headline metric; each bar is one peer, at
"how many times better libloop's median is than that peer's" (the peer's
time ÷ libloop's, or libloop's rate ÷ the peer's), on a log scale: right of
1 libloop is better, left of it the peer is. The medians are the same ones
bench/report.py puts in the tables.

usage: chart.py OUT.png RAW_FILE...
Needs matplotlib (Debian: python3-matplotlib); exits 3 without it.
"""
import os
import re
import statistics
import sys

# workload -> (metric key, label, True if higher is better)
HEADLINE = {
    "W1": ("ns_per_cb", "W1 callback chain, ns/callback", False),
    "W1-fd": ("ns_per_cb", "W1-fd W1 with an idle fd watched, ns/callback", False),
    "W2": ("ns_per_cb", "W2 1M call_soon, then run, ns/callback", False),
    "W2-inloop": ("ns_per_cb", "W2-inloop the same from a callback, ns/callback", False),
    # W3's wall time is mostly its timers' own spread: its CPU time is the cost.
    "W3": ("cpu_s", "W3 1M timers, CPU s", False),
    "W3c": ("cpu_s", "W3c 1M timers, half cancelled, CPU s", False),
    "W6": ("ns_per_cb", "W6 cross-thread posts, ns/callback", False),
    "W7": ("per_s", "W7 executor, jobs/s", True),
    "W7-4": ("per_s", "W7-4 executor, 4 workers, jobs/s", True),
    "W7q": ("per_s", "W7q queue_work, jobs/s", True),
    "W7q-4": ("per_s", "W7q-4 queue_work, 4 workers, jobs/s", True),
    "W4": ("per_s", "W4 TCP echo, 1 conn, round trips/s", True),
    # W5's load generator sets the rate: the server's CPU per round trip differs.
    "W5": ("srv_cpu_us_per_rt", "W5 TCP echo, many conns, server CPU µs/round trip", False),
    "W10": ("per_conn_b", "W10 server memory, bytes/connection", False),
    "W8": ("per_s", "W8 spawn, spawns/s", True),
    "W8-1g": ("per_s", "W8-1g spawn, 1 GiB parent, spawns/s", True),
}
PY_METRIC = ("ns_per_op", False)  # bench/python: every workload in ns/op
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from report_real import ORDER as REAL_ORDER, PINS as REAL_PINS, WHAT as REAL_WHAT  # noqa: E402
REAL_METRIC = ("per_s", True)  # bench/python/real_libs.sh: every workload a throughput
SECTIONS = ["C", "Python", "Real"]  # the chart's order of row groups
PEER_COLORS = {"libuv": "#4c72b0", "libev": "#55a868", "libev-posix_spawn": "#8fd19e",
               "asyncio": "#c44e52", "uvloop": "#8172b2"}
LINE = re.compile(r"RESULT (.*)")


def parse(paths):
    """{(section, impl, workload): {metric: [values]}} from raw files."""
    data = {}
    for path in paths:
        for line in open(path):
            m = LINE.search(line)
            if not m:
                continue
            kv = dict(p.split("=", 1) for p in m.group(1).split() if "=" in p)
            workload = kv["workload"]
            if "loop" in kv and "pin" in kv:  # bench/python/real_libs.sh
                section, impl = "Real", kv["loop"]
                workload = (workload, kv["pin"])
            elif "loop" in kv:  # bench/python
                section, impl = "Python", kv["loop"]
            else:
                section, impl = "C", kv["impl"]
            for k, v in kv.items():
                try:
                    data.setdefault((section, impl, workload), {}).setdefault(k, []).append(float(v))
                except ValueError:
                    pass
    return data


def rows(data):
    """[(label, [(peer, advantage, libloop median, peer median)])], in HEADLINE order."""
    out = []
    def order(sw):
        section, wl = sw
        if section == "Real":
            name, pin = wl
            return (2, REAL_PINS.index(pin) if pin in REAL_PINS else 9,
                    REAL_ORDER.index(name) if name in REAL_ORDER else 99, name)
        return (SECTIONS.index(section), 0, list(HEADLINE).index(wl) if wl in HEADLINE else 99, wl)

    workloads = sorted({(s, w) for s, _, w in data}, key=order)
    for section, wl in workloads:
        if section == "C":
            if wl not in HEADLINE:
                continue
            key, label, higher = HEADLINE[wl]
        elif section == "Real":
            key, higher = REAL_METRIC
            name, pin = wl
            what, unit = REAL_WHAT.get(name, (name, "ops/s"))
            label = f"{what} ({pin}), {unit}"
        else:
            key, higher = PY_METRIC
            label = f"Python {wl}, ns/op"
        impls = {i for s, i, w in data if s == section and w == wl}
        ours = data.get((section, "libloop", wl), {}).get(key)
        if not ours:
            continue
        ll = statistics.median(ours)
        bars = []
        order = list(PEER_COLORS)
        for peer in sorted(impls, key=lambda i: (order.index(i) if i in order else 99, i)):
            if peer.startswith("libloop"):
                continue
            vals = data[(section, peer, wl)].get(key)
            if not vals or not ll:
                continue
            pm = statistics.median(vals)
            if pm <= 0:
                continue
            bars.append((peer, ll / pm if higher else pm / ll, ll, pm))
        if bars:
            out.append((label, bars))
    return out


def provenance(paths):
    """One line per raw file: its name and, where a report beside it says, the commit."""
    lines = []
    for path in paths:
        d, name = os.path.split(path)
        cands = [name.replace("raw-", "header-").replace(".txt", ".md"),
                 name.replace("-raw.txt", ".md"), name.replace("-raw.txt", "-latest.md")]
        note = ""
        for c in cands:
            p = os.path.join(d, c)
            if c != name and os.path.exists(p):
                for line in open(p):
                    if line.startswith("- libloop:") or line.startswith("# libloop:"):
                        note = line.lstrip("-# ").strip()
                        break
                if note:
                    break
        lines.append(f"{name}: {note}" if note else name)
    return lines


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().split("\n\n")[2], file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedLocator, NullLocator
    except ImportError:
        print("bench chart: matplotlib is missing (apt-get install python3-matplotlib)")
        return 3
    out, paths = sys.argv[1], sys.argv[2:]
    table = rows(parse(paths))
    if not table:
        print("bench chart: no workload with libloop and a peer in " + " ".join(paths))
        return 1

    nbars = sum(len(b) for _, b in table)
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.32 * nbars + 0.25 * len(table)))
    y, ticks, labels, seen = 0.0, [], [], set()
    lo, hi = 1.0, 1.0
    for label, bars in table:
        top = y
        for peer, adv, ll, pm in bars:
            color = PEER_COLORS.get(peer, "#999999")
            # From 1 (even) to the ratio: right is libloop ahead, left behind.
            ax.barh(y, adv - 1, left=1, height=0.8, color=color,
                    label=None if peer in seen else peer)
            seen.add(peer)
            ax.text(adv * (1.04 if adv >= 1 else 0.96), y, f"{adv:.2f}×",
                    va="center", ha="left" if adv >= 1 else "right", fontsize=8)
            lo, hi = min(lo, adv), max(hi, adv)
            y += 1
        ticks.append((top + y - 1) / 2)
        labels.append(label)
        y += 0.6
    ax.set_xscale("log")
    ax.set_xlim(min(lo / 1.6, 0.5), max(hi * 1.6, 2))
    marks = [m for m in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32) if lo / 1.6 <= m <= hi * 1.6 or m in (0.5, 1, 2)]
    ax.xaxis.set_major_locator(FixedLocator(marks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{m:g}×" for m in marks])
    ax.axvline(1, color="black", linewidth=1)
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel("how many times better libloop's median is than the peer's (log scale; right of 1: libloop better)")
    ax.set_title("libloop against each peer: medians of interleaved runs (tables: bench/results/*.md)", fontsize=10)
    ax.legend(title="peer", loc="lower right", fontsize=8)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    fig.text(0.01, 0.005, "\n".join(provenance(paths)), fontsize=6, va="bottom", color="#555555")
    fig.tight_layout(rect=(0, 0.02 + 0.012 * len(paths), 1, 1))
    fig.savefig(out, dpi=110)
    print(f"bench chart: {out} ({len(table)} workloads, {nbars} bars)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
