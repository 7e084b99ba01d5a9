/* SPDX-License-Identifier: MIT */
/* Calls a host is likely to make from a worker thread by mistake: each
 * wrapper passes the loop the calling thread runs (ll__thread_loop, one
 * thread-local load) to its Go side, which refuses the call with
 * LL_EWRONGTHREAD when the loop it concerns is running on another thread
 * (capi/loopthread.go says why). ll_call_soon's wrapper is in cloop/soon.c,
 * and ll_call_later's, ll_call_at's and ll_handle_cancel's in cloop/timers.c,
 * beside their fast paths; ll_release and ll_loop_close are in cloop/run.c, and
 * guarded by the loop's gate (release.go) instead. */
#include "capi.h"
#include "_cgo_export.h"

int ll_loop_stop(ll_loop loop) { return ll__loop_stop_go(ll__thread_loop, loop); }

int ll_add_reader(ll_loop loop, int fd, ll_io_callback cb, void *arg) {
    return ll__add_reader_go(ll__thread_loop, loop, fd, cb, arg);
}

int ll_add_writer(ll_loop loop, int fd, ll_io_callback cb, void *arg) {
    return ll__add_writer_go(ll__thread_loop, loop, fd, cb, arg);
}

int ll_remove_reader(ll_loop loop, int fd) { return ll__remove_reader_go(ll__thread_loop, loop, fd); }

int ll_remove_writer(ll_loop loop, int fd) { return ll__remove_writer_go(ll__thread_loop, loop, fd); }

int ll_future_set_result(ll_future fut, uintptr_t value, ll_free_fn free) {
    return ll__future_set_result_go(ll__thread_loop, fut, value, free);
}

int ll_future_set_exception(ll_future fut, int code, const char *message, uintptr_t payload, ll_free_fn free) {
    return ll__future_set_exception_go(ll__thread_loop, fut, code, message, payload, free);
}

int ll_future_cancel(ll_future fut, const char *msg) { return ll__future_cancel_go(ll__thread_loop, fut, msg); }

int ll_loop_stats(ll_loop loop, struct ll_loop_stats *out) { return ll__loop_stats_go(ll__thread_loop, loop, out); }

int ll_hook_add(ll_loop loop, int kind, ll_hook_fn fn, void *arg, ll_handle *out) {
    return ll__hook_add_go(ll__thread_loop, loop, kind, fn, arg, out);
}

int ll_loop_next_timeout(ll_loop loop) { return ll__loop_next_timeout_go(ll__thread_loop, loop); }

int ll_timer_start(ll_loop loop, double first, double repeat, ll_callback cb, void *arg, ll_handle *out) {
    return ll__timer_start_go(ll__thread_loop, loop, first, repeat, cb, arg, out);
}

int ll_timer_again(ll_handle timer) { return ll__timer_again_go(ll__thread_loop, timer); }

int ll_timer_set_repeat(ll_handle timer, double repeat) {
    return ll__timer_set_repeat_go(ll__thread_loop, timer, repeat);
}

int ll_ref(uint64_t id) { return ll__ref_go(ll__thread_loop, id); }

int ll_unref(uint64_t id) { return ll__unref_go(ll__thread_loop, id); }

int ll_has_ref(uint64_t id) { return ll__has_ref_go(ll__thread_loop, id); }

int ll_loop_walk(ll_loop loop, ll_walk_fn fn, void *arg) { return ll__loop_walk_go(ll__thread_loop, loop, fn, arg); }
