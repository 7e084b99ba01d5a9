#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run_udp.sh — the UDP workload: datagrams/s received on one socket,
# 64 B and 1 KiB datagrams, libloop from C against libuv (UV_UDP_RECVMMSG)
# and libev (recvmmsg by hand), interleaved; then bench/results/udp-latest.md
# (medians and ratios against the best rival; also printed). Each run starts
# a fresh receiver (bench/udp_<impl>) and drives it with bench/udp_load, the
# same sender for every row (protocol: bench/udp_common.h). Run through
# `make bench-udp` (which builds build/libloop.so first) or directly.
#
# Everything is on 127.0.0.1. Every receiver stops itself after its
# lifetime, the sender has a timeout, every call here is bounded, and a trap
# kills whatever this script started.
#
# Environment:
#   BENCH_REPS        repetitions (default 5, min 5)
#   BENCH_UDP_IMPLS   subset of "uv ev ll" (default all three)
#   BENCH_UDP_SIZES   datagram sizes (default "64 1024")
#   BENCH_UDP_N       datagrams per run (default 400000)
#   BENCH_UDP_WINDOW  the sender's window of unacknowledged datagrams (default 256)
#   LIBLOOP_LIB_DIR / LIBLOOP_LABEL / BENCH_BIN   as in bench/run.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

REPS="${BENCH_REPS:-5}"
IMPLS="${BENCH_UDP_IMPLS:-uv ev ll}"
SIZES="${BENCH_UDP_SIZES:-64 1024}"
N="${BENCH_UDP_N:-400000}"
WINDOW="${BENCH_UDP_WINDOW:-256}"
CC="${CC:-gcc}"
BIN="${BENCH_BIN:-$ROOT/build/bench}"
RES="$ROOT/bench/results"
PYTHON="${PYTHON:-python3}"
LIBDIR="$(cd "${LIBLOOP_LIB_DIR:-$ROOT/build}" 2>/dev/null && pwd || echo "${LIBLOOP_LIB_DIR:-$ROOT/build}")"
HOST=127.0.0.1
RCV_MAX_S=300 # a receiver's own lifetime limit
LG_TIMEOUT=120

[ "$REPS" -ge 5 ] 2>/dev/null || die "BENCH_REPS must be >= 5 (medians of at least 5 runs)"
command -v timeout >/dev/null || die "needs timeout(1) (coreutils)"

check_impls BENCH_UDP_IMPLS "uv ev ll" $IMPLS
need_lib

mkdir -p "$BIN" "$RES"
CFLAGS="-O2 -Wall -Wextra -Iinclude"
$CC $CFLAGS bench/udp_load.c -o "$BIN/udp_load"
build_impls udp $IMPLS

TMP="$(mktemp -d "${TMPDIR:-/tmp}/run_udp.XXXXXX")"
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

proc_cpu_s() { # user+sys seconds of a live process
    awk -v tck="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); print ($12 + $13) / tck}' "/proc/$1/stat"
}

# run_one IMPL SIZE: a fresh receiver, the sender against it; one RESULT
# line with the receiver's CPU per datagram added.
run_one() {
    local impl="$1" size="$2" lbl port="" line c0 c1 i pid
    lbl="$(impl_label "$impl")"
    : >"$TMP/rcv.out"
    : >"$TMP/rcv.err"
    "$BIN/udp_$impl" 0 "$RCV_MAX_S" >>"$TMP/rcv.out" 2>>"$TMP/rcv.err" &
    pid=$!
    PIDS+=("$pid")
    for i in $(seq 100); do
        port="$(awk '/^PORT /{print $2; exit}' "$TMP/rcv.out")"
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$port" ]; then
        echo "run_udp.sh: the $lbl receiver did not start:" >&2
        cat "$TMP/rcv.err" >&2
        stop_pid "$pid"
        return 1
    fi
    c0="$(proc_cpu_s "$pid")"
    if ! line="$(UDP_IMPL="$lbl" UDP_TIMEOUT=$LG_TIMEOUT timeout $((LG_TIMEOUT + 30)) \
        "$BIN/udp_load" "$HOST" "$port" "$size" "$N" "$WINDOW")"; then
        echo "run_udp.sh: UDP-$size against $lbl failed: $line; receiver stderr:" >&2
        cat "$TMP/rcv.err" >&2
        stop_pid "$pid"
        return 1
    fi
    c1="$(proc_cpu_s "$pid")"
    stop_pid "$pid"
    awk -v l="$line" -v c0="$c0" -v c1="$c1" -v n="$N" 'BEGIN {
        printf "%s rcv_cpu_s=%.3f rcv_cpu_us_per_dgram=%.4f\n", l, c1 - c0, (c1 - c0) * 1e6 / n }'
}

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
raw="$RES/udp-raw-$stamp.txt"
header="$TMP/header.md"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-udp: $REPS repetitions of sizes [$SIZES] x [$IMPLS]; $N datagrams a run, window $WINDOW; raw lines in $raw"
for k in $(seq 1 "$REPS"); do
    for size in $SIZES; do
        for impl in $IMPLS; do
            run_one "$impl" "$size" >"$TMP/line" || die "UDP-$size failed for $(impl_label "$impl")"
            line="$(grep '^RESULT ' "$TMP/line")" || die "UDP-$size: no RESULT line for $(impl_label "$impl")"
            echo "$line rep=$k" >>"$raw"
            echo "    $line"
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

ver() { [ -x "$BIN/udp_$1" ] && "$BIN/udp_$1" version || echo "not run"; }
{
    echo "# libloop vs libuv vs libev: UDP datagrams received on one socket (from C)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- libloop: $(ver ll), $(commit_label); $LIBDIR/libloop.so built $(date -u -r "$LIBDIR/libloop.so" '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- go: $(go version 2>/dev/null || echo unknown)"
    echo "- gcc: $($CC --version | head -1)"
    echo "- kernel: $(uname -r), $(nproc) CPUs"
    echo "- libuv: $(ver uv), libev: $(ver ev)"
    echo "- each run: bench/udp_load (own process, one thread, sendmmsg in bursts of 32) sends $N datagrams of SIZE bytes to a fresh receiver on 127.0.0.1, at most $WINDOW unacknowledged; the receiver acks the last of each burst"
    echo "- $REPS interleaved repetitions; load average (1/5/15 min) at start: $load_start; at end: $load_end"
} >"$header"

"$PYTHON" bench/report.py --udp "$raw" "$header" "$RES/udp-latest.md"
cp "$raw" "$RES/udp-latest-raw.txt"
echo "wrote $RES/udp-latest.md"
