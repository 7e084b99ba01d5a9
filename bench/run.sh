#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh — build the benchmark programs (W1, W2, W3, W7 and libloop's
# task workloads) and run them against libuv and libev, interleaved, then write
# bench/results/latest.md (medians and ratios; also printed). Run through
# `make bench` (which builds build/libloop.so first) or directly from anywhere.
#
# Environment:
#   BENCH_REPS  repetitions of every (workload, implementation) pair (default 7, min 5)
#   BENCH_N     number of callbacks / timers of W1-W3 (default 1000000; must be even)
#   BENCH_N_W7  executor jobs of W7 / W7-4 (default 100000; even)
#   BENCH_N_W6  cross-thread posts of W6 (default 2000000; even)
#   BENCH_TASKS tasks of T-sleep / T-yield (default 10000; even; 101 steps each)
#   BENCH_WORKLOADS  space-separated subset of
#               "W1 W1-fd W2 W2-inloop W3 W3c W6 W7 W7-4 W7q W7q-4 T-sleep T-yield"
#               (W7*: libuv and libloop only, libev has no thread pool;
#               T-*: libloop only, the rivals have no tasks)
#   LIBLOOP_LIB_DIR  directory holding the libloop.so to measure (default build/;
#               e.g. a private build of a given commit while build/ is being rebuilt)
#   LIBLOOP_LABEL    what that libloop.so was built from (default: this tree's commit)
#   BENCH_BIN   where the benchmark programs are compiled (default build/bench)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

REPS="${BENCH_REPS:-7}"
N="${BENCH_N:-1000000}"
N7="${BENCH_N_W7:-100000}"
NT="${BENCH_TASKS:-10000}"
WORKLOADS="${BENCH_WORKLOADS:-W1 W1-fd W2 W2-inloop W3 W3c W6 W7 W7-4 W7q W7q-4 T-sleep T-yield}"
CC="${CC:-gcc}"
BIN="${BENCH_BIN:-$ROOT/build/bench}"
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
$CC $CFLAGS bench/bench_uv.c -o "$BIN/bench_uv" -luv -lpthread
$CC $CFLAGS bench/bench_ev.c -o "$BIN/bench_ev" -lev -lpthread
soname_link "$LIBDIR"
$CC $CFLAGS bench/bench_ll.c -o "$BIN/bench_ll" -L"$LIBDIR" -lloop -Wl,-rpath,"$LIBDIR"

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
raw="$RES/raw-$stamp.txt"
header="$RES/header-$stamp.md"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

# Which implementations run a workload, and its N.
impls_of() {
    case "$1" in
    W7*) echo "uv ll" ;; # libev has no thread pool
    T-*) echo "ll" ;;    # libuv and libev have no tasks
    *) echo "uv ev ll" ;;
    esac
}
n_of() {
    case "$1" in
    W7*) echo "$N7" ;;
    W6) echo "${BENCH_N_W6:-2000000}" ;;
    T-*) echo "$NT" ;;
    *) echo "$N" ;;
    esac
}

echo "bench: $REPS repetitions of [$WORKLOADS] x [libuv libev libloop], N=$N (W7: $N7 jobs, T-*: $NT tasks); raw lines in $raw"
for k in $(seq 1 "$REPS"); do
    for w in $WORKLOADS; do
        for impl in $(impls_of "$w"); do
            line="$("$BIN/bench_$impl" "$w" "$(n_of "$w")")"
            echo "$line rep=$k" >>"$raw"
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

commit="$(commit_label)"
{
    echo "# libloop vs libuv vs libev: W1, W2, W3, W7 and task steps (from C)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- libloop: $("$BIN/bench_ll" version), $commit; $LIBDIR/libloop.so built $(date -u -r "$LIBDIR/libloop.so" '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- go: $(go version 2>/dev/null || echo unknown)"
    echo "- gcc: $($CC --version | head -1)"
    echo "- kernel: $(uname -r), $(nproc) CPUs"
    echo "- libuv: $("$BIN/bench_uv" version), libev: $("$BIN/bench_ev" version)"
    echo "- N = $N (W1-W3), $N7 executor jobs (W7), $NT tasks x 101 steps (T-*); $REPS interleaved repetitions"
    echo "- executor pools: libloop default min(32, ncpu+4) = $(( $(nproc) + 4 < 32 ? $(nproc) + 4 : 32 )) workers, libuv default 4 threads; W7-4: both 4"
    echo "- load average (1/5/15 min) at start: $load_start; at end: $load_end"
} >"$header"

"$PYTHON" bench/report.py "$raw" "$header" "$RES/latest.md"
cp "$raw" "$RES/latest-raw.txt"
echo "wrote $RES/latest.md"
