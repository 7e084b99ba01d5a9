/* SPDX-License-Identifier: MIT */
/* Callbacks and timers: FIFO order, one iteration runs only what was ready
 * when it began, timer order and deadlines, handles and cancellation. */
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define LOG_MAX 4096
static int order[LOG_MAX];
static int norder;

static void log_cb(ll_loop loop, void *arg) {
    (void)loop;
    if (norder < LOG_MAX)
        order[norder++] = (int)(intptr_t)arg;
}

static void reset_log(void) { norder = 0; }

/* Checks that the log holds exactly the n values of want[]. */
static int log_is(const int *want, int n) {
    if (norder != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (order[i] != want[i])
            return 0;
    return 1;
}

static void print_log(void) {
    fprintf(stderr, "  log (%d):", norder);
    for (int i = 0; i < norder && i < 40; i++)
        fprintf(stderr, " %d", order[i]);
    fprintf(stderr, "\n");
}

#define CHECK_LOG(...)                                                      \
    do {                                                                    \
        const int want_[] = {__VA_ARGS__};                                  \
        int ok_ = log_is(want_, (int)(sizeof want_ / sizeof want_[0]));     \
        CHECK(ok_ && "log matches " #__VA_ARGS__);                          \
        if (!ok_)                                                           \
            print_log();                                                    \
    } while (0)

static ll_loop new_loop(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    return loop;
}

/* Runs the loop until `secs` from now (a stop timer). */
static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

static void run_for(ll_loop loop, double secs) {
    CHECK_EQ_INT(ll_call_later(loop, secs, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
}

/* ---- FIFO ---------------------------------------------------------------- */

static void test_fifo(void) {
    ll_loop loop = new_loop();
    reset_log();
    /* Mix handle-less and handle-returning calls: one FIFO order. */
    for (int i = 0; i < 1000; i++) {
        ll_handle h = 0;
        CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(intptr_t)i, (i % 3 == 0) ? &h : NULL), 0);
        if (h)
            ll_release(h);
    }
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    int ok = norder == 1000;
    for (int i = 0; ok && i < 1000; i++)
        ok = order[i] == i;
    CHECK(ok);
    ll_release(loop);
}

/* A callback that schedules X (no handle), Y (with handle), Z (no handle). */
static void spawn_three_cb(ll_loop loop, void *arg) {
    log_cb(loop, arg);
    ll_handle h = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)10, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)11, &h), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)12, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, -1.0, log_cb, (void *)13, NULL), 0);
    CHECK(h != 0);
    ll_release(h);
}

static void test_added_during_iteration_runs_next(void) {
    ll_loop loop = new_loop();
    reset_log();
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, spawn_three_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)3, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_LOG(1, 2, 3);
    /* Next iteration: the three call_soon in the order they were made
     * (whatever path each took inside the library), then the timer that was
     * due at once (timers move to the ready queue after it). */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_LOG(1, 2, 3, 10, 11, 12, 13);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 7);
    ll_release(loop);
}

/* Each of many ready callbacks schedules a child: every parent runs in the
 * first iteration (in order, across any internal batching), every child in
 * the second, in order. */
static void parent_cb(ll_loop loop, void *arg) {
    log_cb(loop, arg);
    intptr_t i = (intptr_t)arg;
    ll_handle h = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(i + 1000), (i % 7 == 0) ? &h : NULL), 0);
    if (h)
        ll_release(h);
}

