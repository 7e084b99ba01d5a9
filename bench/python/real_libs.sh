#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/python/real_libs.sh — real Python libraries against real servers on
# asyncio's SelectorEventLoop, uvloop and libloop, on /usr/bin/python3
# (Debian's packages), interleaved (repetition k runs every loop for pg1,
# then for pgpool, ...), one process per run, pinned and unpinned; then
# bench/results/real-latest.md (medians, ranges, libloop / uvloop and
# libloop / asyncio from the same run; also printed). `make bench-real`.
#
#   pg1        asyncpg, one connection: fetchval("SELECT $1::int", i) x 20,000
#   pgpool     asyncpg, pool of 10 connections, 200 tasks, 20,000 fetchval
#   redis1     redis.asyncio, one connection: GET x 50,000
#   redispool  redis.asyncio, BlockingConnectionPool of 10, 200 tasks,
#              50,000 GET
#   uvicorn    uvicorn (h11) hello-world ASGI app under wrk -t1 -c50 (after a
#              1 s warm-up)
#
# pinned: every process of the run (the client, PostgreSQL's or Redis's
# processes, uvicorn and wrk) on CPU 0 (taskset): on two CPUs, where the
# scheduler puts the client and the server otherwise decides the figure
# more than the loop does. unpinned: no binding.
#
# The script starts PostgreSQL (initdb in a temporary directory, trust
# authentication, 127.0.0.1 on a free port, fsync off; run as the postgres
# user when we are root, since PostgreSQL refuses root) and redis-server
# (127.0.0.1, free port, no persistence) itself, and a trap stops them and
# removes the directory, whatever happens. No global configuration is read or
# written. Missing packages (postgresql redis-server python3-asyncpg
# python3-redis python3-uvicorn wrk, and python3-uvloop for the benchmark)
# are installed with apt-get when we are root; otherwise the script says what
# is missing and skips (exit 0; the smoke test fails instead).
#
#   bash bench/python/real_libs.sh servers COMMAND [ARG...]
# starts the two servers, runs COMMAND with REAL_PG_PORT and REAL_REDIS_PORT
# set (e.g. one client under cProfile: real_libs.py pg1 libloop
# '$REAL_PG_PORT' in a bash -c), and stops them; with BENCH_PINS=pinned the
# servers run on BENCH_PIN_CPU, as in the pinned runs.
#
#   bash bench/python/real_libs.sh smoke
# is the smoke test (`make test-real-servers`, part of `make test`): each
# workload for a few hundred operations on each loop (uvloop when it is
# installed), every answer checked, no timing; uvicorn answers 300 keep-alive
# requests with the right body and one second of wrk without errors.
#
# Environment:
#   BENCH_PY            interpreter (default /usr/bin/python3)
#   BENCH_REPS          repetitions (default 5, min 5)
#   BENCH_LOOPS         subset of "asyncio uvloop libloop libloop-before"
#                       (libloop-before: libloop again with the library
#                       LIBLOOP_BEFORE_LIBRARY and, if set, the binding in
#                       LIBLOOP_BEFORE_PYTHON: a before/after comparison
#                       interleaved with the others)
#   BENCH_WORKLOADS     subset of "pg1 pgpool redis1 redispool uvicorn"
#   BENCH_PINS          subset of "pinned unpinned" (default both)
#   BENCH_N_PG          fetchval per run (default 20000, pg1 and pgpool)
#   BENCH_N_REDIS       GET per run (default 50000, redis1 and redispool)
#   BENCH_UVICORN_SECS  wrk duration (default 5)
#   BENCH_PIN_CPU       the CPU of pinned runs (default 0)
#   LIBLOOP_LIBRARY, LIBLOOP_PYTHON  the libloop.so and binding measured
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

