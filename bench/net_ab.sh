#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/net_ab.sh — two libloop builds against libuv and libev on the
# network workloads, interleaved (bench/ab.sh's counterpart for net_*.c).
#
#   bash bench/net_ab.sh REPS BEFORE_NET_LL AFTER_NET_LL [WORKLOADS]
#
# WORKLOADS: any of W4 (one process, client and server in one loop), W4-2p
# (the server alone, loadgen 1 connection x 64 B) and W5 (the server,
# loadgen 100 connections x 1 KiB); default "W4 W4-2p W5". Each repetition
# runs libuv, libev, the "before" net_ll and the "after" one, one process
# each, for every workload; prints the medians and every run of round
# trips/s and of CPU µs per round trip (W4: the process's user+sys from
# its RESULT line; W4-2p, W5: the server's, from /proc/PID/stat, 10 ms
# ticks), and for W4-2p and W5 the median of the load generator's p99
# latency. Build the rivals, the load generator and the after binary with
# `bash bench/run_net.sh` (build/bench/), a before one by linking
# bench/net_ll.c against another build's libloop.so:
#   git worktree add --detach /tmp/before <commit> && make -C /tmp/before lib
#   gcc -O2 -Iinclude bench/net_ll.c -o /tmp/net_ll_before \
#       -L/tmp/before/build -lloop -Wl,-rpath,/tmp/before/build
set -euo pipefail
REPS=$1 B=$2 A=$3 WL=${4:-"W4 W4-2p W5"}
cd "$(dirname "$0")/.."
BIN=${BENCH_BIN:-build/bench}
N4=${BENCH_N_W4:-100000}
TMP=$(mktemp -d)
SRV=""
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$TMP"' EXIT
TCK=$(getconf CLK_TCK)
declare -A rate cpu p99

# serve BIN CONNS MSG TOTAL: "rate cpu_us_per_rt" of one server run.
serve() {
    rm -f "$TMP/port" # not the last server's port: the new one writes it
    "$1" server 0 120 >"$TMP/port" &
    SRV=$!
    for _ in $(seq 400); do grep -q PORT "$TMP/port" 2>/dev/null && break; sleep 0.05; done
    local port r t0 t1
    port=$(awk '/PORT/{print $2}' "$TMP/port")
    t0=$(awk '{print $14 + $15}' "/proc/$SRV/stat")
    local line p99
    line=$(timeout 120 "$BIN/loadgen" w5 127.0.0.1 "$port" "$2" "$3" "$4" | grep RESULT)
    t1=$(awk '{print $14 + $15}' "/proc/$SRV/stat")
    r=$(echo "$line" | grep -o 'per_s=[0-9.]*' | cut -d= -f2)
    p99=$(echo "$line" | grep -o 'p99_us=[0-9.]*' | cut -d= -f2)
    kill "$SRV" 2>/dev/null || true
    wait "$SRV" 2>/dev/null || true
    SRV=""
    echo "${r:-0} $(awk -v d=$((t1 - t0)) -v t="$TCK" -v n="$4" 'BEGIN{printf "%.2f", d / t / n * 1e6}') ${p99:-0}"
}

for _ in $(seq "$REPS"); do
    for w in $WL; do
        for impl in uv ev before after; do
            case $impl in
            uv) bin=$BIN/net_uv ;;
            ev) bin=$BIN/net_ev ;;
            before) bin=$B ;;
            after) bin=$A ;;
            esac
            case $w in
            W4)
                line=$("$bin" w4 "$N4" | grep RESULT)
                x=$(echo "$line" | grep -o 'per_s=[0-9.]*' | cut -d= -f2)
                c=$(echo "$line" | grep -o 'cpu_s=[0-9.]*' | cut -d= -f2)
                set -- "$x" "$(awk -v c="$c" -v n="$N4" 'BEGIN{printf "%.2f", c / n * 1e6}')"
                ;;
            W4-2p) serve "$bin" 1 64 "$N4" >"$TMP/run" && read -r x c l <"$TMP/run" && set -- "$x" "$c" "$l" ;;
            W5) serve "$bin" 100 1024 200000 >"$TMP/run" && read -r x c l <"$TMP/run" && set -- "$x" "$c" "$l" ;;
            esac
            rate[$w,$impl]="${rate[$w,$impl]:-} $1"
            cpu[$w,$impl]="${cpu[$w,$impl]:-} $2"
            p99[$w,$impl]="${p99[$w,$impl]:-} ${3:-}"
        done
    done
done
med() { echo "$1" | tr ' ' '\n' | sort -n | awk 'NF{a[++n]=$1} END{print a[int((n+1)/2)]}'; }
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $REPS repetitions"
for w in $WL; do
    for impl in uv ev before after; do
        lat=""
        [ "$w" != W4 ] && lat=" p99_us median=$(med "${p99[$w,$impl]}")"
        echo "$w $impl rt/s median=$(med "${rate[$w,$impl]}") cpu_us/rt median=$(med "${cpu[$w,$impl]}")$lat runs:${rate[$w,$impl]} |${cpu[$w,$impl]}"
    done
done
