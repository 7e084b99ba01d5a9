#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make fuzz (not part of make test): every go test -fuzz target of the core
# and the C ABI, one after the other, each for FUZZTIME (default 10m, as
# issue 13 asks), one worker (-parallel 1) under nice. A crasher is kept by
# go test in <package>/testdata/fuzz/<Target>/ and then runs as a seed in
# every plain `go test` (make test-core): commit it with the fix.
# FUZZ_TARGETS="pkg:Target ..." picks some.
set -u
cd "$(dirname "$0")/.."
time=${FUZZTIME:-10m}
targets=${FUZZ_TARGETS:-"capi:FuzzIDTable capi:FuzzCStrings capi:FuzzSpawnOptions capi:FuzzWriteBufferLimits
 capi:FuzzSpawnExtra capi:FuzzCallLaterDelay capi:FuzzForgedIDs capi:FuzzErrorStrings libloop:FuzzParseNumeric libloop:FuzzSockaddrPort
 libloop:FuzzSendToAddr libloop:FuzzTimerHeapOrder libloop:FuzzReadyQueueFIFO"}
fail=0
for pt in $targets; do
    pkg=${pt%%:*} target=${pt#*:}
    start=$(date +%s)
    if out=$(nice -n 10 go test -run '^$' -fuzz "^$target\$" -fuzztime "$time" -timeout 0 -parallel 1 "./$pkg/" 2>&1); then
        status=ok
    else
        status=FAIL
        fail=$((fail + 1))
    fi
    execs=$(printf '%s\n' "$out" | grep -o 'execs: [0-9]*' | tail -n 1)
    echo "$status $pkg $target $(( $(date +%s) - start ))s $execs"
    [ "$status" = ok ] || printf '%s\n' "$out" | tail -n 30
done
echo "fuzz: $fail failed"
[ "$fail" -eq 0 ]