static void test_many_parents_children(void) {
    ll_loop loop = new_loop();
    reset_log();
    const int n = 700;
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(ll_call_soon(loop, parent_cb, (void *)(intptr_t)i, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    int ok = norder == n;
    for (int i = 0; ok && i < n; i++)
        ok = order[i] == i;
    CHECK(ok);
    reset_log();
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    ok = norder == n;
    for (int i = 0; ok && i < n; i++)
        ok = order[i] == i + 1000;
    CHECK(ok);
    if (!ok)
        print_log();
    ll_release(loop);
}

/* A self-rescheduling chain advances exactly one step per iteration. */
static void chain_cb(ll_loop loop, void *arg) {
    intptr_t i = (intptr_t)arg;
    log_cb(loop, arg);
    if (i < 5)
        CHECK_EQ_INT(ll_call_soon(loop, chain_cb, (void *)(i + 1), NULL), 0);
}

static void test_chain_one_step_per_iteration(void) {
    ll_loop loop = new_loop();
    reset_log();
    CHECK_EQ_INT(ll_call_soon(loop, chain_cb, (void *)1, NULL), 0);
    for (int it = 1; it <= 5; it++) {
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
        CHECK_EQ_INT(norder, it);
    }
    CHECK_LOG(1, 2, 3, 4, 5);
    ll_release(loop);
}

/* ---- timers -------------------------------------------------------------- */

static void test_timer_order(void) {
    ll_loop loop = new_loop();
    reset_log();
    /* By deadline first. */
    CHECK_EQ_INT(ll_call_later(loop, 0.03, log_cb, (void *)5, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.01, log_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.02, log_cb, (void *)4, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.01, log_cb, (void *)3, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.0, log_cb, (void *)1, NULL), 0);
    /* Equal deadlines: in scheduling order, whatever the heap shape. */
    double when = ll_loop_time(loop) + 0.04;
    for (int i = 0; i < 20; i++)
        CHECK_EQ_INT(ll_call_at(loop, when, log_cb, (void *)(intptr_t)(100 + i), NULL), 0);
    run_for(loop, 0.1);
    CHECK_LOG(1, 2, 3, 4, 5, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112,
              113, 114, 115, 116, 117, 118, 119);

    /* Timers with a handle and without one (kept apart inside the library)
     * still run in scheduling order at an equal deadline; a cancelled one
     * is skipped. */
    reset_log();
    when = ll_loop_time(loop) + 0.02;
    ll_handle hs[8];
    for (int i = 0; i < 8; i++) {
        CHECK_EQ_INT(ll_call_at(loop, when, log_cb, (void *)(intptr_t)(200 + 2 * i), NULL), 0);
        CHECK_EQ_INT(ll_call_at(loop, when, log_cb, (void *)(intptr_t)(201 + 2 * i), &hs[i]), 0);
    }
    CHECK_EQ_INT(ll_handle_cancel(hs[3]), 0);
    run_for(loop, 0.06);
    CHECK_LOG(200, 201, 202, 203, 204, 205, 206, 208, 209, 210, 211, 212, 213, 214, 215);
    for (int i = 0; i < 8; i++)
        ll_release(hs[i]);
    ll_release(loop);
}

/* Timers never run before their deadline. */
struct timing {
    ll_handle h;
    double scheduled_at; /* loop time just before call_later */
    double delay;
    double ran_at;
    double when;
};

static void timing_cb(ll_loop loop, void *arg) {
    struct timing *t = arg;
    t->ran_at = ll_loop_time(loop);
    t->when = ll_timer_when(t->h);
}

static void test_timers_never_early(void) {
    ll_loop loop = new_loop();
    enum { N = 40 };
    static struct timing t[N];
    for (int i = 0; i < N; i++) {
        t[i].delay = 0.0005 * (i % 8) + 0.0001 * i; /* 0 .. ~7.5 ms, sub-ms values */
        t[i].ran_at = -1;
        t[i].scheduled_at = ll_loop_time(loop);
        CHECK_EQ_INT(ll_call_later(loop, t[i].delay, timing_cb, &t[i], &t[i].h), 0);
        double when = ll_timer_when(t[i].h);
        /* The deadline is the scheduling time plus the delay, on the
         * loop's own clock: a timer made in C reads the same clock with
         * the same base (up to the delay's rounding up to a nanosecond). */
        CHECK(when >= t[i].scheduled_at + t[i].delay - 1e-9);
        CHECK(when <= ll_loop_time(loop) + t[i].delay + 2e-9);
    }
    run_for(loop, 0.05);
    int ran = 0, early = 0;
    for (int i = 0; i < N; i++) {
        if (t[i].ran_at < 0)
            continue;
        ran++;
        /* asyncio's tolerance is one clock resolution (1 ns here). */
        if (t[i].ran_at < t[i].when - 2e-9 || t[i].ran_at < t[i].scheduled_at + t[i].delay - 2e-9) {
            early++;
            fprintf(stderr, "  timer %d ran %.9f s early\n", i, t[i].when - t[i].ran_at);
        }
        ll_release(t[i].h);
    }
    CHECK_EQ_INT(ran, N);
    CHECK_EQ_INT(early, 0);
    ll_release(loop);
}

/* LL_RUN_ONCE with only a timer pending blocks until the timer is due, not
 * less (the poll timeout is rounded up, never down). */
static void test_run_once_waits_for_timer(void) {
    ll_loop loop = new_loop();
    for (int i = 0; i < 10; i++) {
        struct timing t = {0, 0, 0.0013 + 0.0007 * i, -1, 0};
        t.scheduled_at = ll_loop_time(loop);
        CHECK_EQ_INT(ll_call_later(loop, t.delay, timing_cb, &t, &t.h), 0);
        /* A timer due within a ms may need a second short iteration, never
         * more than a handful. */
        for (int k = 0; k < 5 && t.ran_at < 0; k++)
            CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
        CHECK(t.ran_at >= t.scheduled_at + t.delay - 2e-9);
        CHECK(t.ran_at >= 0);
        ll_release(t.h);
    }
    ll_release(loop);
}

static void test_call_at_and_negative_delay(void) {
    ll_loop loop = new_loop();
    reset_log();
    /* A deadline in the past, or a negative delay, is due at once: it runs
     * in the next iteration, after the callbacks already ready. */
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_call_at(loop, ll_loop_time(loop) - 10.0, log_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, -5.0, log_cb, (void *)3, NULL), 0);
    CHECK_EQ_INT(ll_call_at(loop, 0.0, log_cb, (void *)4, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_LOG(1, 2, 3, 4);

    /* ll_timer_when of call_at is the given time. */
    ll_handle h = 0;
    double when = ll_loop_time(loop) + 100.0;
    CHECK_EQ_INT(ll_call_at(loop, when, log_cb, (void *)5, &h), 0);
    double got = ll_timer_when(h);
    CHECK(got >= when - 1e-9 && got <= when + 1e-6);
    ll_release(h);
    ll_release(loop);
}

/* ---- handles and cancellation ------------------------------------------- */

static void test_handle_cancel(void) {
    ll_loop loop = new_loop();
    reset_log();
    ll_handle a = 0, b = 0, c = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, &a), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)2, &b), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.01, log_cb, (void *)3, &c), 0);
    CHECK(a != 0 && b != 0 && c != 0);
    CHECK(a != b && b != c);
    CHECK_EQ_INT(ll_handle_cancelled(a), 0);
    CHECK_EQ_INT(ll_handle_cancelled(c), 0);

    /* timer_when: a timer's deadline; negative for a call_soon handle. */
    CHECK(ll_timer_when(c) > ll_loop_time(loop));
    CHECK(ll_timer_when(c) < ll_loop_time(loop) + 0.011);
    CHECK(ll_timer_when(a) < 0);

    CHECK_EQ_INT(ll_handle_cancel(b), 0);
    CHECK_EQ_INT(ll_handle_cancelled(b), 1);
    CHECK_EQ_INT(ll_handle_cancel(b), 0); /* twice: no effect, no error */
    CHECK_EQ_INT(ll_handle_cancelled(b), 1);
    CHECK_EQ_INT(ll_handle_cancel(c), 0);
    CHECK_EQ_INT(ll_handle_cancelled(c), 1);
    CHECK_EQ_INT(ll_handle_cancelled(a), 0);

    run_for(loop, 0.03);
    CHECK_LOG(1);

    /* Cancelling after it ran does nothing and is not an error. */
    CHECK_EQ_INT(ll_handle_cancel(a), 0);
    run_for(loop, 0.001);
    CHECK_LOG(1);

    CHECK_EQ_INT(ll_release(a), 0);
    CHECK_EQ_INT(ll_release(b), 0);
    CHECK_EQ_INT(ll_release(c), 0);
    CHECK_EQ_INT(ll_handle_cancelled(a), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(a), LL_EBADHANDLE);
    ll_release(loop);
}

