#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make test-valgrind (not part of make test): C tests under valgrind's
# memcheck, with the Go runtime's own noise suppressed (go-runtime.supp; Go
# does not support valgrind). The library is rebuilt with DWARF 4 debug
# info for its C side (valgrind 3.19 cannot read gcc 12's DWARF 5, and
# frames in capi/*.c would show as ???). Any error left, or a test that
# fails, fails the run. VALGRIND_TESTS names the tests (default below);
# VALGRIND_ROUNDS runs each that many times (races show up by chance).
set -u
cd "$(dirname "$0")/../.."
out=build/valgrind
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)"; exit 1; }
CGO_CFLAGS="-O2 -g -gdwarf-4" go build -trimpath -buildmode=c-shared \
    -ldflags "-extldflags '-Wl,--version-script=$PWD/capi/exports.map'" -o "$out/libloop.so" ./capi || exit 1
rm -f "$out/libloop.h"
# test_signals is left out: valgrind keeps SIGRTMAX for itself (its
# sigaction refuses it), which the realtime-signal test uses.
tests=${VALGRIND_TESTS:-"test_close_race test_executor test_queue_work test_release_race test_threads test_futures
 test_callbacks test_contracts test_spawn_extra test_process test_process_exit test_process_io test_process_env test_process_faults
 test_process_cycles"}
# RSS under valgrind is valgrind's as much as ours: tests print RSS bounds
# instead of asserting them when this is set (test_contracts.c).
export LIBLOOP_VALGRIND=1
rounds=${VALGRIND_ROUNDS:-1}
fail=0
for t in $tests; do
    gcc -O1 -g -gdwarf-4 -Iinclude "tests/c/$t.c" -o "$out/$t" -L"$out" -lloop -Wl,-rpath,"$PWD/$out" -lpthread -lm || exit 1
    for r in $(seq "$rounds"); do
        log="$out/$t.$r.log"
        if valgrind -q --error-exitcode=99 --suppressions=tests/valgrind/go-runtime.supp \
            --num-callers=40 "$out/$t" >"$log" 2>&1; then
            echo "ok   $t (round $r)"
        else
            echo "FAIL $t (round $r): see $log"; grep -E "^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched)" "$log" | sort | uniq -c
            fail=$((fail + 1))
        fi
    done
done
echo "valgrind: $fail failed"
[ "$fail" -eq 0 ]
