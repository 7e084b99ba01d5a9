#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library exports exactly the functions the public headers declare:
# nothing internal (ll__*, cgo, the Go runtime) leaks, nothing declared is
# missing.
set -euo pipefail
lib="${1:-build/libloop.so}"
declared=$(grep -hE '^[a-z].*\bll_[a-z0-9_]+\(' include/libloop.h include/libloop/*.h |
    grep -v '^typedef' | grep -oE '\bll_[a-z0-9_]+\(' | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$extra" ] || [ -n "$missing" ]; then
    [ -n "$extra" ] && echo "exported but not declared: $extra"
    [ -n "$missing" ] && echo "declared but not exported: $missing"
    echo "exports: 0 passed, 1 failed"
    exit 1
fi
echo "exports: $(echo "$declared" | wc -l) functions, exactly the header's"
echo "exports: 1 passed, 0 failed"
