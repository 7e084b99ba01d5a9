/* SPDX-License-Identifier: MIT */
/* Cancellation through every composition of the helpers, through the
 * header: a leaf (a future, an ll_sleep, an ll_run_in_executor job, a task)
 * wrapped by up to three levels of ll_gather, ll_gather with
 * return_exceptions, ll_wait_for and a task awaiting the level below, with
 * the cancellation made at each level in turn. The outermost future must
 * complete (these once hung: ll_loop_run_until_complete ended with
 * LL_ESTOPPED) with asyncio's outcome: a cancellation travels up through
 * gather, wait_for and await, and stops at a gather with return_exceptions
 * below its own level. Also: a gather that ended cancelled is LL_FINISHED
 * with LL_ECANCELLED (asyncio's gather is never cancelled()), and
 * ll_wait_for's timeout over a gather is LL_ETIMEDOUT. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define MAX_DEPTH 3

enum leaf { L_FUTURE, L_SLEEP, L_EXECUTOR, L_TASK, NLEAF };
enum wrap { W_GATHER, W_GATHER_RE, W_WAIT_FOR, W_TASK, NWRAP };
static const char *leaf_names[NLEAF] = {"future", "sleep", "executor", "task"};
static const char *wrap_names[NWRAP] = {"gather", "gather_re", "wait_for", "task"};

/* A task's state: the future it awaits (0 for a leaf task) and its steps. */
struct node {
    ll_future below;
    int steps;
};

/* One case: its levels (0 = the leaf) and the executor leaf's job control. */
struct chain {
    ll_loop loop;
    ll_future lv[MAX_DEPTH + 1];
    struct node nodes[MAX_DEPTH + 1];
    int n;
    int job_code; /* what the blocked job fails with once released */
    int job_go;   /* atomic: release the job */
    int job_exited;
};

/* The executor leaf: blocks until released, then fails with job_code (or
 * returns 5 when job_code is 0). */
static uintptr_t blocked_job(void *arg, int *err) {
    struct chain *c = arg;
    while (!__atomic_load_n(&c->job_go, __ATOMIC_SEQ_CST))
        usleep(500);
    *err = __atomic_load_n(&c->job_code, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->job_exited, 1, __ATOMIC_SEQ_CST);
    return 5;
}

static void release_job(struct chain *c, int code) {
    __atomic_store_n(&c->job_code, code, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->job_go, 1, __ATOMIC_SEQ_CST);
}

/* A host coroutine: await below (or sleep, for a leaf task), then let a
 * cancellation thrown in, or an error read from below, escape. */
