#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run_net.sh — the network workloads W4 (ping-pong in one loop), W4-2p
# (the same ping-pong, the server in its own process and bench/loadgen as
# the client in another), W5
# (echo server under an external load generator) and W10 (~20,000 idle
# connections: server RSS per connection), libloop from C against libuv and
# libev, interleaved; then bench/results/net-latest.md (medians and ratios
# against the best rival; also printed). Run through `make bench-net` (which
# builds build/libloop.so first) or directly from anywhere.
#
# Everything listens on / connects to 127.0.0.1 only. Every program bounds
# itself (W4 watchdog; servers stop after their lifetime; the load generator
# has a timeout and a hold limit), every call here runs under `timeout` or a
# bounded wait, and a trap kills whatever this script started.
#
# Environment:
#   BENCH_REPS        repetitions (default 5, min 5)
#   BENCH_NET_WORKLOADS  subset of "W4 W4-2p W5 W10" (default all four)
#   BENCH_NET_IMPLS   subset of "uv ev ll" (default all three); see server_cmd
#                     below for adding servers (the Python ones: a later issue)
#   BENCH_N_W4        W4 and W4-2p round trips (default 100000)
#   BENCH_W5_CONNS BENCH_W5_MSG BENCH_W5_TOTAL   W5 (default 100, 1024, 200000)
#   BENCH_W10_CONNS   W10 connections (default 19936; lowered to fit `ulimit -Hn`)
#   BENCH_W10_PROCS   load generator processes sharing them (default 2)
#   LIBLOOP_LIB_DIR / LIBLOOP_LABEL / BENCH_BIN   as in bench/run.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

REPS="${BENCH_REPS:-5}"
WORKLOADS="${BENCH_NET_WORKLOADS:-W4 W4-2p W5 W10}"
IMPLS="${BENCH_NET_IMPLS:-uv ev ll}"
N4="${BENCH_N_W4:-100000}"
W5_CONNS="${BENCH_W5_CONNS:-100}"
W5_MSG="${BENCH_W5_MSG:-1024}"
W5_TOTAL="${BENCH_W5_TOTAL:-200000}"
W10_CONNS="${BENCH_W10_CONNS:-19936}"
W10_PROCS="${BENCH_W10_PROCS:-2}"
CC="${CC:-gcc}"
BIN="${BENCH_BIN:-$ROOT/build/bench}"
RES="$ROOT/bench/results"
PYTHON="${PYTHON:-python3}"
LIBDIR="$(cd "${LIBLOOP_LIB_DIR:-$ROOT/build}" 2>/dev/null && pwd || echo "${LIBLOOP_LIB_DIR:-$ROOT/build}")"
HOST=127.0.0.1
SERVER_MAX_S=900 # a server's own lifetime limit (it stops itself after that)
LG_TIMEOUT=120   # the load generator's own limit on W5 / the W10 setup
W10_HOLD=180     # how long a W10 load generator holds its connections at most

[ "$REPS" -ge 5 ] 2>/dev/null || die "BENCH_REPS must be >= 5 (medians of at least 5 runs)"
command -v timeout >/dev/null || die "needs timeout(1) (coreutils)"

# ---- the rivals: say what is missing instead of failing in the compiler ----
check_impls BENCH_NET_IMPLS "uv ev ll" $IMPLS
need_lib

# ---- build ----
mkdir -p "$BIN" "$RES"
CFLAGS="-O2 -Wall -Wextra -Iinclude"
$CC $CFLAGS bench/loadgen.c -o "$BIN/loadgen"
build_impls net $IMPLS

# The command that starts impl's echo server on a free port of 127.0.0.1. It
# must print "PORT <n>" on stdout once it listens, echo every byte until
# killed, and stop by itself after a while. HOOK for the Python servers
# (asyncio, uvloop, libloop's Python loop; a later issue): add a case here,
# e.g.  asyncio) echo "/usr/bin/python3 bench/python/echo_server.py asyncio 0" ;;
# plus a label in impl_label and a name in the check above.
server_cmd() {
    case "$1" in
    uv | ev | ll) echo "$BIN/net_$1 server 0 $SERVER_MAX_S" ;;
    esac
}

