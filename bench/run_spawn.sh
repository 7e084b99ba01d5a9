#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run_spawn.sh — the subprocess workload W8 (500 x /bin/true, at most
# 16 running at a time: spawns per second) and W8-1g (the same from a parent
# that first allocates and touches 1 GiB), libloop from C against libuv and
# libev (fork + execve, and posix_spawn), interleaved; then
# bench/results/spawn-latest.md (medians, ratios against the best rival, and
# how each implementation's rate moves with the 1 GiB parent; also printed).
# Run through `make bench-spawn` (which builds build/libloop.so first) or
# directly from anywhere.
#
# Every program bounds itself (an alarm watchdog) and runs under timeout(1);
# each run is its own process, so the ballast of W8-1g belongs to that run.
#
# Environment:
#   BENCH_REPS              repetitions (default 5, min 5)
#   BENCH_SPAWN_WORKLOADS   subset of "W8 W8-1g" (default both)
#   BENCH_SPAWN_IMPLS       subset of "uv ev evps ll" (default all four):
#                           libuv (uv_spawn: fork), libev (fork + execve),
#                           libev-posix_spawn (posix_spawn: vfork-style), libloop
#   BENCH_N_W8              children per run (default 500)
#   BENCH_W8_PAR            most running at a time (default 16)
#   BENCH_W8_BIG_MIB        W8-1g's ballast in MiB (default 1024)
#   LIBLOOP_LIB_DIR / LIBLOOP_LABEL / BENCH_BIN   as in bench/run.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

# Start from fds 0-2 only. An fd inherited from whatever launched us (a CI
# runner's pipe at fd 251, say) is closed by libloop in every child, as
# close_fds demands, while fork/posix_spawn children keep it: one stray
# high fd costs libloop ~250 close() calls per spawn and the rivals nothing.
for fd in $(ls /proc/$$/fd); do
    if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

REPS="${BENCH_REPS:-5}"
WORKLOADS="${BENCH_SPAWN_WORKLOADS:-W8 W8-1g}"
IMPLS="${BENCH_SPAWN_IMPLS:-uv ev evps ll}"
N="${BENCH_N_W8:-500}"
PAR="${BENCH_W8_PAR:-16}"
BIG_MIB="${BENCH_W8_BIG_MIB:-1024}"
CC="${CC:-gcc}"
BIN="${BENCH_BIN:-$ROOT/build/bench}"
RES="$ROOT/bench/results"
PYTHON="${PYTHON:-python3}"
LIBDIR="$(cd "${LIBLOOP_LIB_DIR:-$ROOT/build}" 2>/dev/null && pwd || echo "${LIBLOOP_LIB_DIR:-$ROOT/build}")"
RUN_TIMEOUT=330 # per run; the programs' own watchdog is 300 s

[ "$REPS" -ge 5 ] 2>/dev/null || die "BENCH_REPS must be >= 5 (medians of at least 5 runs)"
command -v timeout >/dev/null || die "needs timeout(1) (coreutils)"
[ -x /bin/true ] || die "needs /bin/true"

# ---- the rivals: say what is missing instead of failing in the compiler ----
check_impls BENCH_SPAWN_IMPLS "uv ev evps ll" $IMPLS
need_lib

# ---- build ----
mkdir -p "$BIN" "$RES"
CFLAGS="-O2 -Wall -Wextra -Iinclude"
for impl in $IMPLS; do
    case "$impl" in
    uv) $CC $CFLAGS bench/spawn_uv.c -o "$BIN/spawn_uv" -luv ;;
    ev) $CC $CFLAGS bench/spawn_ev.c -o "$BIN/spawn_ev" -lev ;;
    evps) $CC $CFLAGS -DW8_POSIX_SPAWN bench/spawn_ev.c -o "$BIN/spawn_evps" -lev ;;
    ll) soname_link "$LIBDIR" && $CC $CFLAGS bench/spawn_ll.c -o "$BIN/spawn_ll" -L"$LIBDIR" -lloop -Wl,-rpath,"$LIBDIR" ;;
    esac
done

# ---- the runs ----
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
raw="$RES/spawn-raw-$stamp.txt"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
header="$TMP/header.md"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-spawn: $REPS repetitions of [$WORKLOADS] x [$IMPLS]; $N x /bin/true, at most $PAR running; W8-1g ballast $BIG_MIB MiB; raw lines in $raw"
for k in $(seq 1 "$REPS"); do
    for w in $WORKLOADS; do
        case "$w" in W8 | W8-1g) ;; *) die "unknown workload $w (W8 W8-1g)" ;; esac
        for impl in $IMPLS; do
            BENCH_W8_BIG_MIB="$BIG_MIB" timeout "$RUN_TIMEOUT" "$BIN/spawn_$impl" "$w" "$N" "$PAR" >"$TMP/line" ||
                die "$w failed for $(impl_label "$impl")"
            line="$(grep '^RESULT ' "$TMP/line")" || die "$w: no RESULT line from $(impl_label "$impl")"
            echo "$line rep=$k" >>"$raw"
            echo "    $line"
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

commit="$(commit_label)"
ver() { [ -x "$BIN/spawn_$1" ] && "$BIN/spawn_$1" version || echo "not run"; }
thp="$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
{
    echo "# libloop vs libuv vs libev: subprocesses, W8 and W8-1g (from C)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- libloop: $(ver ll), $commit; $LIBDIR/libloop.so built $(date -u -r "$LIBDIR/libloop.so" '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- go: $(go version 2>/dev/null || echo unknown)"
    echo "- gcc: $($CC --version | head -1); glibc $(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}' || echo unknown)"
    echo "- kernel: $(uname -r), $(nproc) CPUs; transparent huge pages: $thp"
    echo "- libuv: $(ver uv), libev: $(ver ev)"
    echo "- W8: $N x /bin/true (stdio on /dev/null), at most $PAR running; W8-1g: the same from a parent holding $BIG_MIB MiB it allocated and touched first"
    echo "- $REPS interleaved repetitions; load average (1/5/15 min) at start: $load_start; at end: $load_end"
} >"$header"

"$PYTHON" bench/report.py --spawn "$raw" "$header" "$RES/spawn-latest.md"
cp "$raw" "$RES/spawn-latest-raw.txt"
echo "wrote $RES/spawn-latest.md"
