#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run_footprint.sh — `make bench-footprint`: what embedding each event
# loop costs before it does work, libloop against libuv and libev from C and
# against asyncio and uvloop from Python (/usr/bin/python3):
#   - the shared objects on disk, as installed and after `strip` (uvloop: its
#     loop module and the libuv it links; asyncio: its C accelerator _asyncio;
#     libloop from Python: libloop.so and libloop-cpython.so);
#   - threads (/proc/PID/task) and VmRSS of the host before and after the
#     library is loaded, after one loop ran one 1 ms timer, and after the
#     loop was closed (bench/footprint.c with dlopen; bench/python/footprint.py);
#   - an echo server (bench/net_{uv,ev,ll}, bench/python/bench_net.py serve
#     LOOP proto) listening, then holding 10,000 idle TCP connections from
#     bench/loadgen w10 (16 B echoed on each): its threads and VmRSS.
# Raw lines go to bench/results/footprint-raw-STAMP.txt, the table to
# bench/results/footprint-latest.md (bench/report.py --footprint).
#
# Environment:
#   BENCH_REPS             runs of each measurement (default 3; threads and
#                          RSS barely move between runs: medians of 3)
#   BENCH_FOOT_IMPLS       subset of "libuv libev libloop py-asyncio py-uvloop py-libloop"
#   BENCH_FOOT_CONNS       idle connections (default 10000; lowered to fit ulimit -Hn)
#   LIBLOOP_LIB_DIR        where libloop.so (and libloop-cpython.so) are (default build/)
#   BENCH_PY               the Python with uvloop (default /usr/bin/python3)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. bench/common.sh

REPS="${BENCH_REPS:-3}"
IMPLS="${BENCH_FOOT_IMPLS:-libuv libev libloop py-asyncio py-uvloop py-libloop}"
CONNS="${BENCH_FOOT_CONNS:-10000}"
CC="${CC:-gcc}"
PY="${BENCH_PY:-/usr/bin/python3}"
BIN="${BENCH_BIN:-$ROOT/build/bench}"
RES="$ROOT/bench/results"
LIBDIR="$(cd "${LIBLOOP_LIB_DIR:-$ROOT/build}" 2>/dev/null && pwd || echo "${LIBLOOP_LIB_DIR:-$ROOT/build}")"
HOST=127.0.0.1
LG_PROCS=2 # load generators sharing the connections

[ "$REPS" -ge 1 ] 2>/dev/null || die "BENCH_REPS must be >= 1"
command -v strip >/dev/null || die "needs strip (binutils)"
missing=""
for impl in $IMPLS; do
    case "$impl" in
    libuv) have_header uv.h || missing="$missing libuv1-dev" ;;
    libev) have_header ev.h || missing="$missing libev-dev" ;;
    py-uvloop) "$PY" -c 'import uvloop' 2>/dev/null || missing="$missing python3-uvloop" ;;
    libloop | py-asyncio | py-libloop) ;;
    *) die "unknown implementation '$impl' in BENCH_FOOT_IMPLS" ;;
    esac
done
if [ -n "$missing" ]; then
    echo "run_footprint.sh: missing:$missing" >&2
    echo "  install with: apt-get update -qq && apt-get install -y -qq$missing" >&2
    echo "  (or leave them out with BENCH_FOOT_IMPLS)" >&2
    exit 2
fi
need_lib
export LIBLOOP_LIBRARY="$LIBDIR/libloop.so"
export PYTHONPATH="$ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}"

# ---- build ----
mkdir -p "$BIN" "$RES"
CFLAGS="-O2 -Wall -Wextra -Iinclude"
$CC $CFLAGS bench/footprint.c -o "$BIN/footprint" -ldl
$CC $CFLAGS bench/loadgen.c -o "$BIN/loadgen"
for impl in $IMPLS; do
    case "$impl" in
    libuv) $CC $CFLAGS bench/net_uv.c -o "$BIN/net_uv" -luv ;;
    libev) $CC $CFLAGS bench/net_ev.c -o "$BIN/net_ev" -lev ;;
    libloop) soname_link "$LIBDIR" && $CC $CFLAGS bench/net_ll.c -o "$BIN/net_ll" -L"$LIBDIR" -lloop -Wl,-rpath,"$LIBDIR" ;;
    esac
done

# The shared object a C program gets for -lNAME (the real file, links followed).
c_lib() { readlink -f "$($CC -print-file-name="lib$1.so")"; }
py_file() { "$PY" -c "import $1 as m; print(m.__file__)"; }

# lib_files IMPL: the shared objects IMPL loads into its host.
lib_files() {
    case "$1" in
    libuv) c_lib uv ;;
    libev) c_lib ev ;;
    libloop) readlink -f "$LIBDIR/libloop.so" ;;
    py-asyncio) py_file _asyncio ;;
    py-uvloop) py_file uvloop.loop && c_lib uv ;;
    py-libloop) readlink -f "$LIBDIR/libloop.so" && readlink -f "$LIBDIR/libloop-cpython.so" ;;
    esac
}

# ---- fds for the idle connections ----
hard="$(ulimit -Hn)"
if [ "$hard" != unlimited ]; then
    ulimit -n "$hard"
    if [ "$CONNS" -gt $((hard - 256)) ]; then
        echo "run_footprint.sh: ulimit -Hn is $hard; holding $((hard - 256)) connections instead of $CONNS" >&2
        CONNS=$((hard - 256))
    fi
fi
CONNS=$((CONNS / LG_PROCS * LG_PROCS))

TMP="$(mktemp -d "${TMPDIR:-/tmp}/run_footprint.XXXXXX")"
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

proc_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
proc_threads() { ls "/proc/$1/task" | wc -l; }

