/* SPDX-License-Identifier: MIT */
/* Running to completion: ll_loop_run_until_complete (LL_ESTOPPED when the
 * loop is stopped first, LL_ERUNNING when nested) and ll_run, asyncio.run:
 * a new loop, the main task run to completion, the tasks left cancelled,
 * the executor shut down, the loop closed; the main task's value or error
 * code comes back. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

static ll_loop good;

static int nfree;
static void count_free(uintptr_t v) {
    (void)v;
    nfree++;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

/* Completes the future in arg with result 77 (from a timer). */
static void finish77_cb(ll_loop loop, void *arg) {
    (void)loop;
    ll_future_set_result((ll_future)(uintptr_t)arg, 77, count_free);
}

/* ---- run_until_complete --------------------------------------------------------- */

static int ruc_rc;
static void nested_ruc_cb(ll_loop loop, void *arg) {
    ruc_rc = ll_loop_run_until_complete(loop, (ll_future)(uintptr_t)arg);
}

static void test_run_until_complete(void) {
    ll_future f;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    /* Stopped before the future is done. */
    CHECK_EQ_INT(ll_call_soon(good, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, f), LL_ESTOPPED);
    CHECK_EQ_INT(ll_loop_is_running(good), 0);
    /* ll_loop_stop while idle: one iteration, then LL_ESTOPPED. */
    CHECK_EQ_INT(ll_loop_stop(good), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, f), LL_ESTOPPED);
    /* Nested: LL_ERUNNING. */
    ruc_rc = 1;
    CHECK_EQ_INT(ll_call_soon(good, nested_ruc_cb, (void *)(uintptr_t)f, NULL), 0);
    CHECK_EQ_INT(ll_call_later(good, 0.005, finish77_cb, (void *)(uintptr_t)f, NULL), 0);
    /* The stop request was consumed: this run lasts until f is done. */
    CHECK_EQ_INT(ll_loop_run_until_complete(good, f), 0);
    CHECK_EQ_INT(ruc_rc, LL_ERUNNING);
    CHECK_EQ_INT(ll_future_result(f, NULL), 0);
    /* Already done: returns after one iteration. */
    CHECK_EQ_INT(ll_loop_run_until_complete(good, f), 0);
    ll_release(f);
}

/* ---- ll_run (asyncio.run) --------------------------------------------------------- */

struct main_arg {
    int mode; /* 0 return 42 (with a free fn), 1 raise -3, 2 raise cancelled, 3 yield then return */
    int steps;
    int nested_rc;
};
static void main_step(ll_task t, void *arg) {
    struct main_arg *m = arg;
    m->steps++;
    uintptr_t r = 5;
    m->nested_rc = ll_run(main_step, m, &r); /* asyncio.run inside a running loop */
    switch (m->mode) {
    case 0:
        ll_task_return(t, 42, count_free);
        break;
    case 1:
        ll_task_raise(t, -3, "main failed", 0, NULL);
        break;
    case 2:
        ll_task_raise(t, LL_ECANCELLED, NULL, 0, NULL);
        break;
    default:
        if (m->steps < 3)
            ll_task_yield(t);
        else
            ll_task_return(t, 7, NULL);
    }
}

static int run_rc;
static void run_inside_cb(ll_loop loop, void *arg) {
    (void)loop;
    run_rc = ll_run(main_step, arg, NULL);
}