MODE=bench
case "${1:-}" in
smoke) MODE=smoke ;;
servers)
    MODE=servers
    shift
    [ $# -gt 0 ] || { echo "usage: real_libs.sh servers COMMAND [ARG...]" >&2; exit 2; }
    ;;
esac
PY="${BENCH_PY:-/usr/bin/python3}"
REPS="${BENCH_REPS:-5}"
LOOPS="${BENCH_LOOPS:-asyncio uvloop libloop}"
WORKLOADS="${BENCH_WORKLOADS:-pg1 pgpool redis1 redispool uvicorn}"
PINS="${BENCH_PINS:-pinned unpinned}"
N_PG="${BENCH_N_PG:-20000}"
N_REDIS="${BENCH_N_REDIS:-50000}"
UV_SECS="${BENCH_UVICORN_SECS:-5}"
PIN_CPU="${BENCH_PIN_CPU:-0}"
ALL_CPUS="0-$(($(nproc) - 1))"
HOST=127.0.0.1
RES="$ROOT/bench/results"
LIBLOOP_PYTHON="${LIBLOOP_PYTHON:-$ROOT/bindings/python}"
export PYTHONPATH="$LIBLOOP_PYTHON${PYTHONPATH:+:$PYTHONPATH}"
export LIBLOOP_LIBRARY="${LIBLOOP_LIBRARY:-$ROOT/build/libloop.so}"
PG_BIN="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1 || true)"

say() { echo "real_libs.sh: $*" >&2; }
die() {
    say "$*"
    exit 2
}

# ---- what the runs need -------------------------------------------------------------
# missing: the Debian packages whose probe fails.
missing() {
    local m=()
    [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || m+=(postgresql)
    command -v redis-server >/dev/null || m+=(redis-server)
    command -v wrk >/dev/null || m+=(wrk)
    "$PY" -c 'import asyncpg' 2>/dev/null || m+=(python3-asyncpg)
    "$PY" -c 'import redis.asyncio' 2>/dev/null || m+=(python3-redis)
    "$PY" -c 'import uvicorn, h11' 2>/dev/null || m+=(python3-uvicorn)
    if [ "$MODE" = bench ] && [[ " $LOOPS " == *" uvloop "* ]]; then
        "$PY" -c 'import uvloop' 2>/dev/null || m+=(python3-uvloop)
    fi
    echo "${m[*]}"
}

need="$(missing)"
if [ -n "$need" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing with apt-get: $need"
        export DEBIAN_FRONTEND=noninteractive
        # shellcheck disable=SC2086 # a list of package names
        apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null; } ||
            say "apt-get install failed"
        PG_BIN="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1 || true)"
        need="$(missing)"
    fi
    if [ -n "$need" ]; then
        say "missing: $need (apt-get install -y --no-install-recommends $need)"
        if [ "$MODE" != bench ]; then
            echo "real servers: the smoke test needs: $need"
            exit 1
        fi
        say "skipped"
        exit 0
    fi
fi
[ -f "$LIBLOOP_LIBRARY" ] || die "no $LIBLOOP_LIBRARY (make lib)"
if [ "$MODE" = smoke ]; then
    LOOPS="asyncio libloop"
    "$PY" -c 'import uvloop' 2>/dev/null && LOOPS="asyncio uvloop libloop"
    PINS=unpinned
    REPS=1
    N_SMOKE=400
else
    [ "$REPS" -ge 5 ] 2>/dev/null || die "BENCH_REPS must be >= 5 (medians of at least 5 runs)"
fi
for l in $LOOPS; do
    case "$l" in
    asyncio | uvloop | libloop) ;;
    libloop-before) [ -f "${LIBLOOP_BEFORE_LIBRARY:-}" ] || die "libloop-before needs LIBLOOP_BEFORE_LIBRARY" ;;
    *) die "unknown loop $l (asyncio uvloop libloop libloop-before)" ;;
    esac
done
for p in $PINS; do
    case "$p" in pinned | unpinned) ;; *) die "unknown placement $p (pinned unpinned)" ;; esac
done

# ---- the servers ----------------------------------------------------------------------
TMP="$(mktemp -d "${TMPDIR:-/tmp}/reallibs.XXXXXX")"
PIDS=()
REDIS_PID=""
PG_DATA=""
AS_PG=() # runs PostgreSQL's programs as an unprivileged user when we are root
if [ "$(id -u)" = 0 ]; then
    pg_user=postgres
    id "$pg_user" >/dev/null 2>&1 || pg_user=nobody
    AS_PG=(runuser -u "$pg_user" --)
