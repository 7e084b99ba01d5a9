# SPDX-License-Identifier: MIT
# bench/common.sh — sourced by the bench runners (run.sh, run_net.sh,
# run_spawn.sh): what every report header says about the build measured.

# commit_label prints the commit the library was built from, marked when
# libloop/, capi/ or include/ have uncommitted changes; LIBLOOP_LABEL wins.
commit_label() {
    local c
    c="commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [ -n "$(git status --porcelain -- libloop capi include 2>/dev/null)" ]; then
        c="$c (+ uncommitted changes in libloop/ capi/ include/)"
    fi
    echo "${LIBLOOP_LABEL:-$c}"
}

# soname_link DIR: a libloop.so with a SONAME (libloop.so.0) is recorded by
# the programs linked to it under that name, so DIR needs the link of that
# name (the Makefile makes build/'s; a private LIBLOOP_LIB_DIR may lack it).
soname_link() {
    local so
    so=$(readelf -d "$1/libloop.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    if [ -n "$so" ] && [ "$so" != libloop.so ] && [ ! -e "$1/$so" ]; then
        ln -s libloop.so "$1/$so"
    fi
}