/* Releasing a handle does not cancel it, and a released id stays dead even
 * when the library reuses the record for a new handle. */
static void test_release_handle(void) {
    ll_loop loop = new_loop();
    reset_log();
    ll_handle h1 = 0, t1 = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, &h1), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.005, log_cb, (void *)2, &t1), 0);
    CHECK_EQ_INT(ll_release(h1), 0);
    CHECK_EQ_INT(ll_release(t1), 0);
    run_for(loop, 0.02);
    CHECK_LOG(1, 2);

    for (int i = 0; i < 50; i++) {
        ll_handle h2 = 0;
        CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)3, &h2), 0);
        CHECK(h2 != h1 && h2 != t1);
        CHECK_EQ_INT(ll_handle_cancel(h1), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_handle_cancel(t1), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_handle_cancelled(h2), 0);
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
        CHECK_EQ_INT(ll_release(h2), 0);
    }
    CHECK_EQ_INT(norder, 52);
    ll_release(loop);
}

/* Cancelling, from an earlier callback, a handle that is ready in the same
 * iteration: it does not run. */
struct victim {
    ll_handle h;
};

static void cancel_victim_cb(ll_loop loop, void *arg) {
    log_cb(loop, (void *)1);
    struct victim *v = arg;
    CHECK_EQ_INT(ll_handle_cancel(v->h), 0);
}

