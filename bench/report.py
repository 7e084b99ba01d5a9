#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/report.py — turn the RESULT lines written by bench/run.sh into a
markdown table of medians with libloop/libuv and libloop/libev ratios, then
the issue-3 goals (W7 jobs/s against libuv; task steps against W1 ns per
callback of the same run).

usage: report.py RAW_FILE HEADER_FILE OUT_MD
       report.py --net RAW_FILE HEADER_FILE OUT_MD   (bench/run_net.sh: W4, W5, W10;
           every implementation found in the raw lines, and each libloop* one
           against the best rival of each row)
       report.py --udp RAW_FILE HEADER_FILE OUT_MD   (bench/run_udp.sh: datagrams/s
           received on one socket, 64 B and 1 KiB; the --net table)
       report.py --spawn RAW_FILE HEADER_FILE OUT_MD (bench/run_spawn.sh: W8, W8-1g;
           the same table, then each implementation's W8-1g rate ÷ its W8 rate)
       report.py --footprint RAW_FILE HEADER_FILE OUT_MD (bench/run_footprint.sh:
           library sizes, threads and RSS after load, after one loop, with
           idle connections; one row per implementation)
Standard library only.
"""
import re
import statistics
import sys

IMPLS = ["libuv", "libev", "libloop"]
# (workload, metric key, metric label, format)
ROWS = [
    ("W1", "ns_per_cb", "ns per callback", "{:.1f}"),
    ("W1-fd", "ns_per_cb", "ns per callback", "{:.1f}"),
    ("W2", "ns_per_cb", "ns per callback (incl. scheduling)", "{:.1f}"),
    ("W2", "sched_s", "of which scheduling, wall s", "{:.3f}"),
    ("W2", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("W2-inloop", "ns_per_cb", "ns per callback (incl. scheduling)", "{:.1f}"),
    ("W2-inloop", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("W3", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("W3", "wall_s", "wall s", "{:.3f}"),
    ("W3", "sched_s", "of which scheduling, wall s", "{:.3f}"),
    ("W3", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("W3c", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("W3c", "wall_s", "wall s", "{:.3f}"),
    ("W3c", "sched_s", "of which scheduling (+cancel), wall s", "{:.3f}"),
    ("W3c", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("W6", "posted_per_s", "posts/s from another thread (higher is better)", "{:.0f}"),
    ("W6", "ns_per_cb", "ns per callback, first post to the last one run", "{:.1f}"),
    ("W6", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("W7", "per_s", "jobs/s, default pools (higher is better)", "{:.0f}"),
    ("W7", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("W7", "sched_s", "of which submitting (libloop: + ll_gather), wall s", "{:.3f}"),
    ("W7", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("W7-4", "per_s", "jobs/s, 4 workers each (higher is better)", "{:.0f}"),
    ("W7-4", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("W7-4", "sched_s", "of which submitting (libloop: + ll_gather), wall s", "{:.3f}"),
    ("W7-4", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("W7q", "per_s", "jobs/s, ll_queue_work vs uv_queue_work, default pools (higher is better)", "{:.0f}"),
    ("W7q", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("W7q", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("W7q-4", "per_s", "jobs/s, ll_queue_work vs uv_queue_work, 4 workers each (higher is better)", "{:.0f}"),
    ("W7q-4", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("W7q-4", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("T-sleep", "ns_per_cb", "ns per task step (sleep(0) + await + release)", "{:.1f}"),
    ("T-sleep", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
    ("T-sleep", "rss_mib", "peak RSS MiB", "{:.1f}"),
    ("T-yield", "ns_per_cb", "ns per task step (ll_task_yield)", "{:.1f}"),
    ("T-yield", "cpu_s", "CPU s (user+sys)", "{:.3f}"),
]

# Issue 3's goals: (label, (impl, workload, key), (impl, workload, key),
# limit, "min" (ratio must be >= limit) or "max" (<= limit)).
GOALS = [
    ("W7 jobs/s, default pools (libloop ÷ libuv)", ("libloop", "W7", "per_s"),
     ("libuv", "W7", "per_s"), 1.0, "min"),
    ("W7-4 jobs/s, 4 workers each (libloop ÷ libuv)", ("libloop", "W7-4", "per_s"),
     ("libuv", "W7-4", "per_s"), 1.0, "min"),
    ("W7q jobs/s, ll_queue_work, default pools (libloop ÷ libuv)", ("libloop", "W7q", "per_s"),
     ("libuv", "W7q", "per_s"), 1.0, "min"),
    ("W7q-4 jobs/s, ll_queue_work, 4 workers each (libloop ÷ libuv)", ("libloop", "W7q-4", "per_s"),
     ("libuv", "W7q-4", "per_s"), 1.0, "min"),
    ("T-sleep ns/step ÷ libloop W1 ns/callback", ("libloop", "T-sleep", "ns_per_cb"),
     ("libloop", "W1", "ns_per_cb"), 2.0, "max"),
    ("T-sleep ns/step ÷ libuv W1 ns/callback", ("libloop", "T-sleep", "ns_per_cb"),
     ("libuv", "W1", "ns_per_cb"), 2.0, "max"),
    ("T-yield ns/step ÷ libloop W1 ns/callback", ("libloop", "T-yield", "ns_per_cb"),
     ("libloop", "W1", "ns_per_cb"), 2.0, "max"),
    ("T-yield ns/step ÷ libuv W1 ns/callback", ("libloop", "T-yield", "ns_per_cb"),
     ("libuv", "W1", "ns_per_cb"), 2.0, "max"),
]

LINE = re.compile(r"RESULT (.*)")


def parse(path):
    data = {}  # (impl, workload) -> metric -> [values]
    for line in open(path):
        m = LINE.search(line)
        if not m:
            continue
        kv = dict(p.split("=", 1) for p in m.group(1).split())
        key = (kv["impl"], kv["workload"])
        for k, v in kv.items():
            if k in ("impl", "workload"):
                continue
            data.setdefault(key, {}).setdefault(k, []).append(float(v))
        if kv["workload"] == "W6" and float(kv.get("sched_s", 0)) > 0:
            # W6's rate is the posting thread's: N / its posting time.
            data[key].setdefault("posted_per_s", []).append(float(kv["n"]) / float(kv["sched_s"]))
    return data


# Network workloads (bench/run_net.sh): (workload, key, label, format,
# "high" if a higher value is better else "low").
NET_ROWS = [
    ("W4", "per_s", "round trips/s (higher is better)", "{:.0f}", "high"),
    ("W4", "us_per_rt", "µs per round trip", "{:.2f}", "low"),
    ("W4", "cpu_s", "CPU s (user+sys)", "{:.3f}", "low"),
    ("W4", "user_us_per_rt", "user CPU µs per round trip", "{:.2f}", "low"),
    ("W4", "sys_us_per_rt", "kernel CPU µs per round trip", "{:.2f}", "low"),
    ("W4", "rss_mib", "peak RSS MiB", "{:.1f}", "low"),
    ("W4-2p", "per_s", "round trips/s, client in its own process (higher is better)", "{:.0f}", "high"),
    ("W4-2p", "us_per_rt", "µs per round trip", "{:.2f}", "low"),
    ("W4-2p", "srv_cpu_us_per_rt", "server CPU µs per round trip", "{:.2f}", "low"),
    ("W4-2p", "srv_user_us_per_rt", "server user CPU µs per round trip", "{:.2f}", "low"),
    ("W4-2p", "srv_sys_us_per_rt", "server kernel CPU µs per round trip", "{:.2f}", "low"),
    ("W5", "per_s", "round trips/s (higher is better)", "{:.0f}", "high"),
    ("W5", "p50_us", "p50 latency µs", "{:.0f}", "low"),
    ("W5", "p99_us", "p99 latency µs", "{:.0f}", "low"),
    ("W5", "srv_cpu_us_per_rt", "server CPU µs per round trip", "{:.2f}", "low"),
    ("W5", "srv_user_us_per_rt", "server user CPU µs per round trip", "{:.2f}", "low"),
    ("W5", "srv_sys_us_per_rt", "server kernel CPU µs per round trip", "{:.2f}", "low"),
    ("W5", "srv_rss_mib", "server peak RSS MiB", "{:.1f}", "low"),
    ("W5", "lg_cpu_s", "load generator CPU s (its own process)", "{:.3f}", "low"),
    ("W10", "per_conn_b", "server RSS growth per connection, bytes", "{:.0f}", "low"),
    ("W10", "rss_before_mib", "server RSS before connecting, MiB", "{:.1f}", "low"),
    ("W10", "rss_after_mib", "server RSS with every connection echoed, MiB", "{:.1f}", "low"),
    ("W10", "connect_s", "setting up + echoing every connection, s", "{:.2f}", "low"),
]
# Known implementations in display order; others follow alphabetically.
NET_ORDER = ["libuv", "libev", "libev-posix_spawn", "asyncio", "uvloop", "libloop", "libloop-py"]

NET_NOTE = ("Medians of the runs counted in the last column (each run its own server / "
            "program process, implementations interleaved within every repetition). "
            "\"÷ best rival\" divides libloop's median by the best rival's median of that row "
            "(the highest for rates, the lowest otherwise; the rival is named): above 1 is "
            "better for libloop in the rates (round trips/s), below 1 is better everywhere "
            "else. — : not run.")

# UDP workloads (bench/run_udp.sh), as NET_ROWS.
UDP_ROWS = []
for _wl in ("UDP-64", "UDP-1024"):
    UDP_ROWS += [
        (_wl, "per_s", "datagrams/s received (higher is better)", "{:.0f}", "high"),
        (_wl, "rcv_cpu_us_per_dgram", "receiver CPU µs per datagram", "{:.3f}", "low"),
        (_wl, "lost", "datagrams lost (of n)", "{:.0f}", "low"),
        (_wl, "lg_cpu_s", "sender CPU s (its own process)", "{:.3f}", "low"),
    ]

UDP_NOTE = ("Medians of the runs counted in the last column (each run a fresh receiver "
            "process; the sender, bench/udp_load, is the same program for every row; "
            "implementations interleaved within every repetition). \"÷ best rival\" divides "
            "libloop's median by the best rival's median of that row: above 1 is better for "
            "libloop in datagrams/s, below 1 everywhere else. libuv reads with recvmmsg "
            "(UV_UDP_RECVMMSG, 20 per call), libev's receiver with recvmmsg written by hand (32), "
            "libloop with recvmmsg (32). — : not run.")

# Subprocess workloads (bench/run_spawn.sh), as NET_ROWS.
SPAWN_ROWS = []
for _wl, _what in (("W8", ""), ("W8-1g", ", parent holding the ballast")):
    SPAWN_ROWS += [
        (_wl, "per_s", "spawns/s{} (higher is better)".format(_what), "{:.0f}", "high"),
        (_wl, "us_per_spawn", "µs per spawn (wall ÷ N)", "{:.0f}", "low"),
        (_wl, "cpu_s", "parent CPU s (user+sys)", "{:.3f}", "low"),
        (_wl, "child_cpu_s", "children's CPU s (user+sys)", "{:.3f}", "low"),
        (_wl, "rss_mib", "parent peak RSS MiB", "{:.1f}", "low"),
    ]
SPAWN_ROWS.insert(5, ("W8-1g", "ballast_mib", "ballast MiB (allocated and memset before the region)", "{:.0f}", "none"))

SPAWN_NOTE = ("Medians of the runs counted in the last column (each run its own process, "
              "implementations interleaved within every repetition). \"÷ best rival\" divides "
              "libloop's median by the best rival's median of that row (the highest for rates, "
              "the lowest otherwise; the rival is named): above 1 is better for libloop in the "
              "spawns/s rows, below 1 is better everywhere else. libuv 1.44 and libev start "
              "children with fork(), libev-posix_spawn and libloop with a vfork-style "
              "clone(CLONE_VM|CLONE_VFORK). — : not run.")


def spawn_moves(data, impls):
    """Each implementation's W8-1g spawns/s ÷ its W8 spawns/s (medians)."""
    lines = []
    for i in impls:
        a = data.get((i, "W8"), {}).get("per_s")
        b = data.get((i, "W8-1g"), {}).get("per_s")
        if not a or not b:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        pc = data.get((i, "W8-1g"), {}).get("cpu_s")
        pa = data.get((i, "W8"), {}).get("cpu_s")
        lines.append("| {} | {:.0f} | {:.0f} | {:.2f}× | {} |".format(
            i, ma, mb, mb / ma,
            "{:.3f} → {:.3f}".format(statistics.median(pa), statistics.median(pc)) if pa and pc else "—"))
    if not lines:
        return []
    big = [v for i in impls for v in data.get((i, "W8-1g"), {}).get("ballast_mib", [])]
    return ["", "How the rate moves when the parent holds {:.0f} MiB (W8-1g ÷ W8, medians; "
            "below 1: slower with a large parent):".format(max(big) if big else 0), "",
            "| implementation | W8 spawns/s | W8-1g spawns/s | W8-1g ÷ W8 | parent CPU s, W8 → W8-1g |",
            "|---|---:|---:|---:|---:|"] + lines


def net_main(raw, header, out, rows=NET_ROWS, note=NET_NOTE, extra=None):
    data = parse(raw)
    found = {impl for impl, _ in data}
    impls = [i for i in NET_ORDER if i in found] + sorted(found - set(NET_ORDER))
    ours = [i for i in impls if i.startswith("libloop")]
    rivals = [i for i in impls if not i.startswith("libloop")]
    lines = [open(header).read().rstrip("\n"), ""]
    cols = impls + ["{} ÷ best rival".format(o) for o in ours] + ["{} min–max".format(o) for o in ours] + ["runs"]
    lines.append("| workload | metric | " + " | ".join(cols) + " |")
    lines.append("|---|---|" + "---:|" * len(cols))
    for wl, key, label, fmt, better in rows:
        vals = {i: data.get((i, wl), {}).get(key) for i in impls}
        med = {i: statistics.median(v) for i, v in vals.items() if v}
        if not med:
            continue
        cells = [fmt.format(med[i]) if i in med else "—" for i in impls]
        pick = max if better == "high" else min
        have = [r for r in rivals if r in med]
        best = pick(have, key=lambda r: med[r]) if have else None
        for o in ours:
            if o in med and best is not None and med[best] and better != "none":
                cells.append("{:.2f}× ({})".format(med[o] / med[best], best))
            else:
                cells.append("—")
        for o in ours:
            v = vals.get(o)
            cells.append(fmt.format(min(v)) + "–" + fmt.format(max(v)) if v else "—")
        cells.append(str(min(len(v) for v in vals.values() if v)))
        lines.append("| {} | {} | {} |".format(wl, label, " | ".join(cells)))
    lines.append("")
    lines.append(note)
    if extra is not None:
        lines.extend(extra(data, impls))
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    sys.stdout.write(text)


# Footprint (bench/run_footprint.sh): implementations in display order.
FOOT_ORDER = ["libuv", "libev", "libloop", "py-asyncio", "py-uvloop", "py-libloop"]

FOOT_NOTE = ("Library: the shared objects the implementation loads (uvloop: its loop module "
             "and libuv; asyncio: its C accelerator _asyncio, the rest is the standard "
             "library's Python; libloop from Python: libloop.so and libloop-cpython.so), as "
             "found and after `strip`. Threads: entries of /proc/PID/task, the host's own "
             "thread included. C rows: a host that dlopens the library (bench/footprint.c); "
             "Python rows: the interpreter with asyncio imported, then the loop's module "
             "(libloop's Python package loads libloop.so at its first loop, so its load "
             "column is the import alone). \"+ load\": VmRSS after loading minus before; "
             "\"one loop\": VmRSS after a loop ran one 1 ms timer (the loop still open) minus "
             "the start. Idle: an echo server (bench/net_*, bench/python/bench_net.py) "
             "listening, then holding the idle connections; RSS per connection = its growth "
             "÷ connections. Medians of the runs.")


def foot_parse(path):
    data = {}  # (impl, phase) -> metric -> [values]
    files = {}
    for line in open(path):
        m = LINE.search(line)
        if not m:
            continue
        kv = dict(p.split("=", 1) for p in m.group(1).split())
        key = (kv.pop("impl"), kv.pop("phase"))
        if "files" in kv:
            files[key[0]] = kv.pop("files")
        for k, v in kv.items():
            data.setdefault(key, {}).setdefault(k, []).append(float(v))
    return data, files


def foot_main(raw, header, out):
    data, files = foot_parse(raw)
    impls = [i for i in FOOT_ORDER if any(k[0] == i for k in data)]
    impls += sorted({k[0] for k in data} - set(impls))

    def med(impl, phase, key):
        vals = data.get((impl, phase), {}).get(key)
        return statistics.median(vals) if vals else None

    def mib(kib):
        return "—" if kib is None else "{:.1f}".format(kib / 1024)

    def size(b):
        return "—" if b is None else "{:.2f} MB".format(b / 1e6) if b >= 1e6 else "{:.0f} kB".format(b / 1e3)

    def num(v, fmt="{:.0f}"):
        return "—" if v is None else fmt.format(v)

    def delta(impl, phase):
        a, b = med(impl, phase, "rss_kib"), med(impl, "start", "rss_kib")
        return None if a is None or b is None else a - b

    conns = med(impls[0], "idle", "n") if impls else None
    lines = [open(header).read().rstrip("\n"), ""]
    lines.append("| implementation | library | stripped | threads: start / load / one loop / closed "
                 "| RSS at start MiB | + load MiB | + one loop MiB "
                 "| idle server: threads listening / with {} conns | RSS listening MiB | RSS with {} conns MiB "
                 "| RSS per conn, bytes | files |".format(num(conns), num(conns)))
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for i in impls:
        threads = " / ".join(num(med(i, p, "threads")) for p in ("start", "load", "loop", "closed"))
        idle_t = "{} / {}".format(num(med(i, "idle", "threads_before")), num(med(i, "idle", "threads")))
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            i, size(med(i, "size", "file_b")), size(med(i, "size", "stripped_b")), threads,
            mib(med(i, "start", "rss_kib")), mib(delta(i, "load")), mib(delta(i, "loop")), idle_t,
            mib(med(i, "idle", "rss_before_kib")), mib(med(i, "idle", "rss_kib")),
            num(med(i, "idle", "per_conn_b")), files.get(i, "—")))
    lines.append("")
    lines.append(FOOT_NOTE)
    open(out, "w").write("\n".join(lines) + "\n")


