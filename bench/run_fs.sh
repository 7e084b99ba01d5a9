#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run_fs.sh — file reads from the page cache: libloop's ll_fs_read_cb
# on its file pool against libuv's uv_fs_read on its thread pool (4 threads
# each; `llf`: libloop's ll_fs_read with a future per read), reads of 4 KiB and 1 MiB with 1 read in flight (latency-bound)
# and 4 and 16 in flight (throughput), interleaved in one invocation; then
# bench/results/fs-latest.md (medians of reads/s and the ratio libloop ÷
# libuv; also printed). Run through `make bench-fs` (which builds
# build/libloop.so first) or directly from anywhere.
#
# Environment:
#   BENCH_REPS          repetitions (default 5, min 5)
#   BENCH_FS_SIZES      read sizes in bytes (default "4096 1048576")
#   BENCH_FS_DEPTHS     reads in flight (default "1 4 16")
#   BENCH_FS_IMPLS      subset of "uv ll llf" (default "uv ll"; llf is
#                       fs_ll.c built with -DFS_LL_FUTURE)
#   BENCH_FS_FILE       the file read (default a 64 MiB file made under
#                       $TMPDIR, read once first so it is in the page cache)
#   BENCH_N_FS_SMALL    reads per run below 64 KiB (default 20000)
#   BENCH_N_FS_LARGE    reads per run from 64 KiB (default 2000)
#   LIBLOOP_LIB_DIR / LIBLOOP_LABEL / BENCH_BIN   as in bench/run.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
. bench/common.sh

REPS="${BENCH_REPS:-5}"
SIZES="${BENCH_FS_SIZES:-4096 1048576}"
DEPTHS="${BENCH_FS_DEPTHS:-1 4 16}"
IMPLS="${BENCH_FS_IMPLS:-uv ll}"
N_SMALL="${BENCH_N_FS_SMALL:-20000}"
N_LARGE="${BENCH_N_FS_LARGE:-2000}"
CC="${CC:-gcc}"
BIN="${BENCH_BIN:-$ROOT/build/bench}"
RES="$ROOT/bench/results"
PYTHON="${PYTHON:-python3}"
LIBDIR="$(cd "${LIBLOOP_LIB_DIR:-$ROOT/build}" 2>/dev/null && pwd || echo "${LIBLOOP_LIB_DIR:-$ROOT/build}")"
RUN_TIMEOUT=300

[ "$REPS" -ge 5 ] 2>/dev/null || die "BENCH_REPS must be >= 5 (medians of at least 5 runs)"
command -v timeout >/dev/null || die "needs timeout(1) (coreutils)"
check_impls BENCH_FS_IMPLS "uv ll llf" $IMPLS
need_lib

mkdir -p "$BIN" "$RES"
CFLAGS="-O2 -Wall -Wextra -Iinclude"
build_impls fs $(echo "$IMPLS" | sed 's/\bllf\b//')
case " $IMPLS " in
*" llf "*) soname_link "$LIBDIR" && $CC $CFLAGS -DFS_LL_FUTURE bench/fs_ll.c -o "$BIN/fs_llf" -L"$LIBDIR" -lloop -Wl,-rpath,"$LIBDIR" ;;
esac

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
FILE="${BENCH_FS_FILE:-$TMP/fs-bench.dat}"
if [ -z "${BENCH_FS_FILE:-}" ]; then
    # 64 MiB whose byte at offset o is (o / 4096) & 0xff: each read checks its first byte.
    "$PYTHON" -c '
import sys
with open(sys.argv[1], "wb") as f:
    for p in range(64 * 256):
        f.write(bytes([p & 0xff]) * 4096)
' "$FILE"
fi
cat "$FILE" >/dev/null # into the page cache

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
raw="$RES/fs-raw-$stamp.txt"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench-fs: $REPS repetitions of sizes [$SIZES] x depths [$DEPTHS] x [$IMPLS]; raw lines in $raw"
for k in $(seq 1 "$REPS"); do
    for size in $SIZES; do
        n="$N_SMALL"
        [ "$size" -lt 65536 ] || n="$N_LARGE"
        for depth in $DEPTHS; do
            for impl in $IMPLS; do
                line="$(timeout "$RUN_TIMEOUT" "$BIN/fs_$impl" "$FILE" "$size" "$depth" "$n" | grep '^RESULT ')" ||
                    die "size $size depth $depth failed for $impl"
                echo "$line rep=$k" >>"$raw"
                echo "    $line"
            done
        done
    done
    echo "  repetition $k/$REPS done (load $(cut -d' ' -f1 /proc/loadavg))"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"

ver() { [ -x "$BIN/fs_$1" ] && "$BIN/fs_$1" version || echo "not run"; }
out="$RES/fs-latest.md"
{
    echo "# libloop vs libuv: file reads from the page cache (from C)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- libloop: $(ver ll), $(commit_label); libuv: $(ver uv)"
    echo "- go: $(go version 2>/dev/null || echo unknown); gcc: $($CC --version | head -1)"
    echo "- kernel: $(uname -r), $(nproc) CPUs; load average at start: $load_start; at end: $load_end"
    echo "- reads of SIZE bytes at offsets cycling through a 64 MiB cached file, DEPTH in flight, each completion"
    echo "  submitting the next (libloop: ll_fs_read_cb's callback, libloop-future: a done callback per future; libuv: the request's callback); 4 pool threads each"
    echo "- $REPS interleaved repetitions; medians"
    echo
    "$PYTHON" - "$raw" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split()[1:])
    runs[(int(kv["size"]), int(kv["depth"]), kv["impl"])].append(kv)
def med(rows, key):
    return statistics.median(float(r[key]) for r in rows)
shapes = sorted({(s, d) for s, d, _ in runs})
fut = any(i == "libloop-future" for _, _, i in runs)
print("| read | in flight | libuv reads/s | libloop reads/s | libloop ÷ libuv | libuv µs/read | libloop µs/read | libuv CPU s | libloop CPU s |" + (" future ÷ libuv |" if fut else ""))
print("|---|---|---|---|---|---|---|---|---|" + ("---|" if fut else ""))
for s, d in shapes:
    uv, ll, llf = runs.get((s, d, "libuv")), runs.get((s, d, "libloop")), runs.get((s, d, "libloop-future"))
    size = "4 KiB" if s == 4096 else "1 MiB" if s == 1 << 20 else "%d B" % s
    cells = [size, str(d)]
    cells += ["%.0f" % med(uv, "per_s") if uv else "—", "%.0f" % med(ll, "per_s") if ll else "—"]
    cells += ["%.2f" % (med(ll, "per_s") / med(uv, "per_s")) if uv and ll else "—"]
    cells += ["%.1f" % med(r, "us_per_op") if r else "—" for r in (uv, ll)]
    cells += ["%.3f" % med(r, "cpu_s") if r else "—" for r in (uv, ll)]
    if fut:
        cells += ["%.2f" % (med(llf, "per_s") / med(uv, "per_s")) if uv and llf else "—"]
    print("| " + " | ".join(cells) + " |")
PY
} >"$out"
cp "$raw" "$RES/fs-latest-raw.txt"
cat "$out"
echo "wrote $out"
