#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library `make lib` builds (and `make install` and the Python wheel
# ship) carries no Go symbol table and no DWARF: 6.4 MB instead of 9.1 MB,
# the loaded image the same (docs/FOOTPRINT.md). Its exported ll_* stay in
# the dynamic symbol table, and `make lib-debug` keeps both for gdb, perf
# and callgrind.
set -euo pipefail
lib="${1:-build/libloop.so}"
sections=$(readelf -SW "$lib" | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\).*/\1/p')
fail=0
for s in .symtab .strtab .debug_info .debug_line .zdebug_info; do
    if grep -qx -- "$s" <<<"$sections"; then
        echo "$lib carries $s (build it with -ldflags '-s -w', as make lib does)"
        fail=1
    fi
done
dynsyms=$(nm -D --defined-only "$lib")
if ! grep -q ' T ll_loop_new\(@\|$\)' <<<"$dynsyms"; then
    echo "$lib does not export ll_loop_new in its dynamic symbol table"
    fail=1
fi
if [ "$fail" -ne 0 ]; then
    echo "stripped: 0 passed, 1 failed"
    exit 1
fi
echo "stripped: $(stat -c %s "$lib") bytes, no symbol table nor DWARF, ll_* exported"
echo "stripped: 1 passed, 0 failed"
