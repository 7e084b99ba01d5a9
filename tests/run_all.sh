#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every suite (each a make target; lint includes test-vet), goes on past a failing one so one
# run shows everything, and ends with one summary line counting suites.
set -u
cd "$(dirname "$0")/.."
suites=(test-core lint test-purego test-c test-asan test-cmake test-python test-real-libs test-real-servers test-docs test-types test-exports test-stripped test-abi test-spdx test-install)
passed=0
failed=0
failed_names=()
for s in "${suites[@]}"; do
    echo "=== $s"
    if make --no-print-directory "$s"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failed_names+=("$s")
    fi
done
if [ "$failed" -gt 0 ]; then
    echo "failed suites: ${failed_names[*]}"
fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
