/* SPDX-License-Identifier: MIT */
/* ll_hook_add (libuv's prepare, check and idle handles): each kind runs
 * once per iteration at its place around the poll, an idle hook keeps the
 * poll from blocking, a hook cancels itself and others from inside, a
 * released hook runs no more, ll_loop_close cancels them all, and bad
 * input gets codes. */
#include <string.h>
#include <time.h>

#include "libloop.h"
#include "check.h"

static char trace[64];

static void mark(char c) {
    size_t n = strlen(trace);
    if (n + 1 < sizeof trace) {
        trace[n] = c;
        trace[n + 1] = 0;
    }
}

static void on_idle(ll_loop loop, void *arg) { (void)loop, (void)arg, mark('i'); }
static void on_prepare(ll_loop loop, void *arg) { (void)loop, (void)arg, mark('p'); }
static void on_check(ll_loop loop, void *arg) { (void)loop, (void)arg, mark('c'); }
static void on_soon(ll_loop loop, void *arg) { (void)loop, (void)arg, mark('s'); }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_order(void) {
    ll_loop loop = 0;
    ll_handle hi = 0, hp = 0, hc = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    trace[0] = 0;
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_CHECK, on_check, NULL, &hc), 0);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_PREPARE, on_prepare, NULL, &hp), 0);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_IDLE, on_idle, NULL, &hi), 0);
    CHECK(hi != 0 && hp != 0 && hc != 0);
    CHECK_EQ_INT(ll_call_soon(loop, on_soon, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_STR(trace, "ipcs");
    /* The idle hook keeps LL_RUN_ONCE from blocking on a timer an hour away. */
    CHECK_EQ_INT(ll_call_later(loop, 3600, on_soon, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), 0);
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK(now_s() - t0 < 1.0);
    CHECK_EQ_STR(trace, "ipcsipc");
    CHECK_EQ_INT(ll_handle_cancelled(hi), 0);
    CHECK_EQ_INT(ll_handle_cancel(hi), 0);
    CHECK_EQ_INT(ll_handle_cancel(hi), 0); /* twice: nothing */
    CHECK_EQ_INT(ll_handle_cancelled(hi), 1);
    CHECK(ll_loop_next_timeout(loop) > 3000000); /* the timer's, now */
    CHECK_EQ_INT(ll_release(hp), 0);           /* released: cancelled too */
    CHECK_EQ_INT(ll_handle_cancel(hp), LL_EBADHANDLE);
    trace[0] = 0;
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_STR(trace, "c");
    CHECK_EQ_INT(ll_loop_close(loop), 0); /* cancels the rest */
    CHECK_EQ_INT(ll_handle_cancelled(hc), 1);
    CHECK_EQ_INT(ll_release(hi), 0);
    CHECK_EQ_INT(ll_release(hc), 0);
    CHECK_EQ_INT(ll_release(hc), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A hook that cancels itself after three runs, and one that stops the
 * loop: ll_loop_run_forever runs hooks in every iteration. */
static ll_handle self_hook;
static int self_runs, soon_runs;
static void on_soon_count(ll_loop loop, void *arg) {
    (void)loop, (void)arg;
    soon_runs++;
}
static void on_self(ll_loop loop, void *arg) {
    (void)arg;
    if (++self_runs == 3) {
        CHECK_EQ_INT(ll_handle_cancel(self_hook), 0);
        CHECK_EQ_INT(ll_call_later(loop, 0.02, on_soon_count, NULL, NULL), 0);
    }
}
static int prepare_runs;
static void on_stop_at_4(ll_loop loop, void *arg) {
    (void)arg;
    if (++prepare_runs == 4)
        ll_loop_stop(loop);
}

static void test_run_forever(void) {
    ll_loop loop = 0;
    ll_handle stopper = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_IDLE, on_self, NULL, &self_hook), 0);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_PREPARE, on_stop_at_4, NULL, &stopper), 0);
    /* Nothing else is scheduled: iterations 1-3 spin on the idle hook,
     * which then cancels itself and arms a timer, so iteration 3's poll
     * blocks until it; iteration 4's prepare hook stops the loop. */
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK(now_s() - t0 >= 0.02);
    CHECK_EQ_INT(self_runs, 3);
    CHECK_EQ_INT(soon_runs, 1);
    CHECK_EQ_INT(prepare_runs, 4);
    CHECK_EQ_INT(ll_handle_cancelled(self_hook), 1);
    CHECK_EQ_INT(ll_release(self_hook), 0);
    CHECK_EQ_INT(ll_release(stopper), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A callback chain (each callback schedules the next) runs one callback
 * per iteration; C runs such iterations itself when nothing else is
 * scheduled, and must not while a hook is active: a prepare hook runs in
 * every one of those iterations, also when added midway by a callback. */
static int chain_left, chain_prepares, add_at;
static ll_handle chain_hook;
static void on_chain_prepare(ll_loop loop, void *arg) { (void)loop, (void)arg, chain_prepares++; }
static void on_chain(ll_loop loop, void *arg) {
    (void)arg;
    if (--chain_left == add_at)
        CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_PREPARE, on_chain_prepare, NULL, &chain_hook), 0);
    if (chain_left > 0)
        CHECK_EQ_INT(ll_call_soon(loop, on_chain, NULL, NULL), 0);
    else
        CHECK_EQ_INT(ll_loop_stop(loop), 0);
}