static void run_cancel_same_iteration(int debug, int filler) {
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_debug(loop, debug), 0);
    reset_log();
    struct victim soon = {0}, timer = {0};
    /* The timer is due now, so it is ready in the same iteration. */
    CHECK_EQ_INT(ll_call_later(loop, 0.0, log_cb, (void *)90, &timer.h), 0);
    usleep(1000);
    CHECK_EQ_INT(ll_call_soon(loop, cancel_victim_cb, &soon, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, cancel_victim_cb, &timer, NULL), 0);
    for (int i = 0; i < filler; i++)
        CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)91, &soon.h), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)3, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    int saw_victim = 0;
    for (int i = 0; i < norder; i++)
        if (order[i] == 90 || order[i] == 91)
            saw_victim = 1;
    CHECK_EQ_INT(saw_victim, 0);
    CHECK_EQ_INT(norder, 2 + filler + 1);
    CHECK_EQ_INT(order[norder - 1], 3);
    CHECK_EQ_INT(ll_handle_cancelled(soon.h), 1);
    CHECK_EQ_INT(ll_handle_cancelled(timer.h), 1);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 2 + filler + 1);
    ll_release(soon.h);
    ll_release(timer.h);
    ll_release(loop);
}

static void test_cancel_in_same_iteration(void) {
    run_cancel_same_iteration(0, 0);
    run_cancel_same_iteration(0, 1000); /* victim far behind the canceller */
    run_cancel_same_iteration(1, 0);    /* debug mode runs callbacks one by one */
}

static void test_cancel_pending_timers_many(void) {
    ll_loop loop = new_loop();
    reset_log();
    /* 300 timers, 200 of them cancelled: enough to trigger the purge of
     * cancelled timers; the 100 survivors run, in order. */
    static ll_handle hs[300];
    double when = ll_loop_time(loop) + 0.1;
    for (int i = 0; i < 300; i++)
        CHECK_EQ_INT(ll_call_at(loop, when + 0.00001 * i, log_cb, (void *)(intptr_t)i, &hs[i]), 0);
    for (int i = 0; i < 300; i++)
        if (i % 3 != 0)
            CHECK_EQ_INT(ll_handle_cancel(hs[i]), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 0);
    run_for(loop, 0.2);
    int ok = norder == 100;
    for (int i = 0; ok && i < 100; i++)
        ok = order[i] == 3 * i;
    CHECK(ok);
    for (int i = 0; i < 300; i++)
        CHECK_EQ_INT(ll_release(hs[i]), 0);
    ll_release(loop);
}

/* Timers left pending when the loop is closed never run; their handles
 * stay usable until released. */
static void test_close_with_pending(void) {
    ll_loop loop = new_loop();
    reset_log();
    ll_handle h = 0, t = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, &h), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.001, log_cb, (void *)2, &t), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), LL_ECLOSED);
    CHECK_EQ_INT(norder, 0);
    CHECK_EQ_INT(ll_handle_cancel(h), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(ll_release(h), 0);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(norder, 0);
}

int main(void) {
    RUN_TEST(test_fifo);
    RUN_TEST(test_added_during_iteration_runs_next);
    RUN_TEST(test_many_parents_children);
    RUN_TEST(test_chain_one_step_per_iteration);
    RUN_TEST(test_timer_order);
    RUN_TEST(test_timers_never_early);
    RUN_TEST(test_run_once_waits_for_timer);
    RUN_TEST(test_call_at_and_negative_delay);
    RUN_TEST(test_handle_cancel);
    RUN_TEST(test_release_handle);
    RUN_TEST(test_cancel_in_same_iteration);
    RUN_TEST(test_cancel_pending_timers_many);
    RUN_TEST(test_close_with_pending);
    return CHECK_REPORT();
}
