/* SPDX-License-Identifier: MIT */
/* What a loop's own code may schedule while ll_release (or ll_loop_close)
 * sweeps it: an exception handler run for a never-retrieved exception the
 * sweep disposes of gets LL_ECLOSED from every scheduling call, as from
 * ll_future_new, never a 0 for a callback that will not run. Also from a
 * future's free function and once the loop is closed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libloop.h"
#include "check.h"

static struct {
    int handler_ran;
    int future_new, call_soon, call_soon_h, call_later, call_later_h, call_at, call_at_h, threadsafe;
    int ran; /* a callback accepted in the sweep that ran anyway */
} S;

static void never(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    S.ran++;
}

static void try_everything(ll_loop loop) {
    ll_future f = 0;
    ll_handle h = 0;
    S.future_new = ll_future_new(loop, &f);
    S.call_soon = ll_call_soon(loop, never, NULL, NULL);
    S.call_soon_h = ll_call_soon(loop, never, NULL, &h);
    S.call_later = ll_call_later(loop, 0.0, never, NULL, NULL);
    S.call_later_h = ll_call_later(loop, 0.001, never, NULL, &h);
    S.call_at = ll_call_at(loop, ll_loop_time(loop), never, NULL, NULL);
    S.call_at_h = ll_call_at(loop, ll_loop_time(loop) + 1, never, NULL, &h);
    S.threadsafe = ll_call_soon_threadsafe(loop, never, NULL);
}

static void handler(ll_loop loop, const ll_error_context *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    S.handler_ran++;
    try_everything(loop);
}

static void check_all_closed(void) {
    CHECK_EQ_INT(S.future_new, LL_ECLOSED);
    CHECK_EQ_INT(S.call_soon, LL_ECLOSED);
    CHECK_EQ_INT(S.call_soon_h, LL_ECLOSED);
    CHECK_EQ_INT(S.call_later, LL_ECLOSED);
    CHECK_EQ_INT(S.call_later_h, LL_ECLOSED);
    CHECK_EQ_INT(S.call_at, LL_ECLOSED);
    CHECK_EQ_INT(S.call_at_h, LL_ECLOSED);
    CHECK_EQ_INT(S.threadsafe, LL_ECLOSED);
}

/* The exception is disposed of when the loop's last hold goes: a done
 * callback keeps the future to the close sweep. */
static void done_cb(ll_future f, void *arg) {
    (void)f;
    (void)arg;
}

static void sweep_with_hold(int use_close, int ran_before) {
    memset(&S, 0, sizeof S);
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_set_exception_handler(loop, handler, NULL), 0);
    if (ran_before)
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    ll_future f = 0;
    CHECK_EQ_INT(ll_future_new(loop, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_cb, NULL), 0);
    CHECK_EQ_INT(ll_future_set_exception(f, LL_ETIMEDOUT, "never retrieved", 0, NULL), 0);
    CHECK_EQ_INT(ll_release(f), 0); /* the queued done callback still holds it */
    if (use_close)
        CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(S.handler_ran, use_close ? 1 : 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(S.handler_ran, 1);
    check_all_closed();
    CHECK_EQ_INT(S.ran, 0);
}

static void test_release_sweep(void) { sweep_with_hold(0, 0); }
static void test_release_sweep_after_run(void) { sweep_with_hold(0, 1); }
static void test_close_sweep(void) { sweep_with_hold(1, 0); }
static void test_close_sweep_after_run(void) { sweep_with_hold(1, 1); }

/* Once closed (not yet released), every scheduling call is LL_ECLOSED. */
static void test_after_close(void) {
    memset(&S, 0, sizeof S);
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    try_everything(loop);
    check_all_closed();
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(S.ran, 0);
}

int main(void) {
    RUN_TEST(test_release_sweep);
    RUN_TEST(test_release_sweep_after_run);
    RUN_TEST(test_close_sweep);
    RUN_TEST(test_close_sweep_after_run);
    RUN_TEST(test_after_close);
    return CHECK_REPORT();
}
