#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make install` as a user meets it: a staged install (DESTDIR) has the
# versioned library, its SONAME link and the -lloop link, and a program built
# with pkg-config alone records the SONAME and runs against it; a real
# install (PREFIX) serves find_package(libloop) to a CMake project whose
# program runs, and refuses an incompatible version; pip builds and installs
# the Python package with its type information and the library inside.
# Installs what it needs with apt-get when missing and run as root.
set -u
cd "$(dirname "$0")/.."
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

need_apt() { # need_apt TEST_COMMAND PACKAGE...
    local probe="$1"; shift
    eval "$probe" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing with apt-get: $*"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "$@" >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq "$@" >/dev/null; }
    fi
    eval "$probe" >/dev/null 2>&1 || { echo "the install test needs: $* (apt-get install $*)"; exit 1; }
}
need_apt "command -v pkg-config" pkg-config
need_apt "command -v cmake" cmake
need_apt "/usr/bin/python3 -c 'import setuptools, wheel, pip'" python3-setuptools python3-wheel python3-pip

version=$(sed -n 's/^#define LL_VERSION_[A-Z]* \([0-9]*\)$/\1/p' include/libloop.h | paste -sd. -)
major=${version%%.*}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- staged install (DESTDIR), pkg-config, SONAME -------------------------------
stage="$tmp/stage"
make -s install DESTDIR="$stage" PREFIX=/usr >/dev/null
lib="$stage/usr/lib"
check "libloop.so.$version is the library (a regular file)" test -f "$lib/libloop.so.$version" -a ! -L "$lib/libloop.so.$version"
check "libloop.so.$major -> libloop.so.$version" test "$(readlink "$lib/libloop.so.$major")" = "libloop.so.$version"
check "libloop.so -> libloop.so.$major" test "$(readlink "$lib/libloop.so")" = "libloop.so.$major"
soname=$(readelf -d "$lib/libloop.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "SONAME is libloop.so.$major (readelf -d: '$soname')" test "$soname" = "libloop.so.$major"
check "the CMake package is installed" test -f "$lib/cmake/libloop/libloopConfig.cmake" -a -f "$lib/cmake/libloop/libloopConfigVersion.cmake"

flags=$(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_LIBDIR="$lib/pkgconfig" pkg-config --cflags --libs libloop)
echo "     pkg-config --cflags --libs libloop: $flags"
prog="$tmp/echo_server"
if ${CC:-gcc} -O2 examples/echo_server.c $flags -Wl,-rpath,"$lib" -o "$prog"; then
    needed=$(readelf -d "$prog" | sed -n 's/.*(NEEDED).*\[\(libloop[^]]*\)\]/\1/p')
    check "a program built with pkg-config records NEEDED $needed (the SONAME)" test "$needed" = "libloop.so.$major"
    resolved=$(ldd "$prog" | awk '/libloop/ {print $3}')
    check "it loads the installed library ($resolved)" test "$resolved" = "$lib/libloop.so.$major"
    check "it runs against the installed library" sh -c "'$prog' | tail -1"
else
    bad "compile examples/echo_server.c with pkg-config's flags"
fi

# ---- real install (PREFIX) and find_package ----------------------------------------
prefix="$tmp/prefix"
make -s install PREFIX="$prefix" >/dev/null
cmake_build() { # cmake_build DIR WANT
    cmake -S tests/install -B "$1" -DCMAKE_PREFIX_PATH="$prefix" -DLIBLOOP_WANT="$2" \
        -DLIBLOOP_SOURCE="$PWD/examples/tasks.c" >"$1.log" 2>&1 &&
        cmake --build "$1" >>"$1.log" 2>&1
}
if cmake_build "$tmp/cm" "$version"; then
    ok "find_package(libloop $version) and a build against PREFIX"
    needed=$(readelf -d "$tmp/cm/app" | sed -n 's/.*(NEEDED).*\[\(libloop[^]]*\)\]/\1/p')
    check "the CMake-built program records NEEDED libloop.so.$major" test "$needed" = "libloop.so.$major"
    resolved=$(ldd "$tmp/cm/app" | awk '/libloop/ {print $3}')
    check "it loads the installed library ($resolved)" test "$resolved" = "$prefix/lib/libloop.so.$major"
    check "the find_package program runs" sh -c "'$tmp/cm/app' >/dev/null"
else
    cat "$tmp/cm.log"
    bad "find_package(libloop $version) and a build against PREFIX"
fi
next_minor="$major.$(( $(echo "$version" | cut -d. -f2) + 1 ))"
if cmake_build "$tmp/cm-minor" "$next_minor"; then
    bad "find_package(libloop $next_minor) must refuse $version"
else
    check "find_package(libloop $next_minor) refuses $version, saying why" grep -q "libloopConfig.cmake, version: $version" "$tmp/cm-minor.log"
fi
if cmake_build "$tmp/cm-major" "$((major + 1)).0"; then
    bad "find_package(libloop $((major + 1)).0) must refuse $version"
else
    ok "find_package(libloop $((major + 1)).0) refuses $version"
fi

# ---- pip ----------------------------------------------------------------------------
site="$tmp/site"
if LIBLOOP_LIBRARY="$PWD/build/libloop.so" /usr/bin/python3 -m pip install -q --no-build-isolation \
    --no-deps --target "$site" bindings/python >"$tmp/pip.log" 2>&1; then
    ok "pip install --no-build-isolation bindings/python"
    check "the package carries libloop.so" test -f "$site/libloop/libloop.so"
    check "the package carries py.typed (PEP 561)" test -f "$site/libloop/py.typed"
    check "the package carries its stubs (__init__.pyi)" test -f "$site/libloop/__init__.pyi"
    check "python -m libloop from the installed package, no environment variable" \
        sh -c "cd '$site' && env -u LIBLOOP_LIBRARY PYTHONPATH='$site' /usr/bin/python3 -m libloop"
else
    cat "$tmp/pip.log"
    bad "pip install --no-build-isolation bindings/python"
fi
rm -rf bindings/python/build bindings/python/*.egg-info

# The same into a virtual environment, as a user does it: a venv that sees
# Debian's pip and setuptools (no PyPI here), the package installed into it,
# then `import libloop` with no variable set, from anywhere.
venv="$tmp/venv"
if /usr/bin/python3 -m venv --without-pip --system-site-packages "$venv" >"$tmp/venv.log" 2>&1 &&
    LIBLOOP_LIBRARY="$PWD/build/libloop.so" "$venv/bin/python" -m pip install -q --no-build-isolation \
        --no-deps bindings/python >"$tmp/pip-venv.log" 2>&1; then
    ok "pip install --no-build-isolation bindings/python into a venv"
    check "import libloop in the venv runs a coroutine on libloop's loop, no environment variable" \
        sh -c "cd / && env -u LIBLOOP_LIBRARY -u PYTHONPATH '$venv/bin/python' -c '
import asyncio, libloop
async def main():
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__.split(\".\")[0]
assert libloop.run(main()) == \"libloop\"
assert libloop.__file__.startswith(\"$venv\"), libloop.__file__
'"
else
    cat "$tmp/venv.log" "$tmp/pip-venv.log" 2>/dev/null
    bad "pip install --no-build-isolation bindings/python into a venv"
fi
rm -rf bindings/python/build bindings/python/*.egg-info

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
