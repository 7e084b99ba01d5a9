#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run_tls.sh — W11, TLS: an echo server under 100 TLS 1.3 connections
# sending 1 KiB messages, and full handshakes per second with a fresh
# connection each time; libloop from C (bench/tls_ll.c) against Python's
# asyncio and uvloop servers with an ssl= context (OpenSSL; bench/python/
# tls_echo.py under /usr/bin/python3, which has Debian's python3-uvloop),
# and libloop's Python loop running the same tls_echo.py twice: with the
# ssl.SSLContext (libloop: asyncio's sslproto over libloop's transports)
# and with a libloop.TLSConfig (libloop-tls: the library's TLS); all
# interleaved. Every server meets the same client, bench/tlsload (Go's
# crypto/tls, X25519). Then the ceiling: crypto/tls alone
# (go test -bench ./bench/tlsload). Writes bench/results/tls-latest.md
# (medians) and prints it. Run through `make bench-tls` or directly.
#
# The certificate (a throwaway CA and an ECDSA P-256 "localhost" leaf) is
# made by the openssl command in a temporary directory. Everything is on
# 127.0.0.1; servers stop themselves after 900 s, the client after
# TLSLOAD_TIMEOUT (120 s); a trap kills what this script started.
#
# Environment: BENCH_REPS (default 5, min 5), BENCH_TLS_IMPLS (subset of
# "ll asyncio uvloop libloop libloop-tls"), BENCH_W11_CONNS / _MSG / _TOTAL (100, 1024, 100000),
# BENCH_HS_PARALLEL / BENCH_HS_TOTAL (8, 2000), LIBLOOP_LABEL,
# BENCH_TLS_CEILING (1; 0 skips the crypto/tls-alone benchmark).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

REPS="${BENCH_REPS:-5}"
IMPLS="${BENCH_TLS_IMPLS:-ll asyncio uvloop libloop libloop-tls}"
CONNS="${BENCH_W11_CONNS:-100}"
MSG="${BENCH_W11_MSG:-1024}"
TOTAL="${BENCH_W11_TOTAL:-100000}"
HSPAR="${BENCH_HS_PARALLEL:-8}"
HSTOTAL="${BENCH_HS_TOTAL:-2000}"
PY=/usr/bin/python3
BIN="$ROOT/build/bench"
RES="$ROOT/bench/results"

[ "$REPS" -ge 5 ] 2>/dev/null || { echo "run_tls.sh: BENCH_REPS must be >= 5" >&2; exit 2; }
for impl in $IMPLS; do
    case "$impl" in
    ll) ;;
    asyncio | libloop | libloop-tls) ;;
    uvloop) $PY -c 'import uvloop' 2>/dev/null || { echo "run_tls.sh: no uvloop for $PY (apt-get install python3-uvloop)" >&2; exit 2; } ;;
    *) echo "run_tls.sh: unknown implementation '$impl'" >&2; exit 2 ;;
    esac
done
[ -f build/libloop.so ] || make lib
mkdir -p "$BIN" "$RES"
${CC:-gcc} -O2 -g -Wall -Wextra -Iinclude bench/tls_ll.c -o "$BIN/tls_ll" -Lbuild -lloop -Wl,-rpath,"$ROOT/build"
go build -o "$BIN/tlsload" ./bench/tlsload

TMP="$(mktemp -d)"
SRV_PID=""
cleanup() {
    [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
(
    cd "$TMP"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
        -days 2 -subj /CN=bench-ca
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost
    printf 'subjectAltName=DNS:localhost\n' >ext
    openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out srv.pem
) >/dev/null 2>&1

server_cmd() {
    case "$1" in
    ll) echo "$BIN/tls_ll $TMP/srv.pem $TMP/srv.key" ;;
    libloop | libloop-tls) echo "env PYTHONPATH=$ROOT/bindings/python LIBLOOP_LIBRARY=$ROOT/build/libloop.so $PY bench/python/tls_echo.py $1 $TMP/srv.pem $TMP/srv.key" ;;
    *) echo "$PY bench/python/tls_echo.py $1 $TMP/srv.pem $TMP/srv.key" ;;
    esac
}

# start_server IMPL: sets SRV_PID and SRV_PORT.
start_server() {
    : >"$TMP/srv.out"
    $(server_cmd "$1") >>"$TMP/srv.out" 2>>"$TMP/srv.err" &
    SRV_PID=$!
    SRV_PORT=""
    for _ in $(seq 100); do
        SRV_PORT="$(awk '/^PORT /{print $2; exit}' "$TMP/srv.out")"
        [ -n "$SRV_PORT" ] && return 0
        sleep 0.1
    done
    echo "run_tls.sh: $1 server did not start" >&2
    return 1
}