static void await_step(ll_task t, void *arg) {
    struct node *nd = arg;
    if (nd->steps++ == 0) {
        if (nd->below != 0)
            CHECK_EQ_INT(ll_task_await(t, nd->below), 0);
        else
            CHECK_EQ_INT(ll_task_sleep(t, 60.0), 0);
        return;
    }
    if (ll_task_must_raise_cancel(t) == 1) {
        CHECK_EQ_INT(ll_task_raise(t, LL_ECANCELLED, NULL, 0, NULL), 0);
        return;
    }
    uintptr_t v = 5;
    int rc = nd->below != 0 ? ll_future_result(nd->below, &v) : 0;
    if (rc != 0)
        CHECK_EQ_INT(ll_task_raise(t, rc, "re-raised", 0, NULL), 0);
    else
        CHECK_EQ_INT(ll_task_return(t, v, NULL), 0);
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

/* Counts the loop's error reports: a cancellation that travelled through a
 * composition is never an exception "never retrieved" (asyncio's gather,
 * wait_for and await all retrieve what they pass on). Printed, to say
 * which future a failing case leaked. */
static void count_reports(ll_loop loop, const ll_error_context *ctx, void *arg) {
    (void)loop;
    fprintf(stderr, "  report: %s\n", ctx->message);
    *(int *)arg += 1;
}

static void add_leaf(struct chain *c, enum leaf kind) {
    ll_future f = 0;
    switch (kind) {
    case L_FUTURE: CHECK_EQ_INT(ll_future_new(c->loop, &f), 0); break;
    case L_SLEEP: CHECK_EQ_INT(ll_sleep(c->loop, 60.0, &f), 0); break;
    case L_EXECUTOR: CHECK_EQ_INT(ll_run_in_executor(c->loop, blocked_job, c, &f), 0); break;
    default: CHECK_EQ_INT(ll_task_new(c->loop, await_step, &c->nodes[0], &f), 0); break;
    }
    c->lv[c->n++] = f;
}

static void add_wrap(struct chain *c, enum wrap kind) {
    ll_future below = c->lv[c->n - 1], f = 0;
    switch (kind) {
    case W_GATHER:
    case W_GATHER_RE: CHECK_EQ_INT(ll_gather(c->loop, 1, &below, kind == W_GATHER_RE, &f), 0); break;
    case W_WAIT_FOR: CHECK_EQ_INT(ll_wait_for(c->loop, below, INFINITY, &f), 0); break;
    default:
        c->nodes[c->n].below = below;
        CHECK_EQ_INT(ll_task_new(c->loop, await_step, &c->nodes[c->n], &f), 0);
        break;
    }
    c->lv[c->n++] = f;
}

/* asyncio's answer: does the outermost future end in a cancellation when
 * level k (0 = the leaf) is cancelled? */
static int want_cancelled(const enum wrap *wraps, int depth, int k) {
    int cancelled = k == 0;
    for (int i = 0; i < depth; i++) {
        if (i + 1 == k)
            cancelled = 1;
        else if (wraps[i] == W_GATHER_RE)
            cancelled = 0; /* the child's cancellation is a result */
    }
    return cancelled;
}

static void describe(enum leaf leaf, const enum wrap *wraps, int depth, int k) {
    fprintf(stderr, "  case: %s", leaf_names[leaf]);
    for (int i = 0; i < depth; i++)
        fprintf(stderr, " in %s", wrap_names[wraps[i]]);
    fprintf(stderr, ", cancelled at level %d\n", k);
}

static void run_case(enum leaf leaf, const enum wrap *wraps, int depth, int k) {
    int failed_before = check_failed;
    struct chain *c = calloc(1, sizeof *c);
    int reports = 0;
    CHECK_EQ_INT(ll_loop_new(&c->loop), 0);
    CHECK_EQ_INT(ll_loop_set_exception_handler(c->loop, count_reports, &reports), 0);
    add_leaf(c, leaf);
    for (int i = 0; i < depth; i++)
        add_wrap(c, wraps[i]);
    for (int i = 0; i < 3; i++) /* every task reaches its await */
        CHECK_EQ_INT(ll_loop_run_once(c->loop, LL_RUN_NOWAIT), 0);
    if (k == 0 && leaf == L_EXECUTOR)
        release_job(c, LL_ECANCELLED);
    else
        CHECK_EQ_INT(ll_future_cancel(c->lv[k], "by test"), 1);

    ll_future top = c->lv[c->n - 1];
    ll_handle guard;
    CHECK_EQ_INT(ll_call_later(c->loop, 2.0, stop_cb, NULL, &guard), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(c->loop, top), 0);
    ll_handle_cancel(guard);
    ll_release(guard);
    int rc = ll_future_result(top, NULL);
    if (want_cancelled(wraps, depth, k)) {
        CHECK_EQ_INT(rc, LL_ECANCELLED);
        /* asyncio: a gather fails with CancelledError, a task is cancelled. */
        if (wraps[depth - 1] == W_GATHER || wraps[depth - 1] == W_GATHER_RE)
            CHECK_EQ_INT(ll_future_state(top), LL_FINISHED);
        if (wraps[depth - 1] == W_TASK)
            CHECK_EQ_INT(ll_future_state(top), LL_CANCELLED);
    } else {
        CHECK_EQ_INT(rc, 0);
    }
    /* Let the levels below settle (cancelling a wrapper cancels what it
     * wraps, which finishes in later iterations), as a program goes on. */
    for (int i = 0; i < 2 * MAX_DEPTH; i++)
        CHECK_EQ_INT(ll_loop_run_once(c->loop, LL_RUN_NOWAIT), 0);
    for (int i = 0; i < c->n; i++) {
        CHECK_EQ_INT(ll_future_done(c->lv[i]), 1);
        ll_release(c->lv[i]);
    }
    CHECK_EQ_INT(ll_loop_close(c->loop), 0);
    ll_release(c->loop);
    CHECK_EQ_INT(reports, 0);
    if (check_failed != failed_before)
        describe(leaf, wraps, depth, k);
    if (leaf == L_EXECUTOR) { /* the job reads c: let it end first */
        release_job(c, 0);
        while (!__atomic_load_n(&c->job_exited, __ATOMIC_SEQ_CST))
            usleep(500);
    }
    free(c);
}

static void test_every_composition(void) {
    enum wrap wraps[MAX_DEPTH];
    int cases = 0;
    for (int depth = 1; depth <= MAX_DEPTH; depth++) {
        int total = 1;
        for (int i = 0; i < depth; i++)
            total *= NWRAP;
        for (int code = 0; code < total; code++) {
            for (int i = 0, c = code; i < depth; i++, c /= NWRAP)
                wraps[i] = (enum wrap)(c % NWRAP);
            for (int leaf = 0; leaf < NLEAF; leaf++)
                for (int k = 0; k <= depth; k++, cases++)
                    run_case((enum leaf)leaf, wraps, depth, k);
        }
    }
    CHECK_EQ_INT(cases, NLEAF * (4 * 2 + 16 * 3 + 64 * 4));
}

/* ll_wait_for's timeout cancels a gather, which then fails with
 * LL_ECANCELLED rather than ending cancelled: still a timeout (asyncio
 * turns the CancelledError into TimeoutError), and it must complete. */
static void test_wait_for_timeout_over_gather(void) {
    ll_loop loop;
    ll_future s, g, gg, w;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_sleep(loop, 60.0, &s), 0);
    CHECK_EQ_INT(ll_gather(loop, 1, &s, 0, &g), 0);
    CHECK_EQ_INT(ll_gather(loop, 1, &g, 0, &gg), 0);
    CHECK_EQ_INT(ll_wait_for(loop, gg, 0.01, &w), 0);
    ll_handle guard;
    CHECK_EQ_INT(ll_call_later(loop, 2.0, stop_cb, NULL, &guard), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(loop, w), 0);
    CHECK_EQ_INT(ll_future_result(w, NULL), LL_ETIMEDOUT);
    CHECK_EQ_INT(ll_future_state(s), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_result(gg, NULL), LL_ECANCELLED);
    ll_release(guard);
    ll_release(s);
    ll_release(g);
    ll_release(gg);
    ll_release(w);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_every_composition);
    RUN_TEST(test_wait_for_timeout_over_gather);
    return CHECK_REPORT();
}