# ---- fd limits (W10) ----
if [[ " $WORKLOADS " == *" W10 "* ]]; then
    hard="$(ulimit -Hn)"
    if [ "$hard" != unlimited ]; then
        ulimit -n "$hard"
        # The server holds every connection in one process (+ its own fds).
        if [ "$W10_CONNS" -gt $((hard - 64)) ]; then
            echo "run_net.sh: W10: ulimit -Hn is $hard; using $((hard - 64)) connections instead of $W10_CONNS" >&2
            W10_CONNS=$((hard - 64))
        fi
    else
        ulimit -n 1048576 2>/dev/null || true
    fi
    W10_CONNS=$((W10_CONNS / W10_PROCS * W10_PROCS))
    [ "$W10_CONNS" -ge "$W10_PROCS" ] || die "W10 needs at least one connection per process"
fi

# ---- process bookkeeping: the trap kills only what we started ----
TMP="$(mktemp -d "${TMPDIR:-/tmp}/run_net.XXXXXX")"
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill "$p" 2>/dev/null || true
    done
    sleep 0.2
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server IMPL: sets SRV_PID and SRV_PORT (waits at most 10 s).
start_server() {
    local impl="$1" i
    # Truncate here, not in the background job: reading a previous run's
    # PORT line before the job has truncated the file would be a race.
    : >"$TMP/srv.out"
    : >"$TMP/srv.err"
    # shellcheck disable=SC2046
    $(server_cmd "$impl") >>"$TMP/srv.out" 2>>"$TMP/srv.err" &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    SRV_PORT=""
    for i in $(seq 100); do
        SRV_PORT="$(awk '/^PORT /{print $2; exit}' "$TMP/srv.out")"
        [ -n "$SRV_PORT" ] && return 0
        kill -0 "$SRV_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "run_net.sh: the $(impl_label "$impl") server did not start:" >&2
    cat "$TMP/srv.err" >&2
    stop_pid "$SRV_PID"
    return 1
}

proc_cpu_s() { # "user sys" seconds of a live process
    awk -v tck="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); print $12 / tck, $13 / tck}' "/proc/$1/stat"
}
proc_kib() { # a /proc/PID/status field in KiB (VmRSS, VmHWM)
    awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"
}

# ---- one run of each workload; each prints one RESULT line. They run in
# this shell (stdout redirected to a file, not in $(...)), so the servers and
# load generators they start are in PIDS for the trap. ----
run_w4() {
    local impl="$1"
    timeout 120 "$BIN/net_$impl" w4 "$N4"
}

