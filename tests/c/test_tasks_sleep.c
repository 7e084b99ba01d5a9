/* SPDX-License-Identifier: MIT */
/* ll_task_sleep, the C-side yield fast path and ll_future_get_loop: a step
 * that suspends in one call, with the ordering, outcome and cancellation
 * rules of the three-call form (ll_sleep + ll_task_await + ll_release). */
#include <math.h>
#include <stdint.h>

#include "libloop.h"
#include "check.h"

static ll_loop good;

/* An order log: each entry is a small integer. */
static int order[64];
static int norder;
static void note(int v) {
    if (norder < 64)
        order[norder++] = v;
}
static void note_cb(ll_loop loop, void *arg) {
    (void)loop;
    note((int)(intptr_t)arg);
}

/* Step 1: call_soon(10), yield (C fast path), call_soon(11); step 2 notes 2
 * and returns. The yield schedules the next step where it is called, as
 * asyncio's bare yield does, so the order is 10, step 2, 11. */
static void yield_order_step(ll_task t, void *arg) {
    int *n = arg;
    if ((*n)++ == 0) {
        CHECK_EQ_INT(ll_call_soon(good, note_cb, (void *)(intptr_t)10, NULL), 0);
        CHECK_EQ_INT(ll_task_sleep(t, 0), 0);
        CHECK_EQ_INT(ll_call_soon(good, note_cb, (void *)(intptr_t)11, NULL), 0);
        /* A second outcome in the same step is refused, even after a C yield. */
        CHECK_EQ_INT(ll_task_yield(t), LL_ESTATE);
        CHECK_EQ_INT(ll_task_return(t, 1, NULL), LL_ESTATE);
        return;
    }
    note(2);
    ll_future aw = 99;
    CHECK_EQ_INT(ll_task_awaited(t, &aw), 0);
    CHECK_EQ_INT(aw, 0); /* woken by a yield, not a future */
    CHECK_EQ_INT(ll_task_return(t, 7, NULL), 0);
}

static void test_yield_keeps_call_soon_order(void) {
    int n = 0;
    norder = 0;
    ll_task t;
    CHECK_EQ_INT(ll_task_new(good, yield_order_step, &n, &t), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(norder, 3);
    CHECK_EQ_INT(order[0], 10);
    CHECK_EQ_INT(order[1], 2);
    CHECK_EQ_INT(order[2], 11);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(t, &v), 0);
    CHECK_EQ_INT(v, 7);
    CHECK_EQ_INT(ll_release(t), 0);
}

/* An outcome chosen through Go first makes a later C yield fail. */
static void await_then_yield_step(ll_task t, void *arg) {
    int *n = arg;
    if ((*n)++ == 0) {
        ll_future f;
        CHECK_EQ_INT(ll_sleep(good, 0, &f), 0);
        CHECK_EQ_INT(ll_task_await(t, f), 0);
        CHECK_EQ_INT(ll_task_sleep(t, 0), LL_ESTATE);
        CHECK_EQ_INT(ll_task_yield(t), LL_ESTATE);
        CHECK_EQ_INT(ll_release(f), 0);
        return;
    }
    CHECK_EQ_INT(ll_task_return(t, 0, NULL), 0);
}