def main():
    if sys.argv[1] == "--footprint":
        foot_main(*sys.argv[2:5])
        return
    if sys.argv[1] == "--net":
        net_main(*sys.argv[2:5])
        return
    if sys.argv[1] == "--udp":
        net_main(*sys.argv[2:5], rows=UDP_ROWS, note=UDP_NOTE)
        return
    if sys.argv[1] == "--spawn":
        net_main(*sys.argv[2:5], rows=SPAWN_ROWS, note=SPAWN_NOTE, extra=spawn_moves)
        return
    raw, header, out = sys.argv[1:4]
    data = parse(raw)
    lines = [open(header).read().rstrip("\n"), ""]
    lines.append("| workload | metric | libuv | libev | libloop | libloop/libuv | libloop/libev | libloop min–max | runs |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for wl, key, label, fmt in ROWS:
        med = {}
        runs = []
        for impl in IMPLS:
            vals = data.get((impl, wl), {}).get(key)
            if vals:
                med[impl] = statistics.median(vals)
                runs.append(len(vals))
        if not med:
            continue
        cells = [fmt.format(med[i]) if i in med else "—" for i in IMPLS]

        def ratio(other):
            if "libloop" in med and med.get(other):
                return "{:.2f}×".format(med["libloop"] / med[other])
            return "—"

        ll = data.get(("libloop", wl), {}).get(key, [])
        spread = (fmt.format(min(ll)) + "–" + fmt.format(max(ll))) if ll else "—"
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            wl, label, *cells, ratio("libuv"), ratio("libev"), spread, min(runs)))
    lines.append("")
    lines.append("Medians of the runs counted in the last column; each run is its own process, "
                 "implementations interleaved (libuv, libev, libloop) within every repetition. "
                 "Ratios below 1 mean libloop is faster / smaller, except in the jobs/s rows "
                 "(a rate: there a ratio below 1 means libloop is slower). "
                 "— : not applicable (libev has no thread pool; neither rival has tasks) "
                 "or not run.")

    def med(impl, wl, key):
        vals = data.get((impl, wl), {}).get(key)
        return statistics.median(vals) if vals else None

    goal_lines = []
    for label, num, den, limit, kind in GOALS:
        a, b = med(*num), med(*den)
        if a is None or b is None or b == 0:
            continue
        r = a / b
        met = r >= limit if kind == "min" else r <= limit
        fmt = "{:.0f}" if num[2] == "per_s" else "{:.1f}"
        goal_lines.append("| {} | {} | {} | {:.2f}× | {} {:.1f}× | {} |".format(
            label, fmt.format(a), fmt.format(b), r, "≥" if kind == "min" else "≤", limit,
            "met" if met else "**not met**"))
    if goal_lines:
        lines.append("")
        lines.append("Issue 3 goals (medians of this run):")
        lines.append("")
        lines.append("| | libloop | reference | ratio | goal | |")
        lines.append("|---|---:|---:|---:|---:|---|")
        lines.extend(goal_lines)
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
