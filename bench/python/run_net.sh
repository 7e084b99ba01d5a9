#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/python/run_net.sh — the Python network and process workloads on
# asyncio's SelectorEventLoop, uvloop and libloop, on one interpreter,
# interleaved (repetition k runs every loop for W4, then for W5p, ...), one
# process per run; then bench/results/python-net-latest.md (medians, ranges,
# libloop's ratios against uvloop and asyncio; also printed). `make
# bench-python-net` builds build/libloop.so first.
#
#   W4   64 B ping-pong, one connection, client and server in one loop
#   W5p  Protocol echo server, bench/loadgen (C, own process): 100
#        connections, 1 KiB messages, each sent when the last echo is back
#   W5s  the same against an asyncio.start_server (streams) echo server
#   W9   aiohttp hello-world under wrk -t1 -c50 (after a 1 s warm-up)
#   W10  idle connections from bench/loadgen (16 B echo on each, then held):
#        server VmRSS growth per connection
#   W8   500 x /bin/true through asyncio.create_subprocess_exec, 16 at a time
#
# Servers listen on 127.0.0.1 only; every server stops itself after
# SERVER_MAX_S, every client runs under timeout(1), and a trap ends what this
# script started.
#
# Environment:
#   BENCH_PY              interpreter (default /usr/bin/python3)
#   BENCH_REPS            repetitions (default 5, min 5)
#   BENCH_LOOPS           subset of "asyncio uvloop libloop libloop-before"
#                         (libloop-before: libloop again with the library
#                         LIBLOOP_BEFORE_LIBRARY and, if set, the binding in
#                         LIBLOOP_BEFORE_PYTHON: a before/after comparison
#                         interleaved in one run)
#   BENCH_WORKLOADS       subset of "W4 W5p W5s W9 W10 W8"
#   BENCH_N_W4            W4 round trips (default 20000)
#   BENCH_W5_TOTAL        W5 round trips (default 60000; 100 conns x 1 KiB)
#   BENCH_W9_SECS         wrk duration (default 5)
#   BENCH_W10_CONNS       W10 connections (default 10000, 2 load generators)
#   BENCH_N_W8            W8 children (default 500)
#   LIBLOOP_LIBRARY, LIBLOOP_PYTHON  the libloop.so and the binding's
#                         directory measured (default: this tree's; e.g. an
#                         older build's for a before/after comparison)
#   BENCH_SERVER_CPU, BENCH_CLIENT_CPU  bind the process measured (the server;
#                         W4's and W8's one process) and the load generator
#                         (wrk, bench/loadgen) to these CPUs (taskset -c
#                         lists; default: unbound). A one-CPU server is a
#                         one-CPU container's case, and its runs vary less.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

PY="${BENCH_PY:-/usr/bin/python3}"
REPS="${BENCH_REPS:-5}"
LOOPS="${BENCH_LOOPS:-asyncio uvloop libloop}"
WORKLOADS="${BENCH_WORKLOADS:-W4 W5p W5s W9 W10 W8}"
N4="${BENCH_N_W4:-20000}"
W5_TOTAL="${BENCH_W5_TOTAL:-60000}"
W9_SECS="${BENCH_W9_SECS:-5}"
W10_CONNS="${BENCH_W10_CONNS:-10000}"
N8="${BENCH_N_W8:-500}"
W10_PROCS=2
SERVER_MAX_S=300
HOST=127.0.0.1
BIN="$ROOT/build/bench"
SRV_PIN=()
CLI_PIN=()
[ -n "${BENCH_SERVER_CPU:-}" ] && SRV_PIN=(taskset -c "$BENCH_SERVER_CPU")
[ -n "${BENCH_CLIENT_CPU:-}" ] && CLI_PIN=(taskset -c "$BENCH_CLIENT_CPU")
RES="$ROOT/bench/results"
LIBLOOP_PYTHON="${LIBLOOP_PYTHON:-$ROOT/bindings/python}"
export PYTHONPATH="$LIBLOOP_PYTHON${PYTHONPATH:+:$PYTHONPATH}"
export LIBLOOP_LIBRARY="${LIBLOOP_LIBRARY:-$ROOT/build/libloop.so}"

die() {
    echo "run_net.sh: $*" >&2
    exit 2
}

[ "$REPS" -ge 5 ] 2>/dev/null || die "BENCH_REPS must be >= 5 (medians of at least 5 runs)"
for l in $LOOPS; do
    case "$l" in
    asyncio) ;;
    uvloop) "$PY" -c 'import uvloop' 2>/dev/null || die "uvloop missing: apt-get install -y python3-uvloop" ;;
    libloop) [ -f "$LIBLOOP_LIBRARY" ] || die "no $LIBLOOP_LIBRARY (make lib)" ;;
    libloop-before) [ -f "${LIBLOOP_BEFORE_LIBRARY:-}" ] || die "libloop-before needs LIBLOOP_BEFORE_LIBRARY" ;;
    *) die "unknown loop $l (asyncio uvloop libloop libloop-before)" ;;
    esac