# size_line IMPL: the sizes of IMPL's shared objects, as found and stripped.
size_line() {
    local f files="" disk=0 stripped=0
    for f in $(lib_files "$1"); do
        [ -f "$f" ] || die "$1: no file $f"
        strip -o "$TMP/stripped.so" "$f"
        disk=$((disk + $(stat -c %s "$f")))
        stripped=$((stripped + $(stat -c %s "$TMP/stripped.so")))
        files="$files${files:+,}$(basename "$f")"
    done
    echo "RESULT impl=$1 phase=size file_b=$disk stripped_b=$stripped files=$files"
}

# phases IMPL: start, load, loop and closed lines.
phases() {
    case "$1" in
    py-*) timeout 60 "$PY" bench/python/footprint.py "${1#py-}" ;;
    *) timeout 60 "$BIN/footprint" "$1" "$(lib_files "$1")" ;;
    esac
}

server_cmd() {
    case "$1" in
    libuv) echo "$BIN/net_uv server 0 600" ;;
    libev) echo "$BIN/net_ev server 0 600" ;;
    libloop) echo "$BIN/net_ll server 0 600" ;;
    py-*) echo "$PY bench/python/bench_net.py serve ${1#py-} proto 600" ;;
    esac
}

# idle_line IMPL: the server's threads and VmRSS listening, then holding
# CONNS idle connections.
idle_line() {
    local impl="$1" i j ready t0 r0 t1 r1 port srv lgp=()
    : >"$TMP/srv.out"
    : >"$TMP/srv.err"
    # shellcheck disable=SC2046 # the command is words
    $(server_cmd "$impl") >>"$TMP/srv.out" 2>>"$TMP/srv.err" &
    srv=$!
    PIDS+=("$srv")
    port=""
    for i in $(seq 150); do
        port="$(awk '/^PORT /{print $2; exit}' "$TMP/srv.out")"
        [ -n "$port" ] && break
        kill -0 "$srv" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        echo "run_footprint.sh: the $impl server did not start:" >&2
        cat "$TMP/srv.err" >&2
        stop_pid "$srv"
        return 1
    fi
    sleep 0.5 # let it settle (a Go runtime starts its background work)
    t0="$(proc_threads "$srv")"
    r0="$(proc_kib "$srv" VmRSS)"
    for j in $(seq 1 "$LG_PROCS"); do
        : >"$TMP/lg$j.out"
        LOADGEN_TIMEOUT=120 LOADGEN_HOLD=120 \
            "$BIN/loadgen" w10 "$HOST" "$port" $((CONNS / LG_PROCS)) >>"$TMP/lg$j.out" 2>>"$TMP/lg.err" &
        lgp+=($!)
        PIDS+=($!)
    done
    for i in $(seq 1300); do
        ready=0
        for j in $(seq 1 "$LG_PROCS"); do
            grep -q '^READY' "$TMP/lg$j.out" && ready=$((ready + 1))
        done
        [ "$ready" -eq "$LG_PROCS" ] && break
        for j in "${lgp[@]}"; do kill -0 "$j" 2>/dev/null || break 2; done
        sleep 0.1
    done
    sleep 0.5
    t1="$(proc_threads "$srv" 2>/dev/null)" || true
    r1="$(proc_kib "$srv" VmRSS 2>/dev/null)" || true
    for j in "${lgp[@]}"; do stop_pid "$j"; done
    stop_pid "$srv"
    if [ "$ready" -ne "$LG_PROCS" ] || [ -z "$r1" ]; then
        echo "run_footprint.sh: $impl with $CONNS idle connections failed; load generators and server said:" >&2
        cat "$TMP/lg.err" "$TMP/srv.err" >&2
        return 1
    fi
    awk -v i="$impl" -v n="$CONNS" -v t0="$t0" -v r0="$r0" -v t1="$t1" -v r1="$r1" 'BEGIN {
        printf "RESULT impl=%s phase=idle n=%d threads_before=%d rss_before_kib=%d threads=%d rss_kib=%d per_conn_b=%.0f\n",
            i, n, t0, r0, t1, r1, (r1 - r0) * 1024 / n }'
}

# ---- the runs ----
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
raw="$RES/footprint-raw-$stamp.txt"
echo "bench-footprint: $REPS runs of [$IMPLS], $CONNS idle connections; raw lines in $raw"
for impl in $IMPLS; do
    size_line "$impl" >>"$raw"
done
for k in $(seq 1 "$REPS"); do
    for impl in $IMPLS; do
        phases "$impl" >>"$raw" || die "$impl: the load/loop phases failed"
        idle_line "$impl" >>"$raw" || die "$impl: the idle connections failed"
    done
    echo "  run $k of $REPS done"
done

header="$TMP/header.md"
{
    echo "# Footprint: libloop against libuv, libev, asyncio and uvloop"
    echo
    echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -srm), $(nproc) CPUs, kernel THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
    echo "- libloop: $LIBDIR/libloop.so, $(commit_label)"
    echo "- libuv $(pkg-config --modversion libuv 2>/dev/null || echo '?'), libev $(dpkg-query -W -f '${Version}' libev4 2>/dev/null || echo '?'), $("$PY" -V 2>&1), uvloop $("$PY" -c 'import uvloop; print(uvloop.__version__)' 2>/dev/null || echo '-')"
    echo "- medians of $REPS runs; idle: $CONNS connections from $LG_PROCS bench/loadgen w10 processes"
} >"$header"
"$PY" bench/report.py --footprint "$raw" "$header" "$RES/footprint-latest.md"
cp "$raw" "$RES/footprint-latest-raw.txt"
cat "$RES/footprint-latest.md"
