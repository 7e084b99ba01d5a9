#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/python/server_instructions.sh — user-space instructions per round
# trip (W5p: bench_net.py's Protocol echo server under bench/loadgen, 100
# connections x 1 KiB) and per request (W9: its aiohttp hello-world server
# under http_load.py, 50 keep-alive connections) of the server process, by
# shared object, under callgrind. Each server runs twice, for N1 and N2
# round trips or requests, and the difference over N2 - N1 is the
# per-request cost (start-up, imports and connecting cancel out), as in
# real_instructions.sh. The server is ended by SIGTERM after its load
# (callgrind writes its profile then too; SIGINT would not do: a background
# job of a script starts with SIGINT ignored).
#
#   bash bench/python/server_instructions.sh [LOOP...]   (default: uvloop libloop)
#
# Environment: BENCH_PY (default /usr/bin/python3), BENCH_WORKLOADS (default
# "W5p W9"), BENCH_N1 / BENCH_N2 (default 1000 / 3000), BENCH_KEEP (a
# directory: keep the callgrind files there, e.g. for
# `callgrind_annotate --inclusive=no FILE`), LIBLOOP_LIBRARY, LIBLOOP_PYTHON
# (the binding measured; default this tree's).
#
# The libloop.so row moves between runs by a few hundred instructions per
# request (Go's scheduler work depends on timing, which callgrind's
# serialised threads change); the interpreter's and libloop-cpython.so's
# rows are steady to ~1%. The server is slowed ~50x under callgrind, so the
# events of one poll come in bigger batches than in a timed run.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/python/callgrind_per_op.sh
. "$HERE/callgrind_per_op.sh"
ROOT="$(cd "$HERE/../.." && pwd)"
command -v valgrind >/dev/null || { echo "server_instructions.sh: needs valgrind" >&2; exit 2; }
LOOPS=("$@")
[ ${#LOOPS[@]} -gt 0 ] || LOOPS=(uvloop libloop)
PY="${BENCH_PY:-/usr/bin/python3}"
N1="${BENCH_N1:-1000}"
N2="${BENCH_N2:-3000}"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/srvinstr.XXXXXX")"
SRV=""
cleanup() {
    if [ -n "$SRV" ]; then kill "$SRV" 2>/dev/null || true; fi
    rm -rf "$OUT"
}
trap cleanup EXIT
export PYTHONPATH="${LIBLOOP_PYTHON:-$ROOT/bindings/python}${PYTHONPATH:+:$PYTHONPATH}"
export LIBLOOP_LIBRARY="${LIBLOOP_LIBRARY:-$ROOT/build/libloop.so}"
export GODEBUG=asyncpreemptoff=1 # (Go's preemption signals and valgrind)
mkdir -p "$ROOT/build/bench"
"${CC:-gcc}" -O2 -Wall -Wextra "$ROOT/bench/loadgen.c" -o "$ROOT/build/bench/loadgen"

# run W LOOP N: one server under callgrind, N round trips or requests.
run() {
    local w="$1" l="$2" n="$3" kind port="" _
    case "$w" in
    W5p) kind=proto ;;
    W9) kind=http ;;
    *) echo "server_instructions.sh: unknown workload $w (W5p W9)" >&2; exit 2 ;;
    esac
    : >"$OUT/srv.out"
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$w.$l.$n" \
        "$PY" "$HERE/bench_net.py" serve "$l" "$kind" 900 >"$OUT/srv.out" 2>"$OUT/$w.$l.$n.log" &
    SRV=$!
    for _ in $(seq 1200); do
        port="$(awk '/^PORT /{print $2; exit}' "$OUT/srv.out")"
        [ -n "$port" ] && break
        kill -0 "$SRV" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$OUT/$w.$l.$n.log" >&2; exit 1; }
    if [ "$w" = W5p ]; then
        LOADGEN_TIMEOUT=600 timeout 600 "$ROOT/build/bench/loadgen" w5 127.0.0.1 "$port" 100 1024 "$n" >/dev/null
    else
        timeout 600 "$PY" "$HERE/http_load.py" "$port" 50 "$n" >/dev/null
    fi
    kill -TERM "$SRV"
    wait "$SRV" || true # (the signal's status)
    SRV=""
    [ -s "$OUT/$w.$l.$n" ] || { cat "$OUT/$w.$l.$n.log" >&2; exit 1; }
    [ -z "${BENCH_KEEP:-}" ] || { mkdir -p "$BENCH_KEEP"; cp "$OUT/$w.$l.$n" "$BENCH_KEEP/"; }
}

for w in ${BENCH_WORKLOADS:-W5p W9}; do
    for l in "${LOOPS[@]}"; do
        run "$w" "$l" "$N1"
        run "$w" "$l" "$N2"
        per_op_by_object "$OUT/$w.$l" "$N1" "$N2" "$w $l" request
    done
done
