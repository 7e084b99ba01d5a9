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
