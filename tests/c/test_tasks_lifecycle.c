/* SPDX-License-Identifier: MIT */
/* A task's life: cancellation case by case, as asyncio's Task.cancel and
 * __step (cancelling while awaiting cancels the awaited future and the next
 * step must throw the cancellation in; cancelling before the first step; a
 * task that catches it; cancelling during its own step; cancelling() and
 * uncancel(); propagation through an awaited task), the calls refused
 * outside a step, all_tasks, the id's lifetime and "Task (or Future)
 * exception was never retrieved". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libloop.h"
#include "check.h"

static ll_loop good;

static int nfree;
static uintptr_t last_freed;
static void count_free(uintptr_t v) {
    nfree++;
    last_freed = v;
}

/* ---- the task under test ------------------------------------------------------------ */

enum { RERAISE, CATCH };
struct canc {
    ll_future fut;  /* awaited by the first step (if not cancelled already) */
    int mode;       /* on cancellation: RERAISE or CATCH (uncancel + return 5) */
    int steps;
    int must[4];    /* ll_task_must_raise_cancel at each step */
    ll_future woken[4];
    int uncancel_rc;
};

static void canc_step(ll_task t, void *arg) {
    struct canc *c = arg;
    int i = c->steps++;
    c->must[i] = ll_task_must_raise_cancel(t);
    ll_task_awaited(t, &c->woken[i]);
    if (c->must[i]) {
        if (c->mode == CATCH) {
            c->uncancel_rc = ll_task_uncancel(t);
            CHECK_EQ_INT(ll_task_return(t, 5, NULL), 0);
        } else {
            CHECK_EQ_INT(ll_task_raise(t, LL_ECANCELLED, NULL, 0, NULL), 0);
        }
    } else if (i == 0) {
        CHECK_EQ_INT(ll_task_await(t, c->fut), 0);
    } else {
        CHECK_EQ_INT(ll_task_return(t, 1, NULL), 0);
    }
}

