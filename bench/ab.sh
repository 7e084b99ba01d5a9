#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/ab.sh — two libloop builds against libuv and libev, interleaved.
#
#   bash bench/ab.sh REPS BEFORE_BENCH_LL AFTER_BENCH_LL [WORKLOADS]
#
# Each repetition runs, for every workload (default "W1 W1-fd"), libuv,
# libev, the "before" bench_ll and the "after" one, one process each, N =
# 1,000,000; prints the median and every run's ns per callback. Build the
# rivals and the after binary with `bash bench/run.sh` (build/bench/), and a
# before one by linking bench/bench_ll.c against another build's libloop.so:
#   git worktree add /tmp/before <commit> && make -C /tmp/before lib
#   gcc -O2 -Iinclude bench/bench_ll.c -o /tmp/bench_ll_before \
#       -L/tmp/before/build -lloop -Wl,-rpath,/tmp/before/build
set -euo pipefail
REPS=$1 B=$2 A=$3 WL=${4:-"W1 W1-fd"}
cd "$(dirname "$0")/.."
declare -A runs
for _ in $(seq "$REPS"); do
    for w in $WL; do
        for impl in uv ev before after; do
            case $impl in
            uv) bin=build/bench/bench_uv ;;
            ev) bin=build/bench/bench_ev ;;
            before) bin=$B ;;
            after) bin=$A ;;
            esac
            x=$("$bin" "$w" 1000000 | grep -o "ns_per_cb=[0-9.]*" | cut -d= -f2)
            runs[$w,$impl]="${runs[$w,$impl]:-} $x"
        done
    done
done
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $REPS repetitions, ns per callback"
for w in $WL; do
    for impl in uv ev before after; do
        med=$(echo ${runs[$w,$impl]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
        echo "$w $impl median=$med runs:${runs[$w,$impl]}"
    done
done