fi

cleanup() {
    local p
    if [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ]; then
        (cd / && ${AS_PG[@]+"${AS_PG[@]}"} "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 20 stop >/dev/null 2>&1) ||
            (cd / && ${AS_PG[@]+"${AS_PG[@]}"} "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 20 stop >/dev/null 2>&1) || true
    fi
    for p in "${PIDS[@]:-}"; do
        if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
    done
    sleep 0.2
    for p in "${PIDS[@]:-}"; do
        if [ -n "$p" ]; then kill -9 "$p" 2>/dev/null || true; fi
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_postgres() {
    local dir="$TMP/pg"
    mkdir -p "$dir/sock"
    if [ ${#AS_PG[@]} -gt 0 ]; then
        chmod 711 "$TMP"
        chown -R "$pg_user" "$dir"
    fi
    (cd / && ${AS_PG[@]+"${AS_PG[@]}"} "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 \
        --no-sync >"$TMP/initdb.log" 2>&1) || {
        cat "$TMP/initdb.log" >&2
        return 1
    }
    PG_DATA="$dir/data"
    PG_PORT="$(free_port)"
    (cd / && ${AS_PG[@]+"${AS_PG[@]}"} "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$dir/log" -w -t 60 \
        -o "-p $PG_PORT -k $dir/sock -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50 -c shared_buffers=32MB" \
        start >/dev/null) || {
        cat "$dir/log" >&2
        return 1
    }
}

start_redis() {
    mkdir -p "$TMP/redis"
    REDIS_PORT="$(free_port)"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$TMP/redis" --logfile "$TMP/redis/log" --daemonize no >/dev/null 2>&1 &
    REDIS_PID=$!
    PIDS+=("$REDIS_PID")
    "$PY" "$HERE/real_libs.py" ping-redis "$REDIS_PORT" || {
        cat "$TMP/redis/log" >&2
        return 1
    }
}

# server_cpus LIST: PostgreSQL's processes (a connection's backend inherits
# the postmaster's CPUs when it is forked) and Redis's threads on LIST.
server_cpus() {
    local pm p
    taskset -a -p -c "$1" "$REDIS_PID" >/dev/null
    pm="$(head -1 "$PG_DATA/postmaster.pid")"
    for p in "$pm" $(pgrep -P "$pm"); do
        taskset -a -p -c "$1" "$p" >/dev/null 2>&1 || true
    done
}

cpu_s() { awk -v t="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); print ($12 + $13) / t}' "/proc/$1/stat"; }

# ---- one run: a RESULT line on stdout -------------------------------------------------
PIN=()
run_client() { # WORKLOAD LOOP PORT N
    timeout 600 ${PIN[@]+"${PIN[@]}"} "$PY" "$HERE/real_libs.py" "$1" "$2" "$3" "$4"
}

# start_uvicorn LOOP: sets SRV_PID and SRV_PORT.
start_uvicorn() {
    local i
    : >"$TMP/srv.out"
    : >"$TMP/srv.err"
    ${PIN[@]+"${PIN[@]}"} "$PY" "$HERE/real_libs.py" serve "$1" 600 >>"$TMP/srv.out" 2>>"$TMP/srv.err" &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    SRV_PORT=""
    for i in $(seq 200); do
        SRV_PORT="$(awk '/^PORT /{print $2; exit}' "$TMP/srv.out")"
        [ -n "$SRV_PORT" ] && return 0
        kill -0 "$SRV_PID" 2>/dev/null || break
        sleep 0.1
    done
    say "uvicorn on $1 did not start:"
    cat "$TMP/srv.err" >&2
    stop_pid "$SRV_PID"
    return 1
}

# wrk_run SECS CONNS: wrk's output on stdout; fails on errors or non-2xx.
wrk_run() {
    local out
    out="$(timeout $(($1 + 30)) ${PIN[@]+"${PIN[@]}"} wrk -t1 -c"$2" -d"$1s" "http://$HOST:$SRV_PORT/")" || {
        echo "$out" >&2
        return 1
    }
    if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then
        say "wrk saw errors:"
        echo "$out" >&2
        return 1
    fi
    echo "$out"
}

run_uvicorn() { # LOOP
    local out c0 c1 n rps
    start_uvicorn "$1" || return 1
    wrk_run 1 50 >/dev/null || { stop_pid "$SRV_PID"; return 1; }
    c0="$(cpu_s "$SRV_PID")"
    out="$(wrk_run "$UV_SECS" 50)" || { stop_pid "$SRV_PID"; return 1; }
    c1="$(cpu_s "$SRV_PID")"
    stop_pid "$SRV_PID"
    n="$(awk '/requests in/ {print $1}' <<<"$out")"
    rps="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")"
    awk -v l="$1" -v n="$n" -v r="$rps" -v a="$c0" -v b="$c1" 'BEGIN {
        printf "RESULT loop=%s workload=uvicorn n=%d per_s=%.0f srv_cpu_us=%.2f\n", l, n, r, (b - a) * 1e6 / n }'
}

run_one() { # WORKLOAD LOOP
    if [ "$2" = libloop-before ]; then
        # libloop with the "before" library and binding, its line renamed;
        # no subshell, so that the trap still knows a server it starts.
        local lib="$LIBLOOP_LIBRARY" pypath="$PYTHONPATH" rc=0
        export LIBLOOP_LIBRARY="$LIBLOOP_BEFORE_LIBRARY"
        [ -z "${LIBLOOP_BEFORE_PYTHON:-}" ] || export PYTHONPATH="$LIBLOOP_BEFORE_PYTHON:$PYTHONPATH"
        run_one "$1" libloop >"$TMP/before.line" || rc=$?
        export LIBLOOP_LIBRARY="$lib" PYTHONPATH="$pypath"
        sed 's/^RESULT loop=libloop /RESULT loop=libloop-before /' "$TMP/before.line"
        return "$rc"
    fi
    case "$1" in
    pg1 | pgpool) run_client "$1" "$2" "$PG_PORT" "$N_PG" ;;
    redis1 | redispool) run_client "$1" "$2" "$REDIS_PORT" "$N_REDIS" ;;
    uvicorn) run_uvicorn "$2" ;;
    *) die "unknown workload $1 (pg1 pgpool redis1 redispool uvicorn)" ;;
    esac
}