static void test_chain(void) {
    for (int midway = 0; midway < 2; midway++) {
        ll_loop loop = 0;
        CHECK_EQ_INT(ll_loop_new(&loop), 0);
        chain_left = 1000, chain_prepares = 0, add_at = midway ? 500 : -1;
        if (!midway)
            CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_PREPARE, on_chain_prepare, NULL, &chain_hook), 0);
        CHECK_EQ_INT(ll_call_soon(loop, on_chain, NULL, NULL), 0);
        CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
        CHECK_EQ_INT(chain_left, 0);
        /* 1000 iterations; added in the 500th, the hook runs in the last 500. */
        CHECK_EQ_INT(chain_prepares, midway ? 500 : 1000);
        CHECK_EQ_INT(ll_release(chain_hook), 0);
        CHECK_EQ_INT(ll_release(loop), 0);
    }
}

static void test_bad_input(void) {
    ll_loop loop = 0;
    ll_handle h = 0, t = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_hook_add(loop, 0, on_idle, NULL, &h), LL_EINVAL);
    CHECK_EQ_INT(ll_hook_add(loop, 4, on_idle, NULL, &h), LL_EINVAL);
    CHECK_EQ_INT(ll_hook_add(loop, -1, on_idle, NULL, &h), LL_EINVAL);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_IDLE, NULL, NULL, &h), LL_EINVAL);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_IDLE, on_idle, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_hook_add(0, LL_HOOK_IDLE, on_idle, NULL, &h), LL_EBADHANDLE);
    CHECK_EQ_INT(h, 0);
    /* A handle of another kind is not a hook, nor a hook a timer. */
    CHECK_EQ_INT(ll_call_later(loop, 10, on_soon, NULL, &t), 0);
    CHECK_EQ_INT(ll_hook_add(t, LL_HOOK_IDLE, on_idle, NULL, &h), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_IDLE, on_idle, NULL, &h), 0);
    CHECK(ll_timer_when(h) < 0);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_handle h2 = 0;
    CHECK_EQ_INT(ll_hook_add(loop, LL_HOOK_IDLE, on_idle, NULL, &h2), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(loop), 0);
    /* The hook outlived its loop: its id still answers, and releases. */
    CHECK_EQ_INT(ll_handle_cancelled(h), 1);
    CHECK_EQ_INT(ll_handle_cancel(h), 0);
    CHECK_EQ_INT(ll_release(h), 0);
    CHECK_EQ_INT(ll_handle_cancelled(h), LL_EBADHANDLE);
}

int main(void) {
    RUN_TEST(test_order);
    RUN_TEST(test_run_forever);
    RUN_TEST(test_chain);
    RUN_TEST(test_bad_input);
    return CHECK_REPORT();
}
