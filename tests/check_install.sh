#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make install` as a user meets it: a staged install (DESTDIR) has the
# versioned library, its SONAME link and the -lloop link, and a program built
# with pkg-config alone records the SONAME and runs against it; a real
# install (PREFIX) serves find_package(libloop) to a CMake project whose
# program runs, and refuses an incompatible version; on every supported
# Python (Debian's 3.11 and pyenv's 3.11, 3.12, 3.13), pip offline installs
# the Python package into a fresh venv with its type information and the
# library inside, builds a wheel that is checked file by file, and installs
# it editable; an sdist builds and says what installing it needs.
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
# Debian's python3 makes a venv with pip only with python3-venv (ensurepip
# and its wheels); the pyenv interpreters have ensurepip built in.
need_apt "/usr/bin/python3 -m ensurepip --version" python3-venv

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

# ---- pip, on every interpreter ---------------------------------------------------
# The package's build backend (bindings/python/build_backend) uses the standard
# library only, so pip needs nothing from PyPI. Each interpreter gets a fresh
# venv (pip from ensurepip, offline) and, as a user does it: pip install
# --no-index, then `import libloop` from / with no variable set; pip wheel,
# whose wheel tests/check_wheel.py reads; pip install -e, then pip uninstall.
# The first install and the editable ones let the backend run `make lib` (up
# to date here); the others are handed the library as LIBLOOP_LIBRARY, as a
# machine without Go would be.
pyenv="${PYENV_ROOT:-$HOME/.pyenv}/versions"
read -r -a pythons <<<"${INSTALL_PYTHONS:-/usr/bin/python3 $pyenv/3.11.7/bin/python3 $pyenv/3.12.1/bin/python3 $pyenv/3.13.0/bin/python3}"
built="$PWD/build/libloop.so"
tree_before=$(git status --porcelain --ignored bindings/python 2>/dev/null | grep -v __pycache__)

# smoke PYTHON PACKAGE_DIR LIBRARY OBJECT: from /, with neither PYTHONPATH
# nor LIBLOOP_LIBRARY, libloop is imported from PACKAGE_DIR, loads LIBRARY
# and its C object OBJECT (libloop-cpython.so: the hot path in C is on) and
# runs a coroutine on its own loop.
cat >"$tmp/smoke.py" <<'EOF'
import asyncio, os, sys
import libloop

want_pkg, want_lib, want_obj = sys.argv[1], sys.argv[2], sys.argv[3]

def need(cond, why):  # not assert: PYTHONOPTIMIZE would skip it
    if not cond:
        sys.exit(why)

pkg = os.path.dirname(os.path.abspath(libloop.__file__))
need(os.path.samefile(pkg, want_pkg), f"libloop imported from {pkg}, not {want_pkg}")

async def main():
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__.split(".")[0]

loop = libloop.new_event_loop()
try:
    need(loop.run_until_complete(main()) == "libloop", "the coroutine ran on another loop")
finally:
    loop.close()
need(libloop.run(main()) == "libloop", "libloop.run ran on another loop")
from libloop import _hotpath
need(_hotpath.ENABLED, f"the hot path's C side is off: {_hotpath.OFF_REASON}")
need(os.path.samefile(_hotpath.OBJECT_PATH, want_obj), f"loaded {_hotpath.OBJECT_PATH}, not {want_obj}")
lib = getattr(libloop, "LIBRARY_PATH", None)  # may be loaded lazily one day
if lib is not None:
    need(os.path.samefile(lib, want_lib), f"loaded {lib}, not {want_lib}")
else:
    need(os.path.isfile(want_lib), f"no {want_lib}")
EOF
smoke() { (cd / && env -u LIBLOOP_LIBRARY -u PYTHONPATH "$1" "$tmp/smoke.py" "$2" "$3" "$4"); }

# same_tour PYTHON: the unchanged asyncio program (streams, half-close, UDP,
# Unix sockets, a subprocess, a signal, sendfile, TLS, Runner, TaskGroup)
# prints the same on both loops, and libloop's run is libloop's.
tour=$(pwd)/examples/asyncio_tour.py
same_tour() {
    (cd / && env -u LIBLOOP_LIBRARY -u PYTHONPATH timeout 120 "$1" "$tour" >"$tmp/tour.ll" 2>"$tmp/tour.ll.err" &&
        env -u LIBLOOP_LIBRARY -u PYTHONPATH timeout 120 "$1" "$tour" --asyncio >"$tmp/tour.aio" 2>/dev/null) &&
        grep -qx 'loop: libloop' "$tmp/tour.ll.err" && grep -qx 'done' "$tmp/tour.ll" &&
        cmp -s "$tmp/tour.ll" "$tmp/tour.aio" || { diff "$tmp/tour.ll" "$tmp/tour.aio"; cat "$tmp/tour.ll.err"; return 1; }
}