# run_echo IMPL WORKLOAD CONNS MSG TOTAL: impl's server in its own process,
# bench/loadgen's w5 client in another; loadgen's RESULT line plus the
# server's CPU and peak RSS. W5 is 100 connections of 1 KiB; W4-2p is W4's
# ping-pong across two processes (one connection, 64 B): one common client
# for every server, so only the servers differ between the rows.
run_echo() {
    local impl="$1" wl="$2" conns="$3" msg="$4" total="$5" lbl line c0 c1 hwm
    lbl="$(impl_label "$impl")"
    start_server "$impl" || return 1
    c0="$(proc_cpu_s "$SRV_PID")" || true
    if ! line="$(LOADGEN_IMPL="$lbl" LOADGEN_WORKLOAD="$wl" LOADGEN_TIMEOUT=$LG_TIMEOUT timeout $((LG_TIMEOUT + 30)) \
        "$BIN/loadgen" w5 "$HOST" "$SRV_PORT" "$conns" "$msg" "$total")"; then
        echo "run_net.sh: $wl against $lbl failed; server stderr:" >&2
        cat "$TMP/srv.err" >&2
        stop_pid "$SRV_PID"
        return 1
    fi
    c1="$(proc_cpu_s "$SRV_PID")" || true
    hwm="$(proc_kib "$SRV_PID" VmHWM)" || true
    if [ -z "$c0" ] || [ -z "$c1" ] || [ -z "$hwm" ]; then
        echo "run_net.sh: $wl against $lbl: the server exited during the run:" >&2
        cat "$TMP/srv.err" >&2
        stop_pid "$SRV_PID"
        return 1
    fi
    stop_pid "$SRV_PID"
    # The server's user and kernel time apart: the kernel's share (the same
    # system calls for every implementation) bounds what a user-space
    # saving can gain (bench/README.md).
    awk -v l="$line" -v c0="$c0" -v c1="$c1" -v n="$total" -v hwm="$hwm" 'BEGIN {
        split(c0, a, " "); split(c1, b, " "); u = b[1] - a[1]; s = b[2] - a[2]
        printf "%s srv_cpu_s=%.3f srv_cpu_us_per_rt=%.3f srv_user_us_per_rt=%.3f srv_sys_us_per_rt=%.3f srv_rss_mib=%.1f\n",
            l, u + s, (u + s) * 1e6 / n, u * 1e6 / n, s * 1e6 / n, hwm / 1024 }'
}

run_w4_2p() { run_echo "$1" W4-2p 1 64 "$N4"; }
run_w5() { run_echo "$1" W5 "$W5_CONNS" "$W5_MSG" "$W5_TOTAL"; }

run_w10() {
    local impl="$1" lbl per r0 r1 i j ready t_conn lgp=()
    lbl="$(impl_label "$impl")"
    per=$((W10_CONNS / W10_PROCS))
    start_server "$impl" || return 1
    sleep 0.5 # let it settle (a Go runtime starts its background work)
    r0="$(proc_kib "$SRV_PID" VmRSS)" || true
    for j in $(seq 1 "$W10_PROCS"); do
        : >"$TMP/lg$j.out"
        : >"$TMP/lg$j.err"
        LOADGEN_TIMEOUT=$LG_TIMEOUT LOADGEN_HOLD=$W10_HOLD \
            "$BIN/loadgen" w10 "$HOST" "$SRV_PORT" "$per" >>"$TMP/lg$j.out" 2>>"$TMP/lg$j.err" &
        lgp+=($!)
        PIDS+=($!)
    done
    ready=0
    for i in $(seq $((LG_TIMEOUT * 10 + 100))); do
        ready=0
        for j in $(seq 1 "$W10_PROCS"); do
            grep -q '^READY' "$TMP/lg$j.out" && ready=$((ready + 1))
        done
        [ "$ready" -eq "$W10_PROCS" ] && break
        for j in "${lgp[@]}"; do kill -0 "$j" 2>/dev/null || break 2; done
        sleep 0.1
    done
    if [ "$ready" -ne "$W10_PROCS" ]; then
        echo "run_net.sh: W10 against $lbl: $ready of $W10_PROCS load generators ready; their stderr and the server's:" >&2
        cat "$TMP"/lg*.err "$TMP/srv.err" >&2
        for j in "${lgp[@]}"; do stop_pid "$j"; done
        stop_pid "$SRV_PID"
        return 1
    fi
    r1="$(proc_kib "$SRV_PID" VmRSS)" || true
    if [ -z "$r0" ] || [ -z "$r1" ]; then
        echo "run_net.sh: W10 against $lbl: the server's VmRSS could not be read (did it exit?):" >&2
        cat "$TMP/srv.err" >&2
        for j in "${lgp[@]}"; do stop_pid "$j"; done
        stop_pid "$SRV_PID"
        return 1
    fi
    t_conn="$(awk '/^READY/ {sub("connect_s=", "", $3); if ($3 > m) m = $3} END {print m}' "$TMP"/lg*.out)"
    for j in "${lgp[@]}"; do stop_pid "$j"; done
    stop_pid "$SRV_PID"
    if grep -q . "$TMP"/lg*.err; then
        echo "run_net.sh: W10 against $lbl: the load generators said:" >&2
        cat "$TMP"/lg*.err >&2
    fi
    awk -v lbl="$lbl" -v n="$W10_CONNS" -v r0="$r0" -v r1="$r1" -v t="$t_conn" -v p="$W10_PROCS" 'BEGIN {
        printf "RESULT impl=%s workload=W10 n=%d per_conn_b=%.1f rss_before_mib=%.2f rss_after_mib=%.2f connect_s=%.3f lg_procs=%d\n",
            lbl, n, (r1 - r0) * 1024 / n, r0 / 1024, r1 / 1024, t, p }'
}

