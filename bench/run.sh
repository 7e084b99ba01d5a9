#!/usr/bin/env bash
# bench/run.sh — build the W1/W2/W3 benchmark programs and run them against
# libuv and libev, interleaved, then write bench/results/latest.md (medians and
# ratios; also printed). Run through `make bench` (which builds build/libloop.so
# first) or directly from anywhere.
#
# Environment:
#   BENCH_REPS  repetitions of every (workload, implementation) pair (default 7, min 5)
#   BENCH_N     number of callbacks / timers (default 1000000; must be even)
#   BENCH_WORKLOADS  space-separated subset of "W1 W1-fd W2 W2-inloop W3 W3c"
#   LIBLOOP_LIB_DIR  directory holding the libloop.so to measure (default build/;
#               e.g. a private build of a given commit while build/ is being rebuilt)
#   LIBLOOP_LABEL    what that libloop.so was built from (default: this tree's commit)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

REPS="${BENCH_REPS:-7}"
N="${BENCH_N:-1000000}"
WORKLOADS="${BENCH_WORKLOADS:-W1 W1-fd W2 W2-inloop W3 W3c}"
CC="${CC:-gcc}"
BIN="$ROOT/build/bench"
RES="$ROOT/bench/results"
PYTHON="${PYTHON:-python3}"
LIBDIR="$(cd "${LIBLOOP_LIB_DIR:-$ROOT/build}" 2>/dev/null && pwd || echo "${LIBLOOP_LIB_DIR:-$ROOT/build}")"

if [ "$REPS" -lt 5 ]; then
    echo "BENCH_REPS must be >= 5 (medians of at least 5 runs)" >&2
    exit 2
fi
if [ ! -f "$LIBDIR/libloop.so" ]; then
    if [ -n "${LIBLOOP_LIB_DIR:-}" ]; then
        echo "no libloop.so in $LIBDIR" >&2
        exit 2
    fi
    make lib
fi

mkdir -p "$BIN" "$RES"
CFLAGS="-O2 -Wall -Wextra -Iinclude"
$CC $CFLAGS bench/bench_uv.c -o "$BIN/bench_uv" -luv
$CC $CFLAGS bench/bench_ev.c -o "$BIN/bench_ev" -lev
$CC $CFLAGS bench/bench_ll.c -o "$BIN/bench_ll" -L"$LIBDIR" -lloop -Wl,-rpath,"$LIBDIR"

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
raw="$RES/raw-$stamp.txt"
header="$RES/header-$stamp.md"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "bench: $REPS repetitions of [$WORKLOADS] x [libuv libev libloop], N=$N; raw lines in $raw"
for k in $(seq 1 "$REPS"); do
    for w in $WORKLOADS; do
        for impl in uv ev ll; do
            line="$("$BIN/bench_$impl" "$w" "$N")"
            echo "$line rep=$k" >>"$raw"
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

commit="commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain -- libloop capi include 2>/dev/null)" ]; then
    commit="$commit (+ uncommitted changes in libloop/ capi/ include/)"
fi
commit="${LIBLOOP_LABEL:-$commit}"
{
    echo "# libloop vs libuv vs libev: W1, W2, W3 (from C)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- libloop: $("$BIN/bench_ll" version), $commit; $LIBDIR/libloop.so built $(date -u -r "$LIBDIR/libloop.so" '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- go: $(go version 2>/dev/null || echo unknown)"
    echo "- gcc: $($CC --version | head -1)"
    echo "- kernel: $(uname -r), $(nproc) CPUs"
    echo "- libuv: $("$BIN/bench_uv" version), libev: $("$BIN/bench_ev" version)"
    echo "- N = $N, $REPS interleaved repetitions"
    echo "- load average (1/5/15 min) at start: $load_start; at end: $load_end"
} >"$header"

"$PYTHON" bench/report.py "$raw" "$header" "$RES/latest.md"
cp "$raw" "$RES/latest-raw.txt"
echo "wrote $RES/latest.md"