static void test_cancel_while_awaiting(void) {
    struct canc c = {.mode = RERAISE};
    ll_task t;
    CHECK_EQ_INT(ll_future_new(good, &c.fut), 0);
    CHECK_EQ_INT(ll_task_new(good, canc_step, &c, &t), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(c.steps, 1);
    /* The awaited future is cancelled at once; the task steps again with
     * a cancellation to throw in; re-raising leaves it cancelled. */
    CHECK_EQ_INT(ll_task_cancel(t, "bye"), 1);
    CHECK_EQ_INT(ll_future_state(c.fut), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_state(t), LL_PENDING);
    CHECK_EQ_INT(ll_task_cancelling(t), 1);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(c.steps, 2);
    CHECK_EQ_INT(c.must[0], 0);
    CHECK_EQ_INT(c.must[1], 1);
    CHECK_EQ_INT(c.woken[1], c.fut);
    CHECK_EQ_INT(ll_future_state(t), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_result(t, NULL), LL_ECANCELLED);
    CHECK_EQ_INT(ll_task_cancel(t, NULL), 0); /* done: nothing to cancel */
    ll_release(c.fut);
    ll_release(t);
}

static void test_cancel_before_first_step(void) {
    struct canc c = {.mode = RERAISE};
    ll_task t;
    CHECK_EQ_INT(ll_future_new(good, &c.fut), 0);
    CHECK_EQ_INT(ll_task_new(good, canc_step, &c, &t), 0);
    CHECK_EQ_INT(ll_task_cancel(t, NULL), 1);
    CHECK_EQ_INT(ll_future_state(t), LL_PENDING); /* it must run to raise */
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(c.steps, 1);
    CHECK_EQ_INT(c.must[0], 1);
    CHECK_EQ_INT(c.woken[0], 0);
    CHECK_EQ_INT(ll_future_state(t), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_state(c.fut), LL_PENDING); /* never awaited */
    ll_release(c.fut);
    ll_release(t);
}

static void test_cancel_caught(void) {
    struct canc c = {.mode = CATCH, .uncancel_rc = -1};
    ll_task t;
    CHECK_EQ_INT(ll_future_new(good, &c.fut), 0);
    CHECK_EQ_INT(ll_task_new(good, canc_step, &c, &t), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_task_cancel(t, NULL), 1);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(c.must[1], 1);
    CHECK_EQ_INT(c.uncancel_rc, 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_state(t), LL_FINISHED); /* not cancelled */
    CHECK_EQ_INT(ll_future_result(t, &v), 0);
    CHECK_EQ_INT(v, 5);
    CHECK_EQ_INT(ll_task_cancelling(t), 0);
    ll_release(c.fut);
    ll_release(t);
}

/* A step that cancels its own task and then returns, awaits or yields. */
struct selfc {
    int then; /* 0 return, 1 await fut, 2 yield */
    ll_future fut;
    int steps, must2, cancelling;
};
static void selfc_step(ll_task t, void *arg) {
    struct selfc *s = arg;
    if (s->steps++ > 0) {
        s->must2 = ll_task_must_raise_cancel(t);
        CHECK_EQ_INT(ll_task_raise(t, LL_ECANCELLED, NULL, 0xBAD, count_free), 0);
        return;
    }
    CHECK_EQ_INT(ll_task_cancel(t, "self"), 1);
    s->cancelling = ll_task_cancelling(t);
    if (s->then == 0)
        CHECK_EQ_INT(ll_task_return(t, 77, count_free), 0);
    else if (s->then == 1)
        CHECK_EQ_INT(ll_task_await(t, s->fut), 0);
    else
        CHECK_EQ_INT(ll_task_yield(t), 0);
}

static void test_cancel_during_own_step(void) {
    for (int then = 0; then < 3; then++) {
        struct selfc s = {.then = then};
        ll_task t;
        nfree = 0;
        CHECK_EQ_INT(ll_future_new(good, &s.fut), 0);
        CHECK_EQ_INT(ll_task_new(good, selfc_step, &s, &t), 0);
        CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
        CHECK_EQ_INT(s.cancelling, 1);
        if (then == 0) {
            /* Cancelled right before it returned: cancelled, value freed. */
            CHECK_EQ_INT(ll_future_state(t), LL_CANCELLED);
            CHECK_EQ_INT(nfree, 1);
            CHECK_EQ_INT(last_freed, 77);
        } else {
            /* await: the future is cancelled at once; yield: nothing yet.
             * Either way the next step must throw the cancellation in. */
            CHECK_EQ_INT(ll_future_state(s.fut), then == 1 ? LL_CANCELLED : LL_PENDING);
            CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
            CHECK_EQ_INT(s.steps, 2);
            CHECK_EQ_INT(s.must2, 1);
            CHECK_EQ_INT(ll_future_state(t), LL_CANCELLED);
            CHECK_EQ_INT(nfree, 1); /* a payload raised with LL_ECANCELLED is freed */
            CHECK_EQ_INT(last_freed, 0xBAD);
        }
        ll_release(s.fut);
        ll_release(t);
        CHECK_EQ_INT(nfree, 1);
    }
}

static void test_cancelling_counts(void) {
    struct canc c = {.mode = CATCH};
    ll_task t;
    CHECK_EQ_INT(ll_future_new(good, &c.fut), 0);
    CHECK_EQ_INT(ll_task_new(good, canc_step, &c, &t), 0);
    CHECK_EQ_INT(ll_task_cancelling(t), 0);
    CHECK_EQ_INT(ll_task_uncancel(t), 0); /* never below 0 */
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_task_cancel(t, NULL), 1);
    CHECK_EQ_INT(ll_task_cancel(t, NULL), 1);
    CHECK_EQ_INT(ll_future_cancel(t, NULL), 1); /* on a task: ll_task_cancel */
    CHECK_EQ_INT(ll_task_cancelling(t), 3);
    CHECK_EQ_INT(ll_task_uncancel(t), 2);
    CHECK_EQ_INT(ll_task_uncancel(t), 1);
    CHECK_EQ_INT(ll_task_cancelling(t), 1);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(c.uncancel_rc, 0); /* the step's own uncancel */
    CHECK_EQ_INT(ll_future_state(t), LL_FINISHED);
    CHECK_EQ_INT(ll_task_cancel(t, NULL), 0);
    CHECK_EQ_INT(ll_task_cancelling(t), 0);
    ll_release(c.fut);
    ll_release(t);
}