done
if [[ " $WORKLOADS " == *" W9 "* ]]; then
    command -v wrk >/dev/null || die "W9 needs wrk: apt-get install -y wrk"
    "$PY" -c 'import aiohttp' 2>/dev/null || die "W9 needs aiohttp: apt-get install -y python3-aiohttp"
fi
mkdir -p "$BIN" "$RES"
"${CC:-gcc}" -O2 -Wall -Wextra bench/loadgen.c -o "$BIN/loadgen"

if [[ " $WORKLOADS " == *" W10 "* ]]; then
    hard="$(ulimit -Hn)"
    [ "$hard" = unlimited ] && hard=1048576
    ulimit -n "$hard"
    if [ "$W10_CONNS" -gt $((hard - 256)) ]; then
        echo "run_net.sh: W10: ulimit -Hn is $hard; using $((hard - 256)) connections" >&2
        W10_CONNS=$((hard - 256))
    fi
    W10_CONNS=$((W10_CONNS / W10_PROCS * W10_PROCS))
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/pynet.XXXXXX")"
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    sleep 0.2
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server LOOP KIND: sets SRV_PID and SRV_PORT.
start_server() {
    local i
    : >"$TMP/srv.out"
    : >"$TMP/srv.err"
    ${SRV_PIN[@]+"${SRV_PIN[@]}"} "$PY" "$HERE/bench_net.py" serve "$1" "$2" "$SERVER_MAX_S" >>"$TMP/srv.out" 2>>"$TMP/srv.err" &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    SRV_PORT=""
    for i in $(seq 150); do
        SRV_PORT="$(awk '/^PORT /{print $2; exit}' "$TMP/srv.out")"
        [ -n "$SRV_PORT" ] && return 0
        kill -0 "$SRV_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "run_net.sh: the $1 $2 server did not start:" >&2
    cat "$TMP/srv.err" >&2
    stop_pid "$SRV_PID"
    return 1
}

cpu_s() { awk -v t="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); print ($12 + $13) / t}' "/proc/$1/stat"; }
rss_kib() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status"; }

# ---- one run of each workload: one RESULT line on stdout ----
run_w4() { timeout 120 ${SRV_PIN[@]+"${SRV_PIN[@]}"} "$PY" "$HERE/bench_net.py" w4 "$1" "$N4"; }
run_w8() { timeout 120 ${SRV_PIN[@]+"${SRV_PIN[@]}"} "$PY" "$HERE/bench_net.py" w8 "$1" "$N8" 16; }

run_w5() { # LOOP KIND(proto|streams) WORKLOAD
    local line c0 c1
    start_server "$1" "$2" || return 1
    c0="$(cpu_s "$SRV_PID")"
    line="$(LOADGEN_IMPL="$1" timeout 150 ${CLI_PIN[@]+"${CLI_PIN[@]}"} "$BIN/loadgen" w5 "$HOST" "$SRV_PORT" 100 1024 "$W5_TOTAL")" || {
        cat "$TMP/srv.err" >&2
        stop_pid "$SRV_PID"
        return 1
    }
    c1="$(cpu_s "$SRV_PID")"
    stop_pid "$SRV_PID"
    line="${line/impl=/loop=}"
    echo "${line/workload=W5/workload=$3} srv_cpu_us=$(awk -v a="$c0" -v b="$c1" -v n="$W5_TOTAL" 'BEGIN {printf "%.2f", (b - a) * 1e6 / n}')"
}

run_w9() {
    local out c0 c1 n rps
    start_server "$1" http || return 1
    timeout 30 ${CLI_PIN[@]+"${CLI_PIN[@]}"} wrk -t1 -c50 -d1s "http://$HOST:$SRV_PORT/" >/dev/null
    c0="$(cpu_s "$SRV_PID")"
    out="$(timeout $((W9_SECS + 30)) ${CLI_PIN[@]+"${CLI_PIN[@]}"} wrk -t1 -c50 -d"${W9_SECS}s" "http://$HOST:$SRV_PORT/")"
    c1="$(cpu_s "$SRV_PID")"
    stop_pid "$SRV_PID"
    if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then
        echo "run_net.sh: W9 on $1: wrk saw errors:" >&2
        echo "$out" >&2
        return 1
    fi
    n="$(awk '/requests in/ {print $1}' <<<"$out")"
    rps="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")"
    awk -v l="$1" -v n="$n" -v r="$rps" -v a="$c0" -v b="$c1" 'BEGIN {
        printf "RESULT loop=%s workload=W9 n=%d per_s=%.0f srv_cpu_us=%.2f\n", l, n, r, (b - a) * 1e6 / n }'
}

