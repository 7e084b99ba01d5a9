#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static checks, each failing on any finding (`make lint`; go vet runs before
# this as `make test-vet`):
#   go      gofmt -l, then staticcheck (pinned; built from the Go module proxy) over
#           every Go package on linux, and over the core (libloop/) for darwin
#           and freebsd too, the three runs merged: a name unused on one OS
#           but used on another is not reported.
#   c       cppcheck over every C file (capi, tests/c, tests/soak, examples,
#           bench, docs/examples, the Python binding's C object and its
#           tests; the headers as they are included), with the
#           warning, style, performance and portability checks and POSIX's
#           function rules; tests/cppcheck-suppressions.txt says which checks
#           are off where, and why. No formatter: the tree has no
#           clang-format style and reformatting it is not this check's job.
#   python  pyflakes (Debian's, under /usr/bin/python3) over every Python file.
# `tests/lint.sh go c` runs some. cppcheck and pyflakes are installed with
# apt-get when missing and we are root.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
STATICCHECK_VERSION=${STATICCHECK_VERSION:-v0.8.2}
BUILD=${BUILD:-build}
langs=("$@")
[ ${#langs[@]} -gt 0 ] || langs=(go c python)

# need CMD DEBIAN-PACKAGE: true when CMD runs, after installing the package
# if it is missing and we can.
need() {
    local probe=$1 pkg=$2
    bash -c "$probe" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "$pkg missing: installing it with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "$pkg" >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq "$pkg" >/dev/null; }
    fi
    bash -c "$probe" >/dev/null 2>&1 && return 0
    echo "the lint needs $pkg (apt-get install $pkg)"
    return 1
}

lint_go() {
    local unformatted
    unformatted=$(find . -path ./build -prune -o -path ./.git -prune -o -name '*.go' -print | xargs "$($GO env GOROOT)/bin/gofmt" -l)
    if [ -n "$unformatted" ]; then
        echo "not gofmt-formatted (gofmt -w them):"
        echo "$unformatted"
        return 1
    fi
    # Built once for this machine (go install is a no-op when up to date),
    # then run for each target OS.
    local bin=$PWD/$BUILD/tools out=$BUILD/staticcheck
    local sc=$bin/staticcheck
    mkdir -p "$bin" "$out"
    env -u GOOS -u GOARCH GOBIN="$bin" $GO install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ||
        { echo "staticcheck $STATICCHECK_VERSION could not be built (go install fetches it from the Go module proxy)"; return 1; }
    $sc -version
    $sc -f binary ./... >"$out/linux.bin" || return 1
    # darwin's x/sys marks every raw syscall number deprecated (use
    # libSystem's wrappers). The core calls sendto, recvfrom, getsockname
    # and getpeername raw on purpose: raw sockaddrs in and out, which no
    # wrapper gives; and a line ignore cannot serve one OS of a merged run
    # (it counts as unmatched on the others). So SA1019 is off for darwin
    # only; the linux run checks every other use of a deprecated name.
    GOOS=darwin CGO_ENABLED=0 $sc -checks=inherit,-SA1019 -f binary ./libloop/... >"$out/darwin.bin" || return 1
    GOOS=freebsd CGO_ENABLED=0 $sc -f binary ./libloop/... >"$out/freebsd.bin" || return 1
    $sc -merge "$out/linux.bin" "$out/darwin.bin" "$out/freebsd.bin"
}

lint_c() {
    need 'cppcheck --version' cppcheck || return 1
    cppcheck --version
    mkdir -p "$BUILD/cppcheck"
    # capi's C finds its headers as cgo's -I flags say: every folder of capi.
    # The Python binding's object includes its own header (and its tests
    # tests/c's helpers).
    local inc=(-I include -I bindings/python/cpython -I tests/c) d
    while IFS= read -r d; do inc+=(-I "$d"); done < <(find capi -type d -name testdata -prune -o -type d -print | sort)
    # --cppcheck-build-dir keeps results per file: an unchanged file is not
    # analysed again.
    cppcheck -q -j2 --std=c11 --library=posix "${inc[@]}" \
        --enable=warning,style,performance,portability \
        --inline-suppr --suppressions-list=tests/cppcheck-suppressions.txt \
        --cppcheck-build-dir="$BUILD/cppcheck" --error-exitcode=1 \
        capi tests/c tests/soak examples bench docs/examples \
        bindings/python/cpython bindings/python/tests/c
}

lint_python() {
    local py=/usr/bin/python3
    need "$py -m pyflakes --version" python3-pyflakes || return 1
    echo "pyflakes $($py -m pyflakes --version)"
    $py -m pyflakes bindings/python tests bench tools examples docs/examples
}

pass=0
fail=0
failed=()
for lang in "${langs[@]}"; do
    case "$lang" in go | c | python) ;; *) echo "unknown: $lang (go, c, python)"; exit 2 ;; esac
    echo "== lint: $lang"
    if "lint_$lang"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        failed+=("$lang")
    fi
done
[ $fail -eq 0 ] || echo "lint failed: ${failed[*]}"
echo "lint: $pass passed, $fail failed"
[ $fail -eq 0 ]
