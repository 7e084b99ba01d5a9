/* SPDX-License-Identifier: MIT */
/* ll_timer_start, ll_timer_again, ll_timer_set_repeat (libuv's repeating
 * timers): a timer repeats, never early, until its callback stops it;
 * repeat 0 runs once; again restarts from now; set_repeat applies at the
 * next expiry; release stops it; close stops every one; bad input gets
 * codes. */
#include <math.h>

#include "libloop.h"
#include "check.h"

static ll_handle rep;
static double start, at[8];
static int runs;

static void on_rep(ll_loop loop, void *arg) {
    (void)arg;
    at[runs++] = ll_loop_time(loop) - start;
    if (runs == 4) {
        CHECK_EQ_INT(ll_handle_cancel(rep), 0); /* stops the re-armed timer */
        CHECK_EQ_INT(ll_loop_stop(loop), 0);
    }
}

static void test_repeats(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    start = ll_loop_time(loop);
    CHECK_EQ_INT(ll_timer_start(loop, 0.02, 0.01, on_rep, NULL, &rep), 0);
    CHECK(ll_timer_when(rep) >= start + 0.02);
    CHECK_EQ_INT(ll_handle_cancelled(rep), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(runs, 4);
    for (int i = 0; i < runs; i++)
        CHECK(at[i] >= 0.02 + 0.01 * i); /* never early */
    CHECK_EQ_INT(ll_handle_cancelled(rep), 1);
    CHECK(ll_timer_when(rep) < 0); /* stopped */
    /* Stopped, it restarts with ll_timer_again, repeat seconds from now. */
    CHECK_EQ_INT(ll_timer_set_repeat(rep, 5), 0);
    CHECK_EQ_INT(ll_timer_again(rep), 0);
    CHECK_EQ_INT(ll_handle_cancelled(rep), 0);
    double w = ll_timer_when(rep) - ll_loop_time(loop);
    CHECK(w > 4.9 && w <= 5.0);
    int ms = ll_loop_next_timeout(loop);
    CHECK(ms > 4900 && ms <= 5000);
    CHECK_EQ_INT(ll_release(rep), 0); /* released: stopped */
    CHECK_EQ_INT(ll_loop_next_timeout(loop), -1);
    CHECK_EQ_INT(ll_timer_again(rep), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static int once_runs;
static void on_once(ll_loop loop, void *arg) {
    (void)loop, (void)arg;
    once_runs++;
}

static void test_once_and_set_repeat(void) {
    ll_loop loop = 0;
    ll_handle once = 0, t = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_timer_start(loop, 0, 0, on_once, NULL, &once), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(once_runs, 1);
    CHECK_EQ_INT(ll_handle_cancelled(once), 1); /* a one-shot that ran is stopped */
    CHECK_EQ_INT(ll_timer_again(once), 0);      /* repeat 0: left as it is */
    CHECK_EQ_INT(ll_handle_cancelled(once), 1);
    /* A repeating timer whose repeat is set to 0 runs once more, then stops. */
    once_runs = 0;
    CHECK_EQ_INT(ll_timer_start(loop, -1, 0.001, on_once, NULL, &t), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(once_runs, 1);
    CHECK_EQ_INT(ll_handle_cancelled(t), 0); /* re-armed */
    CHECK_EQ_INT(ll_timer_set_repeat(t, 0), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(once_runs, 2);
    CHECK_EQ_INT(ll_handle_cancelled(t), 1);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), -1);
    /* ll_loop_close stops a running one; the id stays until released. */
    CHECK_EQ_INT(ll_timer_set_repeat(t, 1), 0);
    CHECK_EQ_INT(ll_timer_again(t), 0);
    CHECK_EQ_INT(ll_handle_cancelled(t), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_handle_cancelled(t), 1);
    CHECK_EQ_INT(ll_timer_again(t), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(ll_release(once), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static void test_bad_input(void) {
    ll_loop loop = 0;
    ll_handle t = 0, plain = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_timer_start(loop, NAN, 0, on_once, NULL, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_start(loop, 1e12, 0, on_once, NULL, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_start(loop, 0, -1, on_once, NULL, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_start(loop, 0, NAN, on_once, NULL, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_start(loop, 0, INFINITY, on_once, NULL, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_start(loop, 0, 1, NULL, NULL, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_start(loop, 0, 1, on_once, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_start(0, 0, 1, on_once, NULL, &t), LL_EBADHANDLE);
    CHECK_EQ_INT(t, 0);
    /* An ll_call_later handle is no repeating timer, nor is a loop. */
    CHECK_EQ_INT(ll_call_later(loop, 10, on_once, NULL, &plain), 0);
    CHECK_EQ_INT(ll_timer_again(plain), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_timer_set_repeat(plain, 1), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_timer_again(loop), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_timer_again(0), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_timer_start(plain, 0, 1, on_once, NULL, &t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_timer_start(loop, 10, 1, on_once, NULL, &t), 0);
    CHECK_EQ_INT(ll_timer_set_repeat(t, -1), LL_EINVAL);
    CHECK_EQ_INT(ll_timer_set_repeat(t, NAN), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_next_timeout(t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(plain), 0);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(ll_release(t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_handle_cancel(t), LL_EBADHANDLE);
    /* A timer outlives its loop's close and release: its id still answers
     * with codes, and releases once. */
    CHECK_EQ_INT(ll_timer_start(loop, 10, 1, on_once, NULL, &t), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_timer_start(loop, 0, 1, on_once, NULL, &plain), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(ll_handle_cancelled(t), 1);
    CHECK_EQ_INT(ll_handle_cancel(t), 0);
    CHECK_EQ_INT(ll_timer_again(t), LL_ECLOSED);
    CHECK_EQ_INT(ll_timer_set_repeat(t, 2), 0);
    CHECK(ll_timer_when(t) < 0);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(ll_release(t), LL_EBADHANDLE);
}

int main(void) {
    RUN_TEST(test_repeats);
    RUN_TEST(test_once_and_set_repeat);
    RUN_TEST(test_bad_input);
    return CHECK_REPORT();
}
