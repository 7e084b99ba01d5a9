#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/python/real_instructions.sh — user-space instructions per operation
# of real_libs.py's clients (pg1: asyncpg fetchval, redis1: redis-py GET, by
# default; pgpool and redispool, the pools of 10 with 200 tasks, on request),
# by shared object, under callgrind: each client runs twice,
# with N1 and N2 operations, and the difference over N2 - N1 is the
# per-operation cost (start-up, imports and connecting cancel out). Unlike
# CPU time this does not move with the machine's load, so a change to the
# binding can be judged while other work runs. Starts PostgreSQL and Redis
# with `real_libs.sh servers`.
#
#   bash bench/python/real_instructions.sh [LOOP...]     (default: uvloop libloop)
#
# Environment: BENCH_PY (default /usr/bin/python3), BENCH_WORKLOADS (default
# "pg1 redis1"; also pgpool, redispool), BENCH_N1 / BENCH_N2 (default
# 1000 / 3000), BENCH_KEEP (a directory that keeps the callgrind files), LIBLOOP_LIBRARY,
# LIBLOOP_PYTHON (the binding measured, as for real_libs.sh).
#
# The libloop.so row moves between runs by a few thousand instructions per
# operation (the Go runtime's scheduler work depends on timing, which
# callgrind's serialised threads change); the interpreter's row (the
# binding's Python and the library's) and libloop-cpython.so's are steady
# to within ~1%.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/python/callgrind_per_op.sh
. "$HERE/callgrind_per_op.sh"
ROOT="$(cd "$HERE/../.." && pwd)"
if [ "${1:-}" != --inside ]; then
    command -v valgrind >/dev/null || { echo "real_instructions.sh: needs valgrind" >&2; exit 2; }
    exec bash "$HERE/real_libs.sh" servers bash "$HERE/real_instructions.sh" --inside "$@"
fi
shift
LOOPS=("$@")
[ ${#LOOPS[@]} -gt 0 ] || LOOPS=(uvloop libloop)
PY="${BENCH_PY:-/usr/bin/python3}"
N1="${BENCH_N1:-1000}"
N2="${BENCH_N2:-3000}"
# BENCH_KEEP=DIR keeps the callgrind files there (for callgrind_annotate).
if [ -n "${BENCH_KEEP:-}" ]; then
    mkdir -p "$BENCH_KEEP"
    OUT="$BENCH_KEEP"
else
    OUT="$(mktemp -d "${TMPDIR:-/tmp}/realinstr.XXXXXX")"
    trap 'rm -rf "$OUT"' EXIT
fi
export PYTHONPATH="${LIBLOOP_PYTHON:-$ROOT/bindings/python}${PYTHONPATH:+:$PYTHONPATH}"
export LIBLOOP_LIBRARY="${LIBLOOP_LIBRARY:-$ROOT/build/libloop.so}"
export GODEBUG=asyncpreemptoff=1 # (Go's preemption signals and valgrind)

for w in ${BENCH_WORKLOADS:-pg1 redis1}; do
    case "$w" in
    pg1 | pgpool) port="$REAL_PG_PORT" ;;
    redis1 | redispool) port="$REAL_REDIS_PORT" ;;
    *) echo "real_instructions.sh: unknown workload $w (pg1 pgpool redis1 redispool)" >&2; exit 2 ;;
    esac
    for l in "${LOOPS[@]}"; do
        for n in "$N1" "$N2"; do
            valgrind --tool=callgrind --callgrind-out-file="$OUT/$w.$l.$n" \
                "$PY" "$HERE/real_libs.py" "$w" "$l" "$port" "$n" >"$OUT/$w.$l.$n.log" 2>&1 ||
                { cat "$OUT/$w.$l.$n.log" >&2; exit 1; }
        done
        per_op_by_object "$OUT/$w.$l" "$N1" "$N2" "$w $l" operation
    done
done
