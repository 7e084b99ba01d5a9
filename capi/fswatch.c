/* SPDX-License-Identifier: MIT */
/* ll_fs_watch and ll_fs_poll: thin wrappers that pass the loop the calling
 * thread runs to their Go side (see loopthread.c), and the trampoline Go
 * calls a host's ll_fs_event_fn through (capi/fswatch.go). */
#include "capi.h"
#include "_cgo_export.h"

int ll_fs_watch(ll_loop loop, const char *path, int flags, ll_fs_event_fn fn, void *arg, ll_handle *out) {
    return ll__fs_watch_go(ll__thread_loop, loop, path, flags, fn, arg, out);
}

int ll_fs_poll(ll_loop loop, const char *path, double interval, ll_fs_event_fn fn, void *arg, ll_handle *out) {
    return ll__fs_poll_go(ll__thread_loop, loop, path, interval, fn, arg, out);
}

void ll__call_fs_event(uintptr_t fn, uint64_t loop, uint64_t w, const char *path, int events, int status,
                       uintptr_t arg) {
    ((ll_fs_event_fn)fn)(loop, w, path, events, status, (void *)arg);
}
