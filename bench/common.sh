# SPDX-License-Identifier: MIT
# bench/common.sh — sourced by the bench runners (run.sh, run_net.sh,
# run_udp.sh, run_fs.sh, run_spawn.sh, run_tls.sh, run_footprint.sh,
# python/run_net.sh, python/real_libs.sh): what every report header says
# about the build measured, stopping a server, and the runners' common
# steps (checking and building the implementations measured).

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

# stop_pid PID: TERM, then KILL after 5 s; reaped, status ignored, and
# dropped from the runner's PIDS array (so its exit trap never signals a
# recycled pid).
stop_pid() {
    local p="$1" i keep=()
    kill "$p" 2>/dev/null || true
    for i in $(seq 50); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
    for i in "${PIDS[@]:-}"; do
        [ -n "$i" ] && [ "$i" != "$p" ] && keep+=("$i")
    done
    PIDS=("${keep[@]:-}")
}

# die MESSAGE: the runner's name and MESSAGE on stderr, then exit 2.
die() {
    echo "$(basename "$0"): $*" >&2
    exit 2
}

# have_header H: whether the C compiler ($CC) finds <H>.
have_header() { echo "#include <$1>" | "${CC:-cc}" -E -x c - >/dev/null 2>&1; }

# check_impls VAR KNOWN IMPL...: dies on an implementation that is not in
# KNOWN (space-separated), and when a rival's headers are missing says
# which Debian packages to install and that VAR can leave it out, instead
# of failing later in the compiler.
check_impls() {
    local var="$1" known="$2" impl missing=""
    shift 2
    for impl in "$@"; do
        case " $known " in
        *" $impl "*) ;;
        *) die "unknown implementation '$impl' in $var ($known)" ;;
        esac
        case "$impl" in
        uv | libuv) have_header uv.h || missing="$missing libuv1-dev" ;;
        ev | evps | libev) have_header ev.h || missing="$missing libev-dev" ;;
        esac
    done
    [ -n "$missing" ] || return 0
    missing="$(echo "$missing" | tr ' ' '\n' | sort -u | tr '\n' ' ')"
    echo "$(basename "$0"): missing rival libraries:$missing" >&2
    echo "  install them with: apt-get update -qq && apt-get install -y -qq$missing" >&2
    echo "  (or leave them out with $var)" >&2
    exit 2
}

# impl_label IMPL: the name a report gives an implementation.
impl_label() {
    case "$1" in
    uv) echo libuv ;;
    ev) echo libev ;;
    evps) echo libev-posix_spawn ;;
    ll) echo libloop ;;
    *) echo "$1" ;;
    esac
}

# need_lib: builds build/libloop.so when it is missing; a private
# LIBLOOP_LIB_DIR without one is an error, not a build.
need_lib() {
    if [ ! -f "$LIBDIR/libloop.so" ]; then
        [ -z "${LIBLOOP_LIB_DIR:-}" ] || die "no libloop.so in $LIBDIR"
        make lib
    fi
}

# build_impls NAME IMPL...: compiles bench/NAME_IMPL.c into $BIN/NAME_IMPL
# for each of uv, ev and ll, each against its library ($CC, $CFLAGS).
build_impls() {
    local name="$1" impl
    shift
    for impl in "$@"; do
        case "$impl" in
        uv) $CC $CFLAGS "bench/${name}_uv.c" -o "$BIN/${name}_uv" -luv ;;
        ev) $CC $CFLAGS "bench/${name}_ev.c" -o "$BIN/${name}_ev" -lev ;;
        ll) soname_link "$LIBDIR" && $CC $CFLAGS "bench/${name}_ll.c" -o "$BIN/${name}_ll" -L"$LIBDIR" -lloop -Wl,-rpath,"$LIBDIR" ;;
        esac
    done
}