/* Cancelling a task that awaits a task cancels the inner one too. */
static void test_cancel_propagates_through_awaited_task(void) {
    struct canc inner = {.mode = RERAISE}, outer = {.mode = RERAISE};
    ll_task ti, to;
    CHECK_EQ_INT(ll_future_new(good, &inner.fut), 0);
    CHECK_EQ_INT(ll_task_new(good, canc_step, &inner, &ti), 0);
    outer.fut = ti;
    CHECK_EQ_INT(ll_task_new(good, canc_step, &outer, &to), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_task_cancel(to, NULL), 1);
    CHECK_EQ_INT(ll_future_state(inner.fut), LL_CANCELLED);
    CHECK_EQ_INT(ll_task_cancelling(ti), 1);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, to), 0);
    CHECK_EQ_INT(ll_future_state(ti), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_state(to), LL_CANCELLED);
    CHECK_EQ_INT(outer.must[1], 1);
    CHECK_EQ_INT(outer.woken[1], ti);
    ll_release(inner.fut);
    ll_release(ti);
    ll_release(to);
}

/* Outside a step, the step-only calls are refused. */
static void test_outside_step(void) {
    struct canc c = {.mode = RERAISE};
    ll_task t, cur = 1;
    ll_future out = 1;
    CHECK_EQ_INT(ll_future_new(good, &c.fut), 0);
    CHECK_EQ_INT(ll_task_new(good, canc_step, &c, &t), 0);
    CHECK_EQ_INT(ll_task_await(t, c.fut), LL_ESTATE);
    CHECK_EQ_INT(ll_task_yield(t), LL_ESTATE);
    nfree = 0;
    CHECK_EQ_INT(ll_task_return(t, 1, count_free), LL_ESTATE);
    CHECK_EQ_INT(ll_task_raise(t, -1, NULL, 2, count_free), LL_ESTATE);
    CHECK_EQ_INT(nfree, 0);
    CHECK_EQ_INT(ll_task_awaited(t, &out), LL_ESTATE);
    CHECK_EQ_INT(ll_task_must_raise_cancel(t), 0);
    CHECK_EQ_INT(ll_current_task(good, &cur), 0);
    CHECK_EQ_INT(cur, 0);
    /* A task's outcome comes from its steps only. */
    CHECK_EQ_INT(ll_future_set_result(t, 1, NULL), LL_ESTATE);
    CHECK_EQ_INT(ll_future_set_exception(t, -1, NULL, 0, NULL), LL_ESTATE);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(c.steps, 1);
    CHECK_EQ_INT(ll_future_set_result(c.fut, 0, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(ll_future_result(t, NULL), 0);
    ll_release(c.fut);
    ll_release(t);
}

/* ---- current task, all tasks, lifetime, never-retrieved ---------------------- */

static void raise_step(ll_task t, void *arg) {
    (void)arg;
    CHECK_EQ_INT(ll_task_raise(t, -42, "task broke", 0, NULL), 0);
}

struct reports {
    int n, code;
    ll_task task;
    ll_future future;
    char message[256];
};
static void report_handler(ll_loop loop, const ll_error_context *ctx, void *arg) {
    (void)loop;
    struct reports *r = arg;
    r->n++;
    r->code = ctx->code;
    r->task = ctx->task;
    r->future = ctx->future;
    snprintf(r->message, sizeof r->message, "%s", ctx->message ? ctx->message : "(null)");
}

static void test_all_tasks_and_lifetime(void) {
    struct canc c[3] = {{.mode = RERAISE}, {.mode = RERAISE}, {.mode = RERAISE}};
    ll_task t[3], buf[8] = {0};
    ll_future f;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    for (int i = 0; i < 3; i++) {
        c[i].fut = f;
        CHECK_EQ_INT(ll_task_new(good, canc_step, &c[i], &t[i]), 0);
    }
    CHECK_EQ_INT(ll_all_tasks(good, buf, 8), 3);
    int found = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            found += buf[i] == t[j];
    CHECK_EQ_INT(found, 3);
    CHECK_EQ_INT(ll_all_tasks(good, buf, 1), 3); /* the count, beyond cap */
    CHECK_EQ_INT(ll_all_tasks(good, NULL, 0), 3);

    /* Released while pending: the loop keeps the task (and its id) alive
     * until it is done; then the id goes stale. */
    CHECK_EQ_INT(ll_release(t[0]), 0);
    CHECK_EQ_INT(ll_release(t[0]), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_future_state(t[0]), LL_PENDING);
    CHECK_EQ_INT(ll_future_set_result(f, 0, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t[2]), 0);
    CHECK_EQ_INT(c[0].steps, 2);
    CHECK_EQ_INT(ll_future_state(t[0]), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_all_tasks(good, buf, 8), 0);
    ll_release(t[1]);
    ll_release(t[2]);
    ll_release(f);

    /* A failed task released unretrieved is reported, naming the task. */
    struct reports r = {0};
    ll_task bad;
    CHECK_EQ_INT(ll_loop_set_exception_handler(good, report_handler, &r), 0);
    CHECK_EQ_INT(ll_task_new(good, raise_step, NULL, &bad), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, bad), 0);
    CHECK_EQ_INT(r.n, 0);
    CHECK_EQ_INT(ll_release(bad), 0);
    CHECK_EQ_INT(r.n, 1);
    CHECK_EQ_INT(r.code, -42);
    CHECK_EQ_INT(r.task, bad);
    CHECK_EQ_INT(r.future, bad);
    /* ... and not when its outcome was read. */
    CHECK_EQ_INT(ll_task_new(good, raise_step, NULL, &bad), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, bad), 0);
    CHECK_EQ_INT(ll_future_result(bad, NULL), -42);
    CHECK_EQ_INT(ll_release(bad), 0);
    CHECK_EQ_INT(r.n, 1);
    ll_loop_set_exception_handler(good, NULL, NULL);
}