versions() {
    "$PY" - <<'EOF'
import asyncpg, h11, redis, uvicorn
from redis.asyncio.connection import DefaultParser
try:
    import uvloop
    uv = uvloop.__version__
except ImportError:
    uv = 'missing'
print(f'asyncpg {asyncpg.__version__}; redis-py {redis.__version__} ({DefaultParser.__name__}); '
      f'uvicorn {uvicorn.__version__} (h11 {h11.__version__}); uvloop {uv}')
EOF
}

# ---- the smoke test's checks ----------------------------------------------------------
check() { # NAME COMMAND...: runs it, counts it, says so
    local name="$1"
    shift
    if "$@" >"$TMP/check.out" 2>&1; then
        pass=$((pass + 1))
        echo "ok   $name"
    else
        fail=$((fail + 1))
        echo "FAIL $name"
        sed 's/^/     /' "$TMP/check.out"
    fi
}
smoke_uvicorn() { # LOOP
    local rc=0
    start_uvicorn "$1" || return 1
    timeout 60 "$PY" "$HERE/real_libs.py" httpget "$SRV_PORT" 300 || rc=1
    [ "$rc" = 0 ] && { wrk_run 1 10 >/dev/null || rc=1; }
    stop_pid "$SRV_PID"
    # The server's stderr: uvicorn logs an application error there.
    if [ -s "$TMP/srv.err" ]; then
        cat "$TMP/srv.err"
        rc=1
    fi
    return "$rc"
}

t_start=$(date +%s)
start_postgres || die "PostgreSQL did not start"
start_redis || die "redis-server did not start"

# ---- servers: a command of the caller's against them (profiling, by hand) --------------
if [ "$MODE" = servers ]; then
    say "PostgreSQL on $HOST:$PG_PORT (user postgres, database postgres), Redis on $HOST:$REDIS_PORT"
    # BENCH_PINS=pinned: the servers on BENCH_PIN_CPU, as the pinned runs
    # have them (the command pins its own client: taskset -c CPU).
    if [ "$PINS" = pinned ]; then
        server_cpus "$PIN_CPU"
        say "servers pinned to CPU $PIN_CPU"
    fi
    rc=0
    REAL_PG_PORT="$PG_PORT" REAL_REDIS_PORT="$REDIS_PORT" "$@" || rc=$?
    exit "$rc"
