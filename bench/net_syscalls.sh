#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/net_syscalls.sh — system calls and context switches per round trip
# of the network workloads, by kind, for libuv, libev and libloop (W4: the
# whole process; W4-2p and W5: the server process, all its threads), with
# `perf stat` on the syscalls:sys_enter_* tracepoints (no hardware counters
# needed). Needs perf with tracepoint access (root, or
# kernel.perf_event_paranoid <= -1) and the programs `bash bench/run_net.sh`
# builds (build/bench/net_{uv,ev,ll}, loadgen).
#
#   bash bench/net_syscalls.sh [REPS] [WORKLOADS]    (default 3, "W4 W4-2p W5")
#
# Prints one line per (workload, implementation, repetition):
#   W4-2p libloop rt/s=... epoll_wait=1.000 (0=0.000) read=... sendto=... futex=... cs=...
# epoll_wait counts every call, (0=...) those with timeout 0. Sizes as in
# run_net.sh: W4/W4-2p 100,000 round trips of 64 B (BENCH_N_W4), W5 100
# connections x 1 KiB, 200,000 round trips.
set -euo pipefail
REPS=${1:-3}
WL=${2:-"W4 W4-2p W5"}
cd "$(dirname "$0")/.."
BIN=${BENCH_BIN:-build/bench}
N4=${BENCH_N_W4:-100000}
command -v perf >/dev/null || { echo "net_syscalls: needs perf" >&2; exit 1; }
for p in net_uv net_ev net_ll loadgen; do
    [ -x "$BIN/$p" ] || { echo "net_syscalls: $BIN/$p missing: run bash bench/run_net.sh first" >&2; exit 1; }
done
KINDS="read write sendto recvfrom epoll_wait epoll_pwait epoll_ctl futex nanosleep"
EV=""
for k in $KINDS; do EV="$EV -e syscalls:sys_enter_$k"; done
EV="$EV -e syscalls:sys_enter_epoll_wait --filter timeout==0 -e raw_syscalls:sys_enter -e context-switches"
TMP=$(mktemp -d)
SRV=""
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$TMP"' EXIT

# report LABEL RT FILE: the counts in FILE (perf -x, output) per round trip.
report() {
    awk -F, -v lab="$1" -v rt="$2" -v kinds="$KINDS" '
        /^[0-9]/ { n++; v[n] = $1 / rt }
        END {
            k = split(kinds, names, " ")
            line = lab
            for (i = 1; i <= k; i++)
                if (v[i] > 0 || names[i] == "epoll_wait")
                    line = line sprintf(" %s=%.3f", names[i], v[i])
            line = line sprintf(" (0=%.3f) all=%.3f cs=%.3f", v[k + 1], v[k + 2], v[k + 3])
            print line
        }' "$3"
}

# server IMPL CONNS MSG TOTAL: one server, perf attached, one load generator.
server() {
    rm -f "$TMP/port" # not the last server's port: the new one writes it
    "$BIN/net_$1" server 0 120 >"$TMP/port" &
    SRV=$!
    for _ in $(seq 400); do grep -q PORT "$TMP/port" 2>/dev/null && break; sleep 0.05; done
    local port pp rate
    port=$(awk '/PORT/{print $2}' "$TMP/port")
    # shellcheck disable=SC2086
    perf stat -x, -o "$TMP/stat" $EV -p "$SRV" &
    pp=$!
    sleep 0.3
    rate=$(timeout 120 "$BIN/loadgen" w5 127.0.0.1 "$port" "$2" "$3" "$4" | grep -o 'per_s=[0-9.]*' | cut -d= -f2)
    kill -INT "$pp"
    wait "$pp" 2>/dev/null || true
    kill "$SRV" 2>/dev/null || true
    wait "$SRV" 2>/dev/null || true
    SRV=""
    report "$5 rt/s=$rate" "$4" "$TMP/stat"
}

echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg); per round trip"
for _ in $(seq "$REPS"); do
    for w in $WL; do
        for impl in uv ev ll; do
            lab="$w $(case $impl in uv) echo libuv ;; ev) echo libev ;; ll) echo libloop ;; esac)"
            case $w in
            W4)
                # shellcheck disable=SC2086
                rate=$(perf stat -x, -o "$TMP/stat" $EV "$BIN/net_$impl" w4 "$N4" | grep -o 'per_s=[0-9.]*' | cut -d= -f2)
                report "$lab rt/s=$rate" "$N4" "$TMP/stat"
                ;;
            W4-2p) server "$impl" 1 64 "$N4" "$lab" ;;
            W5) server "$impl" 100 1024 200000 "$lab" ;;
            esac
        done
    done
done