stop_server() {
    kill "$SRV_PID" 2>/dev/null || true
    wait "$SRV_PID" 2>/dev/null || true
    SRV_PID=""
}

# srv_ticks: the server's CPU so far (user + system, every thread), in
# clock ticks; the server's command is python3 or tls_ll (no space in
# /proc/PID/stat's name field, so the fields count from 1).
TICK_HZ="$(getconf CLK_TCK)"
srv_ticks() { awk '{print $14 + $15}' "/proc/$SRV_PID/stat"; }

# run_load IMPL N ARGS...: one tlsload run, its RESULT line followed by the
# server's CPU µs per operation (N operations), which the load on a
# shared machine changes far less than the rates.
run_load() {
    local impl="$1" n="$2" t0 line
    shift 2
    t0="$(srv_ticks)"
    line="$(TLSLOAD_IMPL="$impl" timeout 150 "$BIN/tlsload" "$@")"
    echo "$line srv_cpu_us=$(awk -v a="$t0" -v b="$(srv_ticks)" -v hz="$TICK_HZ" -v n="$n" \
        'BEGIN {printf "%.1f", (b - a) * 1e6 / hz / n}')" | tee -a "$TMP/results"
}

: >"$TMP/results"
for rep in $(seq "$REPS"); do
    for impl in $IMPLS; do
        start_server "$impl"
        run_load "$impl" "$TOTAL" w11 127.0.0.1 "$SRV_PORT" "$TMP/ca.pem" "$CONNS" "$MSG" "$TOTAL"
        run_load "$impl" "$HSTOTAL" hs 127.0.0.1 "$SRV_PORT" "$TMP/ca.pem" "$HSPAR" "$HSTOTAL"
        stop_server
    done
    echo "rep $rep of $REPS done" >&2
done

if [ "${BENCH_TLS_CEILING:-1}" = 1 ]; then
    go test -run - -bench . -count 5 ./bench/tlsload/ | tee "$TMP/ceiling"
else
    : >"$TMP/ceiling"
fi

# ---- the report: medians ----
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
field() { # field WORKLOAD IMPL KEY
    awk -v w="$1" -v i="$2" -v k="$3" '$0 ~ "workload="w" " && $0 ~ "impl="i" " {
        for (f = 1; f <= NF; f++) { split($f, kv, "="); if (kv[1] == k) print kv[2] } }' "$TMP/results" | median
}
impl_label() {
    case "$1" in
    ll) echo "libloop from C (crypto/tls)" ;;
    asyncio) echo "asyncio + ssl" ;;
    uvloop) echo "uvloop + ssl" ;;
    libloop) echo "libloop from Python + ssl (asyncio's sslproto)" ;;
    libloop-tls) echo "libloop from Python + libloop.TLSConfig (crypto/tls)" ;;
    esac
}
{
    echo "# W11: TLS echo and handshakes ($(commit_label), $(date -u +%Y-%m-%d), $REPS runs, medians)"
    echo
    echo "Client: bench/tlsload (Go crypto/tls, TLS 1.3, X25519), on the same 2-core machine as the server."
    echo
    echo "| server | W11 round trips/s | p50 µs | p99 µs | client CPU s | server CPU µs/round trip | handshakes/s | server CPU µs/handshake |"
    echo "|---|---|---|---|---|---|---|---|"
    for impl in $IMPLS; do
        echo "| $(impl_label "$impl") | $(field W11 "$impl" per_s) | $(field W11 "$impl" p50_us) | $(field W11 "$impl" p99_us) | $(field W11 "$impl" lg_cpu_s) | $(field W11 "$impl" srv_cpu_us) | $(field HS "$impl" per_s) | $(field HS "$impl" srv_cpu_us) |"
    done
    echo
    echo "W11: $CONNS connections, $MSG-byte messages, $TOTAL round trips; handshakes: $HSTOTAL fresh connections, $HSPAR at a time."
    if [ -s "$TMP/ceiling" ]; then
        echo
        echo "Ceiling, crypto/tls alone (go test -bench . ./bench/tlsload, medians of 5):"
        echo
        for b in HandshakeTLS13 Echo1KiB; do
            echo "- $b: $(awk -v b="$b" '$1 ~ b {print $3}' "$TMP/ceiling" | median) ns/op"
        done
    fi
} | tee "$RES/tls-latest.md"