/* A failed future released with its exception never retrieved is reported
 * (asyncio's "Future exception was never retrieved"); one that was looked
 * at, a result or a cancellation is not. */
static void test_future_never_retrieved(void) {
    struct reports r = {0};
    CHECK_EQ_INT(ll_loop_set_exception_handler(good, report_handler, &r), 0);
    ll_future f;
    nfree = 0;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_set_exception(f, -77, "disk on fire", 0xE1, count_free), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(r.n, 0); /* reported on release, not when it fails */
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(r.n, 1);
    CHECK_EQ_INT(r.code, -77);
    CHECK_EQ_INT(r.future, f);
    CHECK_EQ_INT(r.task, 0);
    CHECK(strstr(r.message, "never retrieved") != NULL);
    CHECK(strstr(r.message, "disk on fire") != NULL);
    CHECK_EQ_INT(nfree, 1);

    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_set_exception(f, -78, "seen", 0, NULL), 0);
    CHECK_EQ_INT(ll_future_result(f, NULL), -78);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_set_exception(f, -79, "seen", 0, NULL), 0);
    CHECK_EQ_INT(ll_future_exception(f, NULL, NULL, NULL), 0);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_set_result(f, 1, NULL), 0);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_cancel(f, "x"), 1);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(r.n, 1);
    CHECK_EQ_INT(ll_loop_set_exception_handler(good, NULL, NULL), 0);
}

int main(void) {
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_cancel_while_awaiting);
    RUN_TEST(test_cancel_before_first_step);
    RUN_TEST(test_cancel_caught);
    RUN_TEST(test_cancel_during_own_step);
    RUN_TEST(test_cancelling_counts);
    RUN_TEST(test_cancel_propagates_through_awaited_task);
    RUN_TEST(test_outside_step);
    RUN_TEST(test_all_tasks_and_lifetime);
    RUN_TEST(test_future_never_retrieved);
    ll_release(good);
    return CHECK_REPORT();
}