static void test_ll_run(void) {
    struct main_arg m = {0};
    uintptr_t result = 0;
    nfree = 0;
    CHECK_EQ_INT(ll_run(main_step, &m, &result), 0);
    CHECK_EQ_INT(result, 42);
    CHECK_EQ_INT(nfree, 0); /* the value now belongs to the caller */
    CHECK_EQ_INT(m.steps, 1);
    CHECK_EQ_INT(m.nested_rc, LL_ERUNNING);

    m = (struct main_arg){.mode = 1};
    result = 99;
    CHECK_EQ_INT(ll_run(main_step, &m, &result), -3);
    CHECK_EQ_INT(result, 99);
    m = (struct main_arg){.mode = 2};
    CHECK_EQ_INT(ll_run(main_step, &m, NULL), LL_ECANCELLED);
    m = (struct main_arg){.mode = 3};
    CHECK_EQ_INT(ll_run(main_step, &m, &result), 0);
    CHECK_EQ_INT(m.steps, 3);
    CHECK_EQ_INT(result, 7);
    CHECK_EQ_INT(ll_run(NULL, NULL, &result), LL_EINVAL);
    /* Inside a running loop's callback: refused, and main never steps. */
    m = (struct main_arg){0};
    run_rc = 1;
    CHECK_EQ_INT(ll_call_soon(good, run_inside_cb, &m, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(run_rc, LL_ERUNNING);
    CHECK_EQ_INT(m.steps, 0);
    STILL_RUNS(good);
}

/* ---- ll_run cleans up after the main task --------------------------------------- */

/* A task left behind: it awaits a future nobody completes. On cancellation
 * it records that and re-raises (or fails with -9 when `fail` is set). */
struct leftover {
    ll_future fut;
    int fail, steps, saw_cancel;
};
static void leftover_step(ll_task t, void *arg) {
    struct leftover *l = arg;
    if (l->steps++ == 0) {
        ll_task_await(t, l->fut);
        return;
    }
    l->saw_cancel = ll_task_must_raise_cancel(t);
    if (l->fail)
        ll_task_raise(t, -9, "failed while cancelled", 0, NULL);
    else
        ll_task_raise(t, LL_ECANCELLED, NULL, 0, NULL);
}

static int job_done;
static uintptr_t slow_job(void *arg, int *err) {
    (void)arg;
    (void)err;
    usleep(30000);
    __atomic_store_n(&job_done, 1, __ATOMIC_SEQ_CST);
    return 0;
}

struct reports {
    int n, code;
};
static void report_handler(ll_loop loop, const ll_error_context *ctx, void *arg) {
    (void)loop;
    struct reports *r = arg;
    r->n++;
    r->code = ctx->code;
}

struct cleanup_main {
    ll_loop loop;
    struct leftover left[2];
    ll_task tasks[2];
    ll_future job;
    struct reports reports;
};
static void cleanup_main_step(ll_task t, void *arg) {
    struct cleanup_main *m = arg;
    CHECK_EQ_INT(ll_future_get_loop(t, &m->loop), 0);
    CHECK_EQ_INT(ll_loop_set_exception_handler(m->loop, report_handler, &m->reports), 0);
    for (int i = 0; i < 2; i++) {
        m->left[i].fail = i;
        CHECK_EQ_INT(ll_future_new(m->loop, &m->left[i].fut), 0);
        CHECK_EQ_INT(ll_task_new(m->loop, leftover_step, &m->left[i], &m->tasks[i]), 0);
    }
    CHECK_EQ_INT(ll_run_in_executor(m->loop, slow_job, NULL, &m->job), 0);
    ll_task_return(t, 1, NULL); /* without awaiting any of it */
}

static void test_ll_run_cleans_up(void) {
    struct cleanup_main m = {0};
    uintptr_t result = 0;
    job_done = 0;
    CHECK_EQ_INT(ll_run(cleanup_main_step, &m, &result), 0);
    CHECK_EQ_INT(result, 1);
    /* The tasks left were cancelled (each got to throw it in)... */
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(m.left[i].steps, 2);
        CHECK_EQ_INT(m.left[i].saw_cancel, 1);
        CHECK_EQ_INT(ll_future_state(m.left[i].fut), LL_CANCELLED);
    }
    CHECK_EQ_INT(ll_future_state(m.tasks[0]), LL_CANCELLED);
    /* ... one that failed instead is reported to the exception handler ... */
    CHECK_EQ_INT(m.reports.n, 1);
    CHECK_EQ_INT(m.reports.code, -9);
    /* ... the executor was shut down (waiting for the job) and the loop
     * is gone. */
    CHECK_EQ_INT(__atomic_load_n(&job_done, __ATOMIC_SEQ_CST), 1);
    CHECK_EQ_INT(ll_future_state(m.job), LL_FINISHED);
    CHECK_EQ_INT(ll_loop_is_closed(m.loop), LL_EBADHANDLE);
    /* Our references outlive the loop; releasing them is fine. */
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(ll_release(m.tasks[i]), 0);
        CHECK_EQ_INT(ll_release(m.left[i].fut), 0);
    }
    CHECK_EQ_INT(ll_release(m.job), 0);
    STILL_RUNS(good);
}

int main(void) {
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_run_until_complete);
    RUN_TEST(test_ll_run);
    RUN_TEST(test_ll_run_cleans_up);
    ll_release(good);
    return CHECK_REPORT();
}
