/* SPDX-License-Identifier: MIT */
/*
 * tasks.c — tasks in libloop: coroutines written as step functions.
 *
 * In Python's asyncio a coroutine is a function that can stop at `await`
 * and carry on later. C has no such functions, so a libloop task is a
 * *step function* plus a struct that remembers where it got to:
 *
 *     struct my_task { int state; ... };
 *
 *     static void my_step(ll_task task, void *arg) {
 *         struct my_task *t = arg;
 *         switch (t->state++) {
 *         case 0:  ...start something...;  ll_task_await(task, fut);  return;
 *         case 1:  ...use fut's result...; ll_task_return(task, 42, NULL); return;
 *         }
 *     }
 *
 * The loop calls the step; the step does some work and ends by calling
 * exactly one of
 *     ll_task_await(task, fut)   wake me when fut is done (asyncio's `await fut`)
 *     ll_task_sleep(task, secs)  wake me after secs      (`await asyncio.sleep(secs)`)
 *     ll_task_yield(task)        wake me next iteration  (`await asyncio.sleep(0)`)
 *     ll_task_return(task, v, free)    finish with a value (`return v`)
 *     ll_task_raise(task, code, ...)   fail with an error code (`raise ...`)
 * Each `case` of the switch is the code between two awaits.
 *
 * This program runs, in about 0.1 s:
 *   1. three worker tasks that sleep for different times, gathered with
 *      ll_gather (asyncio.gather): they run concurrently on one thread;
 *   2. ll_wait_for (asyncio.wait_for) on a slow task: the timeout cancels
 *      it, and the task sees the cancellation in its next step;
 *   3. ll_run_in_executor: a sum of squares computed on a worker thread
 *      while the loop stays free, awaited like any other future.
 * ll_run (asyncio.run) creates the loop, runs the main task to the end and
 * cleans up.
 *
 * Build:  cc tasks.c -Iinclude -Lbuild -lloop -lpthread
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "libloop.h"

/* Abort with a readable message if a libloop call failed. */
static void must(int rc, const char *what) {
    if (rc < 0) {
        fprintf(stderr, "tasks: %s failed: %s (%s)\n", what, ll_err_name(rc), ll_strerror(rc));
        exit(1);
    }
}

static ll_loop LOOP; /* set by the main task's first step */
static double T0;

/* Prints one line stamped with the loop's clock (seconds since start). */
static void say(const char *who, const char *what, long long n) {
    printf("[%6.3f s] %-8s ", ll_loop_time(LOOP) - T0, who);
    /* cppcheck-suppress wrongPrintfScanfArgNum ; texts without %lld pass 0, which printf ignores (C11 7.21.6.1p2) */
    printf(what, n);
    putchar('\n');
}

/* ---- a worker task: sleep, then return a value ------------------------------ */

struct worker {
    const char *name;
    double seconds; /* how long it sleeps */
    int state;      /* where the "coroutine" got to: 0 = not started */
};

static void worker_step(ll_task task, void *arg) {
    struct worker *w = arg;
    /* A cancelled task is stepped once more so it can clean up; here it
     * just lets the cancellation through (as an `except` would re-raise). */
    if (ll_task_must_raise_cancel(task)) {
        say(w->name, "cancelled while sleeping: giving up", 0);
        must(ll_task_raise(task, LL_ECANCELLED, NULL, 0, NULL), "ll_task_raise");
        return;
    }
    switch (w->state++) {
    case 0:
        say(w->name, "sleeping %lld ms", (long long)(w->seconds * 1000));
        must(ll_task_sleep(task, w->seconds), "ll_task_sleep"); /* await asyncio.sleep(...) */
        return;
    case 1:
        say(w->name, "awake, returning %lld", (long long)(w->seconds * 1000));
        must(ll_task_return(task, (uintptr_t)(w->seconds * 1000), NULL), "ll_task_return");
        return;
    }
}

/* ---- work for the executor: it runs on another thread ----------------------- */

struct squares {
    uint64_t n;   /* in: sum 1^2 + 2^2 + ... + n^2 */
    uint64_t sum; /* out, written by the worker thread */
};

/* An ll_work_fn. Its return value would become the future's result; here
 * the answer goes into our struct instead. Setting *err fails the future. */
static uintptr_t sum_of_squares(void *arg, int *err) {
    struct squares *sq = arg;
    if (sq->n == 0) {
        *err = LL_EINVAL;
        return 0;
    }
    uint64_t sum = 0;
    for (uint64_t i = 1; i <= sq->n; i++)
        sum += i * i;
    sq->sum = sum; /* read by the loop thread only after the future is done */
    return 0;
}