run_w10() {
    local r0 r1 j i ready per lgp=()
    per=$((W10_CONNS / W10_PROCS))
    start_server "$1" proto || return 1
    sleep 0.3
    r0="$(rss_kib "$SRV_PID")"
    for j in $(seq "$W10_PROCS"); do
        : >"$TMP/lg$j.out"
        LOADGEN_TIMEOUT=100 LOADGEN_HOLD=120 ${CLI_PIN[@]+"${CLI_PIN[@]}"} "$BIN/loadgen" w10 "$HOST" "$SRV_PORT" "$per" \
            >>"$TMP/lg$j.out" 2>>"$TMP/lg.err" &
        lgp+=($!)
        PIDS+=($!)
    done
    ready=0
    for i in $(seq 1100); do
        ready="$(cat "$TMP"/lg*.out | grep -c '^READY' || true)"
        [ "$ready" -eq "$W10_PROCS" ] && break
        for j in "${lgp[@]}"; do kill -0 "$j" 2>/dev/null || break 2; done
        sleep 0.1
    done
    sleep 0.3
    r1="$(rss_kib "$SRV_PID" || true)"
    for j in "${lgp[@]}"; do stop_pid "$j"; done
    stop_pid "$SRV_PID"
    if [ "$ready" -ne "$W10_PROCS" ] || [ -z "$r1" ]; then
        echo "run_net.sh: W10 on $1: $ready of $W10_PROCS load generators ready" >&2
        cat "$TMP/lg.err" "$TMP/srv.err" >&2
        return 1
    fi
    awk -v l="$1" -v n="$W10_CONNS" -v a="$r0" -v b="$r1" 'BEGIN {
        printf "RESULT loop=%s workload=W10 n=%d per_conn_b=%.0f rss_before_mib=%.1f rss_after_mib=%.1f\n",
            l, n, (b - a) * 1024 / n, a / 1024, b / 1024 }'
}

# ---- the runs ----
raw="$RES/python-net-raw.txt"
: >"$raw"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "python-net: $REPS repetitions of [$WORKLOADS] x [$LOOPS]; raw lines in $raw"
run_one() { # WORKLOAD LOOP
    case "$1" in
    W4) run_w4 "$2" ;;
    W5p) run_w5 "$2" proto W5p ;;
    W5s) run_w5 "$2" streams W5s ;;
    W9) run_w9 "$2" ;;
    W10) run_w10 "$2" ;;
    W8) run_w8 "$2" ;;
    *) die "unknown workload $1 (W4 W5p W5s W9 W10 W8)" ;;
    esac
}

for k in $(seq "$REPS"); do
    for w in $WORKLOADS; do
        for l in $LOOPS; do
            if [ "$l" = libloop-before ]; then
                (
                    export LIBLOOP_LIBRARY="$LIBLOOP_BEFORE_LIBRARY"
                    if [ -n "${LIBLOOP_BEFORE_PYTHON:-}" ]; then
                        export PYTHONPATH="$LIBLOOP_BEFORE_PYTHON:$PYTHONPATH"
                    fi
                    run_one "$w" libloop
                ) >"$TMP/line" || die "$w failed on $l"
                sed -i 's/^RESULT loop=libloop /RESULT loop=libloop-before /' "$TMP/line"
            else
                run_one "$w" "$l" >"$TMP/line" || die "$w failed on $l"
            fi
            line="$(grep '^RESULT ' "$TMP/line")" || die "$w: no RESULT line from $l"
            echo "$line rep=$k" | tee -a "$raw"
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

{
    echo "# Python loops: network and process workloads (asyncio, uvloop, libloop)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); host: $(uname -srm), $(nproc) CPUs"
    echo "- python: $("$PY" -V 2>&1) ($PY); uvloop $("$PY" -c 'import uvloop; print(uvloop.__version__)' 2>/dev/null || echo missing); aiohttp $("$PY" -c 'import aiohttp; print(aiohttp.__version__)' 2>/dev/null || echo missing); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
    if [ "$LIBLOOP_PYTHON" = "$ROOT/bindings/python" ]; then
        echo "- libloop: $LIBLOOP_LIBRARY, $(commit_label) (bindings/python: $(git status --porcelain -- bindings/python | grep -q . && echo 'with uncommitted changes' || echo 'as committed'))"
    else
        echo "- libloop: $LIBLOOP_LIBRARY with the binding in $LIBLOOP_PYTHON (LIBLOOP_PYTHON)"
    fi
    case " $LOOPS " in *" libloop-before "*)
        echo "- libloop-before: ${LIBLOOP_BEFORE_LIBRARY:-} with the binding in ${LIBLOOP_BEFORE_PYTHON:-$LIBLOOP_PYTHON}" ;;
    esac
    echo "- W4 $N4 round trips; W5 100 conns x 1 KiB, $W5_TOTAL round trips; W9 wrk -t1 -c50 -d${W9_SECS}s; W10 $W10_CONNS conns; W8 $N8 x /bin/true, 16 at a time"
    echo "- $REPS interleaved repetitions, one process per run; load average (1/5/15 min) at start: $load_start; at end: $load_end"
    if [ -n "${BENCH_SERVER_CPU:-}${BENCH_CLIENT_CPU:-}" ]; then
        echo "- bound: server on CPU ${BENCH_SERVER_CPU:-any}, load generator on CPU ${BENCH_CLIENT_CPU:-any} (taskset)"
    fi
} >"$TMP/header.md"
"$PY" "$HERE/report_net.py" "$raw" "$TMP/header.md" | tee "$RES/python-net-latest.md"
echo "wrote $RES/python-net-latest.md"
