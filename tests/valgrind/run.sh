#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make test-valgrind (not part of make test): C tests under valgrind's
# memcheck. Go does not support valgrind, so the library is built with the
# Go runtime's own valgrind annotations (-tags valgrind; runtime/valgrind.go,
# linux amd64 and arm64): the runtime registers goroutine stacks and makes
# each heap object a block memcheck knows. Without them memcheck keeps the
# state Go memory had in its last life: a goroutine's popped frames stay
# unaddressable after its stack is freed and the pages become heap (or
# another stack), and libloop's Go code and the C side then "read/write
# invalid" memory they just allocated (docs/FAULTS.md, "make
# test-valgrind"). go-runtime.supp hides what is left of the runtime's own
# noise; an error first seen in the C side, in libloop's Go code or in a
# test still fails the run. The C side gets DWARF 4 (valgrind 3.19 cannot
# read gcc 12's DWARF 5; frames in capi/*.c would show as ???). No leak
# check: the annotated heap frees blocks with their pools, which valgrind
# 3.19's leak checker cannot follow (it aborts at exit, "Block ... overlaps
# with block ..."); its summary was never asserted. Any error left, or a
# test that fails, fails the run. VALGRIND_TESTS names the tests (default
# below); VALGRIND_ROUNDS runs each that many times (races show up by
# chance); VALGRIND_ARGS adds memcheck options ("-v -v" lists the
# suppressions used). Under valgrind test_contracts makes a twentieth of
# its million futures (the annotated runtime makes memcheck track each
# object: the full loops did not finish in 44 min; docs/FAULTS.md);
# VALGRIND_GO_TAGS= (empty) builds without the annotations, as before, with
# the old go-runtime-unannotated.supp.
set -u
cd "$(dirname "$0")/../.."
out=build/valgrind
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)"; exit 1; }
gotags=${VALGRIND_GO_TAGS-valgrind}
supp=tests/valgrind/go-runtime.supp
[ "$gotags" = valgrind ] || supp=tests/valgrind/go-runtime-unannotated.supp
CGO_CFLAGS="-O2 -g -gdwarf-4" go build -tags "$gotags" -trimpath -buildmode=c-shared \
    -ldflags "-extldflags '-Wl,--version-script=$PWD/capi/exports.map'" -o "$out/libloop.so" ./capi || exit 1
rm -f "$out/libloop.h"
# A runtime without the annotations ignores the tag: insist on them.
if [ "$gotags" = valgrind ] && ! go tool nm "$out/libloop.so" | grep 'runtime\.valgrindClientRequest' >/dev/null; then
    echo "this Go's runtime has no valgrind annotations (runtime/valgrind.go): use the Go go.mod names"
    exit 1
fi
# test_signals is left out: valgrind keeps SIGRTMAX for itself (its
# sigaction refuses it), which the realtime-signal test uses.
tests=${VALGRIND_TESTS:-"test_loop_close_race test_executor test_executor_queue_work test_ids_release_race test_threads test_futures
 test_callbacks test_contracts test_process_spawn_extra test_process test_process_exit test_process_io test_process_env test_badinput_process
 test_process_cycles test_timers_handles test_threads_postq test_threads_postq_race test_chain test_direct_write test_direct_write_lost
 test_tcp_peer_calls test_sink test_soon"}
# RSS under valgrind is valgrind's as much as ours: tests print RSS bounds
# instead of asserting them when this is set (test_contracts.c).
export LIBLOOP_VALGRIND=1
rounds=${VALGRIND_ROUNDS:-1}
fail=0
for t in $tests; do
    # A name not in tests/c is a test of the Python binding's C object
    # (bindings/python/tests/c), built with the object's sources.
    src=(tests/c/$t.c)
    [ -f "${src[0]}" ] || src=(-Ibindings/python/cpython -Itests/c "bindings/python/tests/c/$t.c" bindings/python/cpython/*.c)
    gcc -O1 -g -gdwarf-4 -Iinclude "${src[@]}" -o "$out/$t" -L"$out" -lloop -Wl,-rpath,"$PWD/$out" -lpthread -lm || exit 1
    for r in $(seq "$rounds"); do
        log="$out/$t.$r.log"
        # shellcheck disable=SC2086 # VALGRIND_ARGS: several options
        if valgrind -q --error-exitcode=99 --leak-check=no --suppressions="$supp" \
            --num-callers=40 ${VALGRIND_ARGS:-} "$out/$t" >"$log" 2>&1; then
            echo "ok   $t (round $r)"
        else
            echo "FAIL $t (round $r): see $log"; grep -E "^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched)" "$log" | sort | uniq -c
            fail=$((fail + 1))
        fi
    done
done
echo "valgrind: $fail failed"
[ "$fail" -eq 0 ]