/* ---- the main task ------------------------------------------------------------ */

struct app {
    int state;
    struct worker workers[3];
    ll_task worker_tasks[3];
    ll_future gathered;
    struct worker slow;
    ll_task slow_task;
    ll_future waited;
    struct squares squares;
    ll_future job;
};

static void main_step(ll_task self, void *arg) {
    struct app *a = arg;
    switch (a->state++) {
    case 0: /* first step: start three workers and await all of them */
        must(ll_future_get_loop(self, &LOOP), "ll_future_get_loop");
        T0 = ll_loop_time(LOOP);
        say("main", "starting three workers, then gathering them", 0);
        for (int i = 0; i < 3; i++)
            must(ll_task_new(LOOP, worker_step, &a->workers[i], &a->worker_tasks[i]), "ll_task_new");
        /* Nothing has run yet: the first steps are scheduled (call_soon). */
        must(ll_gather(LOOP, 3, a->worker_tasks, 0, &a->gathered), "ll_gather");
        must(ll_task_await(self, a->gathered), "ll_task_await");
        return;

    case 1: { /* the gather is done; each worker holds its own result */
        uintptr_t n = 0;
        must(ll_future_result(a->gathered, &n), "gather");
        say("main", "gather finished with all %lld workers:", (long long)n);
        for (int i = 0; i < 3; i++) {
            uintptr_t v = 0;
            must(ll_future_result(a->worker_tasks[i], &v), "worker result");
            printf("           %-8s %s returned %lu\n", "", a->workers[i].name, (unsigned long)v);
            must(ll_release(a->worker_tasks[i]), "ll_release"); /* we are done with it */
        }
        must(ll_release(a->gathered), "ll_release");

        say("main", "waiting at most 50 ms for \"slow\", which needs %lld ms",
            (long long)(a->slow.seconds * 1000));
        must(ll_task_new(LOOP, worker_step, &a->slow, &a->slow_task), "ll_task_new");
        must(ll_wait_for(LOOP, a->slow_task, 0.050, &a->waited), "ll_wait_for");
        must(ll_task_await(self, a->waited), "ll_task_await");
        return;
    }

    case 2: { /* wait_for is done: it timed out and cancelled the slow task */
        int rc = ll_future_result(a->waited, NULL);
        say("main", rc == LL_ETIMEDOUT ? "wait_for gave up: LL_ETIMEDOUT" : "wait_for: %lld", rc);
        if (ll_future_state(a->slow_task) == LL_CANCELLED)
            say("main", "and \"slow\" was cancelled", 0);
        must(ll_release(a->waited), "ll_release");
        must(ll_release(a->slow_task), "ll_release");

        a->squares.n = 1000000;
        say("main", "summing the squares of 1..%lld on an executor thread", (long long)a->squares.n);
        must(ll_run_in_executor(LOOP, sum_of_squares, &a->squares, &a->job), "ll_run_in_executor");
        must(ll_task_await(self, a->job), "ll_task_await");
        return;
    }

    case 3: { /* the job is done */
        must(ll_future_result(a->job, NULL), "the executor job");
        must(ll_release(a->job), "ll_release");
        uint64_t n = a->squares.n, expect = n * (n + 1) * (2 * n + 1) / 6;
        say("main", "the worker thread computed %lld", (long long)a->squares.sum);
        if (a->squares.sum != expect) {
            fprintf(stderr, "tasks: wrong sum, expected %" PRIu64 "\n", expect);
            must(ll_task_raise(self, LL_EINVAL, "wrong sum", 0, NULL), "ll_task_raise");
            return;
        }
        say("main", "all done", 0);
        must(ll_task_return(self, 0, NULL), "ll_task_return");
        return;
    }
    }
}

int main(void) {
    struct app a = {
        .workers = {{.name = "A", .seconds = 0.030}, {.name = "B", .seconds = 0.010},
                    {.name = "C", .seconds = 0.020}},
        .slow = {.name = "slow", .seconds = 0.500},
    };
    uintptr_t result = 1;
    /* asyncio.run(main()): a new loop, run the main task to completion,
     * cancel what is left, shut the executor down, close the loop. */
    int rc = ll_run(main_step, &a, &result);
    if (rc < 0) {
        fprintf(stderr, "tasks: the main task failed: %s (%s)\n", ll_err_name(rc), ll_strerror(rc));
        return 1;
    }
    printf("ll_run returned 0; the main task's result is %lu\n", (unsigned long)result);
    return 0;
}
