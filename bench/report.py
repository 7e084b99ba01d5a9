#!/usr/bin/env python3
"""bench/report.py — turn the RESULT lines written by bench/run.sh into a
markdown table of medians with libloop/libuv and libloop/libev ratios.

usage: report.py RAW_FILE HEADER_FILE OUT_MD
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
    return data


def main():
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
                 "Ratios below 1 mean libloop is faster / smaller.")
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
