#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Python loop benchmarks: asyncio's default loop, uvloop and libloop on the
# same interpreter, interleaved (rep k runs every loop for W1, then W2, ...).
# Environment: BENCH_PY (default /usr/bin/python3), BENCH_REPS (default 5),
# BENCH_N (default 1000000), BENCH_WORKLOADS, BENCH_LOOPS (default: asyncio
# uvloop libloop libloop-tm; libloop-tm = task_machine=True, tasks only;
# libloop-before = libloop again with the library LIBLOOP_BEFORE_LIBRARY and,
# if set, the binding in LIBLOOP_BEFORE_PYTHON: a before/after comparison
# interleaved in one run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
PY="${BENCH_PY:-/usr/bin/python3}"
REPS="${BENCH_REPS:-5}"
N="${BENCH_N:-1000000}"
WORKLOADS="${BENCH_WORKLOADS:-W1 W2 W3 W6 tasks}"
LOOPS="${BENCH_LOOPS:-asyncio uvloop libloop libloop-tm}"
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export LIBLOOP_LIBRARY="${LIBLOOP_LIBRARY:-$root/build/libloop.so}"
out="$root/bench/results"
mkdir -p "$out"
raw="$out/python-raw.txt"
: > "$raw"
{
  echo "# date: $(date -u +%FT%TZ)  host: $(uname -srm)  cpus: $(nproc)"
  echo "# python: $($PY -V 2>&1) ($PY)  uvloop: $($PY -c 'import uvloop; print(uvloop.__version__)' 2>/dev/null || echo missing)"
  echo "# libloop: $($PY -c 'import libloop; print(libloop.__version__, libloop.LIBRARY_PATH)')  commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none) (+ working tree)"
  echo "# go: $(go version 2>/dev/null || echo unknown)"
  echo "# load at start: $(cut -d' ' -f1-3 /proc/loadavg)  N=$N reps=$REPS"
} | tee -a "$raw"
for rep in $(seq 1 "$REPS"); do
  for w in $WORKLOADS; do
    for l in $LOOPS; do
      # libloop-tm (task_machine=True) differs from libloop only in tasks.
      if [ "$l" = libloop-tm ] && [ "$w" != tasks ]; then continue; fi
      if [ "$l" = libloop-before ]; then
        [ -f "${LIBLOOP_BEFORE_LIBRARY:-}" ] || { echo "libloop-before needs LIBLOOP_BEFORE_LIBRARY" >&2; exit 2; }
        line="$(LIBLOOP_LIBRARY="$LIBLOOP_BEFORE_LIBRARY" \
                PYTHONPATH="${LIBLOOP_BEFORE_PYTHON:+$LIBLOOP_BEFORE_PYTHON:}$PYTHONPATH" \
                "$PY" "$here/bench_loops.py" libloop "$w" "$N")" || { echo "FAILED: $l $w" >&2; exit 1; }
        line="${line/loop=libloop /loop=libloop-before }"
      else
        line="$("$PY" "$here/bench_loops.py" "$l" "$w" "$N")" || { echo "FAILED: $l $w" >&2; exit 1; }
      fi
      echo "rep=$rep $line" | tee -a "$raw"
    done
  done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$raw"
"$PY" "$here/report.py" "$raw" | tee "$out/python-latest.md"