fi

# ---- smoke: every workload on every loop, answers checked, no timing -----------------
if [ "$MODE" = smoke ]; then
    echo "real servers: $("$PG_BIN/postgres" --version), $(redis-server --version | cut -d' ' -f1-3); $(versions)"
    pass=0
    fail=0
    for l in $LOOPS; do
        # The four clients in one process (each on a fresh loop): one line each.
        timeout 300 "$PY" "$HERE/real_libs.py" smoke "$l" "$PG_PORT" "$REDIS_PORT" "$N_SMOKE" >"$TMP/clients.out" 2>&1 || true
        cat "$TMP/clients.out"
        n_ok="$(grep -c '^ok ' "$TMP/clients.out" || true)"
        pass=$((pass + n_ok))
        fail=$((fail + 4 - n_ok))
        check "uvicorn (h11): 300 keep-alive GET, 1 s of wrk ($l)" smoke_uvicorn "$l"
    done
    echo "real servers ($LOOPS; $(($(date +%s) - t_start)) s): $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
fi

# ---- the benchmark ----------------------------------------------------------------------
mkdir -p "$RES"
raw="$RES/real-raw.txt"
: >"$raw"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "real libraries: $REPS repetitions of [$WORKLOADS] x [$LOOPS] x [$PINS]; raw lines in $raw"
for k in $(seq "$REPS"); do
    for pin in $PINS; do
        if [ "$pin" = pinned ]; then
            PIN=(taskset -c "$PIN_CPU")
            server_cpus "$PIN_CPU"
        else
            PIN=()
            server_cpus "$ALL_CPUS"
        fi
        for w in $WORKLOADS; do
            for l in $LOOPS; do
                run_one "$w" "$l" >"$TMP/line" || die "$w ($pin) failed on $l"
                line="$(grep '^RESULT ' "$TMP/line")" || die "$w ($pin): no RESULT line from $l"
                echo "$line pin=$pin rep=$k" | tee -a "$raw"
            done
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

{
    echo "# Python loops: real libraries against real servers (asyncio, uvloop, libloop)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); host: $(uname -srm), $(nproc) CPUs"
    echo "- python: $("$PY" -V 2>&1) ($PY); $(versions)"
    echo "- servers: $("$PG_BIN/postgres" --version) (127.0.0.1, fsync off), $(redis-server --version | cut -d' ' -f1-3) (127.0.0.1, no persistence); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
    if [ "$LIBLOOP_PYTHON" = "$ROOT/bindings/python" ]; then
        echo "- libloop: $LIBLOOP_LIBRARY, $(commit_label) (bindings/python: $(git status --porcelain -- bindings/python | grep -q . && echo 'with uncommitted changes' || echo 'as committed'))"
    else
        echo "- libloop: $LIBLOOP_LIBRARY with the binding in $LIBLOOP_PYTHON (LIBLOOP_PYTHON)"
    fi
    case " $LOOPS " in *" libloop-before "*)
        echo "- libloop-before: $LIBLOOP_BEFORE_LIBRARY with the binding in ${LIBLOOP_BEFORE_PYTHON:-$LIBLOOP_PYTHON}" ;;
    esac
    echo "- pg1/pgpool $N_PG fetchval; redis1/redispool $N_REDIS GET (pools: 10 connections, 200 tasks); uvicorn wrk -t1 -c50 -d${UV_SECS}s"
    echo "- pinned: client, server and wrk all on CPU $PIN_CPU (taskset); unpinned: no binding"
    echo "- $REPS interleaved repetitions, one process per run; load average (1/5/15 min) at start: $load_start; at end: $load_end"
} >"$TMP/header.md"
"$PY" "$HERE/report_real.py" "$raw" "$TMP/header.md" | tee "$RES/real-latest.md"
echo "wrote $RES/real-latest.md"