static void test_second_outcome_after_go_outcome(void) {
    int n = 0;
    ll_task t;
    CHECK_EQ_INT(ll_task_new(good, await_then_yield_step, &n, &t), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(ll_future_result(t, NULL), 0);
    CHECK_EQ_INT(ll_release(t), 0);
}

/* A failed await of itself ends the task (LL_ESTATE) inside the step: the
 * C yield path must refuse a later sleep(0) / yield too. */
static void await_self_step(ll_task t, void *arg) {
    int *n = arg;
    (*n)++;
    CHECK_EQ_INT(ll_task_await(t, t), LL_ESTATE);
    CHECK_EQ_INT(ll_task_sleep(t, 0), LL_ESTATE);
    CHECK_EQ_INT(ll_task_yield(t), LL_ESTATE);
    CHECK_EQ_INT(ll_task_sleep(t, 0.01), LL_ESTATE);
}

static void test_sleep_after_failed_await(void) {
    int n = 0, code = 0;
    ll_task t;
    CHECK_EQ_INT(ll_task_new(good, await_self_step, &n, &t), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(n, 1); /* never stepped again */
    CHECK_EQ_INT(ll_future_exception(t, &code, NULL, NULL), 0);
    CHECK_EQ_INT(code, LL_ESTATE);
    CHECK_EQ_INT(ll_release(t), 0);
}

/* Task ids outlive a released loop while the host holds them: sleeping on
 * them is refused, never a crash. */
static void return_step(ll_task t, void *arg) {
    (void)arg;
    CHECK_EQ_INT(ll_task_return(t, 0, NULL), 0);
}

static void test_task_of_released_loop(void) {
    ll_loop l, out = 0;
    ll_task t;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_task_new(l, return_step, NULL, &t), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(l, t), 0);
    CHECK_EQ_INT(ll_release(l), 0);
    CHECK_EQ_INT(ll_task_sleep(t, 0), LL_ESTATE);
    CHECK_EQ_INT(ll_task_sleep(t, 0.1), LL_ESTATE);
    CHECK_EQ_INT(ll_task_yield(t), LL_ESTATE);
    CHECK_EQ_INT(ll_task_await(t, t), LL_ESTATE);
    CHECK_EQ_INT(ll_future_get_loop(t, &out), 0);
    CHECK_EQ_INT(out, l);
    CHECK_EQ_INT(ll_loop_is_closed(out), LL_EBADHANDLE); /* the loop it names is gone */
    CHECK_EQ_INT(ll_release(t), 0);
}

struct timed {
    int steps;
    double started, woke;
};

static void timed_step(ll_task t, void *arg) {
    struct timed *s = arg;
    if (s->steps++ == 0) {
        s->started = ll_loop_time(good);
        CHECK_EQ_INT(ll_task_sleep(t, 0.02), 0);
        return;
    }
    s->woke = ll_loop_time(good);
    CHECK_EQ_INT(ll_task_must_raise_cancel(t), 0);
    CHECK_EQ_INT(ll_task_return(t, 0, NULL), 0);
}

static void test_sleep_never_early(void) {
    struct timed s = {0};
    ll_task t;
    CHECK_EQ_INT(ll_task_new(good, timed_step, &s, &t), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(s.steps, 2);
    CHECK(s.woke - s.started >= 0.02);
    CHECK(s.woke - s.started < 1.0);
    CHECK_EQ_INT(ll_release(t), 0);
}

/* Cancelling a task asleep in ll_task_sleep: the next step must raise. */
static void cancelled_sleep_step(ll_task t, void *arg) {
    int *n = arg;
    if ((*n)++ == 0) {
        CHECK_EQ_INT(ll_task_sleep(t, 3600), 0);
        return;
    }
    CHECK_EQ_INT(ll_task_must_raise_cancel(t), 1);
    CHECK_EQ_INT(ll_task_raise(t, LL_ECANCELLED, "woken", 0, NULL), 0);
}

static void cancel_cb(ll_loop loop, void *arg) {
    (void)loop;
    CHECK_EQ_INT(ll_task_cancel(*(ll_task *)arg, "stop"), 1);
}

static void test_cancel_during_sleep(void) {
    int n = 0;
    ll_task t;
    CHECK_EQ_INT(ll_task_new(good, cancelled_sleep_step, &n, &t), 0);
    CHECK_EQ_INT(ll_call_later(good, 0.005, cancel_cb, &t, NULL), 0);
    double t0 = ll_loop_time(good);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK(ll_loop_time(good) - t0 < 1.0); /* the hour-long sleep ended early */
    CHECK_EQ_INT(ll_future_state(t), LL_CANCELLED);
    CHECK_EQ_INT(ll_task_cancelling(t), 1);
    CHECK_EQ_INT(ll_release(t), 0);
}

/* Bad delays leave the step free to choose another outcome. */
static void bad_delay_step(ll_task t, void *arg) {
    (void)arg;
    CHECK_EQ_INT(ll_task_sleep(t, NAN), LL_EINVAL);
    CHECK_EQ_INT(ll_task_sleep(t, INFINITY), LL_EINVAL);
    CHECK_EQ_INT(ll_task_sleep(t, 1e300), LL_EINVAL);
    CHECK_EQ_INT(ll_task_return(t, 5, NULL), 0);
}

static void test_bad_input(void) {
    ll_task t;
    CHECK_EQ_INT(ll_task_new(good, bad_delay_step, NULL, &t), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(t, &v), 0);
    CHECK_EQ_INT(v, 5);
    /* Outside a step, and with ids that name no task. */
    CHECK_EQ_INT(ll_task_sleep(t, 0), LL_ESTATE);
    CHECK_EQ_INT(ll_task_sleep(t, 0.1), LL_ESTATE);
    CHECK_EQ_INT(ll_task_sleep(0, 0), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_task_sleep(good, 0), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_task_sleep(0xdeadbeefULL << 20, 0.1), LL_EBADHANDLE);
    ll_future f;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_task_sleep(f, 0), LL_EBADHANDLE); /* a plain future is no task */

    ll_loop out = 0;
    CHECK_EQ_INT(ll_future_get_loop(f, &out), 0);
    CHECK_EQ_INT(out, good);
    CHECK_EQ_INT(ll_future_get_loop(t, &out), 0);
    CHECK_EQ_INT(out, good);
    CHECK_EQ_INT(ll_future_get_loop(f, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_future_get_loop(good, &out), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_future_get_loop(0, &out), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_future_get_loop(f, &out), LL_EBADHANDLE); /* stale */
    CHECK_EQ_INT(ll_release(t), 0);
    /* The loop still runs a plain callback. */
    norder = 0;
    CHECK_EQ_INT(ll_call_soon(good, note_cb, (void *)(intptr_t)1, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 1);
}

/* ll_run's main step reaches its loop through ll_future_get_loop. */
static void run_main_step(ll_task t, void *arg) {
    int *n = arg;
    if ((*n)++ == 0) {
        ll_loop loop = 0;
        CHECK_EQ_INT(ll_future_get_loop(t, &loop), 0);
        ll_future f;
        CHECK_EQ_INT(ll_sleep(loop, 0.001, &f), 0);
        CHECK_EQ_INT(ll_task_await(t, f), 0);
        CHECK_EQ_INT(ll_release(f), 0);
        return;
    }
    CHECK_EQ_INT(ll_task_return(t, 42, NULL), 0);
}

static void test_run_main_reaches_its_loop(void) {
    int n = 0;
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_run(run_main_step, &n, &v), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(v, 42);
}

int main(void) {
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_yield_keeps_call_soon_order);
    RUN_TEST(test_second_outcome_after_go_outcome);
    RUN_TEST(test_sleep_after_failed_await);
    RUN_TEST(test_task_of_released_loop);
    RUN_TEST(test_sleep_never_early);
    RUN_TEST(test_cancel_during_sleep);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_run_main_reaches_its_loop);
    ll_release(good);
    return CHECK_REPORT();
}
