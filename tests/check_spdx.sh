#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every source file says its licence in its first lines, as an SPDX tag
# (SPDX-License-Identifier: MIT, LICENSE's), so a file copied out of the tree
# still carries it. Source: Go, C and headers, Python (and stubs), shell,
# Makefile, CMake files, the linker version script, and any file starting
# with #!. Fails naming every file without the tag.
set -euo pipefail
cd "$(dirname "$0")/.."
tag='SPDX-License-Identifier: MIT'

# Tracked files and new ones not ignored; outside git, every file but build/.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files() { git ls-files -z --cached --others --exclude-standard; }
else
    files() { find . -path ./build -prune -o -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||'; }
fi

is_source() {
    case "$1" in
    *.go | *.c | *.h | *.py | *.pyi | *.sh | */Makefile | Makefile | *CMakeLists.txt | *.cmake | *.cmake.in | *.map) return 0 ;;
    esac
    [ "$(head -c 2 "$1" 2>/dev/null)" = '#!' ]
}

checked=0
missing=()
while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue # deleted but still in the index
    is_source "$f" || continue
    checked=$((checked + 1))
    head -n 3 "$f" | grep -qF "$tag" || missing+=("$f")
done < <(files)

if [ "$checked" -eq 0 ]; then
    echo "spdx: no source file found"
    exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
    printf 'no "%s" in the first 3 lines: %s\n' "$tag" "${missing[@]}"
    echo "spdx: $checked files, ${#missing[@]} without the tag"
    echo "spdx: 0 passed, 1 failed"
    exit 1
fi
echo "spdx: $checked source files, each tagged $tag"
echo "spdx: 1 passed, 0 failed"
