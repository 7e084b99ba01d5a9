#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python package's type stubs (bindings/python/libloop/__init__.pyi) under
# mypy --strict: a program using the public API as documented passes, and
# every line marked `# error` in a program misusing it is reported (and no
# other line), so the stubs type the API rather than leave it Any. Uses
# Debian's python3-mypy, installed with apt-get when missing and run as root.
set -u
cd "$(dirname "$0")/../bindings/python"
py=/usr/bin/python3
if ! $py -m mypy --version >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "mypy missing: installing python3-mypy with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq python3-mypy >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq python3-mypy >/dev/null; }
    fi
    $py -m mypy --version >/dev/null 2>&1 || { echo "the types check needs mypy (apt-get install python3-mypy)"; exit 1; }
fi
echo "$($py -m mypy --version)"
pass=0
fail=0
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
mypy() { $py -m mypy --strict --no-error-summary --cache-dir "$cache" "$@"; }

if out=$(mypy tests/typecheck/uses_api.py 2>&1); then
    echo "ok   mypy --strict accepts tests/typecheck/uses_api.py"
    pass=$((pass + 1))
else
    echo "$out"
    echo "FAIL mypy --strict rejects tests/typecheck/uses_api.py"
    fail=$((fail + 1))
fi

bad=tests/typecheck/misuses_api.py
out=$(mypy "$bad" 2>&1)
want=$(grep -n '# error$' "$bad" | cut -d: -f1 | sort -n | tr '\n' ' ')
got=$(echo "$out" | sed -n "s|^$bad:\([0-9]*\): error:.*|\1|p" | sort -nu | tr '\n' ' ')
if [ -n "$want" ] && [ "$want" = "$got" ]; then
    echo "ok   mypy --strict reports exactly the marked misuses (lines $want)"
    pass=$((pass + 1))
else
    echo "$out"
    echo "FAIL misuses: marked lines [$want], reported lines [$got]"
    fail=$((fail + 1))
fi
echo "types: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