sdist_done=
n=0
for py in "${pythons[@]}"; do
    n=$((n + 1))
    if [ ! -x "$py" ]; then
        bad "$py is missing: the install test runs on every supported interpreter (CPython 3.11, 3.12, 3.13), which this machine image has"
        continue
    fi
    who="python $("$py" -c 'import platform; print(platform.python_version())')"
    venv="$tmp/venv$n"
    if ! "$py" -m venv "$venv" >"$tmp/venv$n.log" 2>&1; then
        cat "$tmp/venv$n.log"
        bad "$who: $py -m venv (pip from ensurepip, offline)"
        continue
    fi
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')

    if [ $n = 1 ]; then lib_env=(env -u LIBLOOP_LIBRARY); how="make lib"; else lib_env=(env LIBLOOP_LIBRARY="$built"); how="LIBLOOP_LIBRARY"; fi
    if "${lib_env[@]}" "$venv/bin/pip" install -q --no-index bindings/python >"$tmp/pip$n.log" 2>&1; then
        ok "$who: pip install --no-index bindings/python into a fresh venv (the library by $how)"
        check "$who: the installed package carries libloop.so, py.typed (PEP 561) and __init__.pyi" \
            test -f "$site/libloop/libloop.so" -a -f "$site/libloop/py.typed" -a -f "$site/libloop/__init__.pyi"
        check "$who: import libloop from / runs a coroutine on its loop, with the library of the installed package" \
            smoke "$venv/bin/python" "$site/libloop" "$site/libloop/libloop.so" "$site/libloop/libloop-cpython.so"
        check "$who: python -m libloop from the installed package" \
            sh -c "cd / && env -u LIBLOOP_LIBRARY -u PYTHONPATH '$venv/bin/python' -m libloop >/dev/null"
        check "$who: examples/asyncio_tour.py prints the same on libloop as on asyncio (installed package)" \
            same_tour "$venv/bin/python"
    else
        cat "$tmp/pip$n.log"
        bad "$who: pip install --no-index bindings/python into a fresh venv (the library by $how)"
    fi

    wheels="$tmp/wheels$n"
    if LIBLOOP_LIBRARY="$built" "$venv/bin/pip" wheel -q --no-deps --no-build-isolation -w "$wheels" \
        bindings/python >"$tmp/wheel$n.log" 2>&1; then
        whl=("$wheels"/*.whl)
        if "$venv/bin/python" tests/check_wheel.py "${whl[0]}" "$version"; then
            ok "$who: pip wheel --no-build-isolation: ${whl[0]##*/}, its files, RECORD and METADATA (tests/check_wheel.py)"
        else
            "$venv/bin/python" -m zipfile -l "${whl[0]}"
            bad "$who: pip wheel --no-build-isolation: the wheel (tests/check_wheel.py, above)"
        fi
    else
        cat "$tmp/wheel$n.log"
        bad "$who: pip wheel --no-deps --no-build-isolation bindings/python"
    fi

    if env -u LIBLOOP_LIBRARY "$venv/bin/pip" install -q --no-index -e bindings/python >"$tmp/edit$n.log" 2>&1; then
        ok "$who: pip install -e bindings/python"
        check "$who: the editable libloop, imported from /, is bindings/python's and loads build/libloop.so and build/libloop-cpython.so" \
            smoke "$venv/bin/python" "$PWD/bindings/python/libloop" "$built" "$(dirname "$built")/libloop-cpython.so"
        "$venv/bin/pip" uninstall -q -y libloop >/dev/null 2>&1
        check "$who: after pip uninstall, no libloop is importable" \
            sh -c "cd / && ! env -u LIBLOOP_LIBRARY -u PYTHONPATH '$venv/bin/python' -c 'import libloop' 2>/dev/null"
    else
        cat "$tmp/edit$n.log"
        bad "$who: pip install -e bindings/python"
    fi

    # Once: an sdist carries the package and its backend but not the Go
    # sources, so installing it needs LIBLOOP_LIBRARY, and says so.
    [ -n "$sdist_done" ] && continue
    sdist_done=1
    sd="$tmp/sdist"
    mkdir -p "$sd"
    if (cd bindings/python && "$venv/bin/python" -c 'import sys; sys.path.insert(0, "build_backend")
import libloop_build; libloop_build.build_sdist(sys.argv[1])' "$sd") >"$tmp/sdist.log" 2>&1; then
        tgz="$sd/libloop-$version.tar.gz"
        members=$(tar tzf "$tgz" 2>/dev/null)
        missing=
        for m in PKG-INFO pyproject.toml README.md build_backend/libloop_build.py libloop/__init__.py libloop/__init__.pyi libloop/py.typed cpython/llpy.h cpython/sink.c include/libloop.h include/libloop/transport.h; do
            grep -qxF "libloop-$version/$m" <<<"$members" || missing="$missing $m"
        done
        check "$who: the sdist libloop-$version.tar.gz has PKG-INFO, pyproject.toml, the backend, the package and the C object's sources and headers${missing:+ (missing:$missing)}" test -z "$missing"
        env -u LIBLOOP_LIBRARY "$venv/bin/pip" install --no-index "$tgz" >"$tmp/sdist-nolib.log" 2>&1
        check "$who: pip install of the sdist without LIBLOOP_LIBRARY fails, saying to set it" \
            grep -q "not inside the libloop repository.*set LIBLOOP_LIBRARY" "$tmp/sdist-nolib.log"
        if LIBLOOP_LIBRARY="$built" "$venv/bin/pip" install -q --no-index "$tgz" >"$tmp/sdist-pip.log" 2>&1; then
            check "$who: the package installed from the sdist with LIBLOOP_LIBRARY runs" \
                smoke "$venv/bin/python" "$site/libloop" "$site/libloop/libloop.so" "$site/libloop/libloop-cpython.so"
        else
            cat "$tmp/sdist-pip.log"
            bad "$who: pip install of the sdist with LIBLOOP_LIBRARY"
        fi
    else
        cat "$tmp/sdist.log"
        bad "$who: build_sdist"
    fi
done
tree_after=$(git status --porcelain --ignored bindings/python 2>/dev/null | grep -v __pycache__)
check "the builds left nothing behind in bindings/python (but __pycache__)" test "$tree_before" = "$tree_after"

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