# ---- the runs ----
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
raw="$RES/net-raw-$stamp.txt"
header="$TMP/header.md"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-net: $REPS repetitions of [$WORKLOADS] x [$IMPLS]; W4 and W4-2p $N4 round trips, W5 $W5_CONNS conns x $W5_MSG B, $W5_TOTAL round trips, W10 $W10_CONNS conns over $W10_PROCS load generators; raw lines in $raw"
for k in $(seq 1 "$REPS"); do
    for w in $WORKLOADS; do
        for impl in $IMPLS; do
            case "$w" in
            W4) run_w4 "$impl" >"$TMP/line" || die "W4 failed for $(impl_label "$impl")" ;;
            W4-2p) run_w4_2p "$impl" >"$TMP/line" || die "W4-2p failed for $(impl_label "$impl")" ;;
            W5) run_w5 "$impl" >"$TMP/line" || die "W5 failed for $(impl_label "$impl")" ;;
            W10) run_w10 "$impl" >"$TMP/line" || die "W10 failed for $(impl_label "$impl")" ;;
            *) die "unknown workload $w (W4 W4-2p W5 W10)" ;;
            esac
            line="$(grep '^RESULT ' "$TMP/line")" || die "$w: no RESULT line from $(impl_label "$impl")"
            echo "$line rep=$k" >>"$raw"
            echo "    $line"
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

commit="$(commit_label)"
ver() { [ -x "$BIN/net_$1" ] && "$BIN/net_$1" version || echo "not run"; }
{
    echo "# libloop vs libuv vs libev: network workloads W4, W4-2p, W5, W10 (from C)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- libloop: $(ver ll), $commit; $LIBDIR/libloop.so built $(date -u -r "$LIBDIR/libloop.so" '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- go: $(go version 2>/dev/null || echo unknown)"
    echo "- gcc: $($CC --version | head -1)"
    echo "- kernel: $(uname -r), $(nproc) CPUs"
    echo "- libuv: $(ver uv), libev: $(ver ev)"
    for w in $WORKLOADS; do
        case "$w" in
        W4) echo "- W4: $N4 round trips of 64 B on one connection, client and server in one loop" ;;
        W4-2p) echo "- W4-2p: $N4 round trips of 64 B on one connection, the server in its own process, bench/loadgen (one thread, epoll) the client in another" ;;
        W5) echo "- W5: bench/loadgen (own process, one thread, epoll): $W5_CONNS connections, $W5_MSG B messages, $W5_TOTAL round trips" ;;
        W10) echo "- W10: $W10_CONNS connections from $W10_PROCS load generator processes (ulimit -n $(ulimit -n)), 16 B echo on each, server VmRSS before vs after" ;;
        esac
    done
    echo "- $REPS interleaved repetitions; load average (1/5/15 min) at start: $load_start; at end: $load_end"
} >"$header"

"$PYTHON" bench/report.py --net "$raw" "$header" "$RES/net-latest.md"
cp "$raw" "$RES/net-latest-raw.txt"
echo "wrote $RES/net-latest.md"
