/* SPDX-License-Identifier: MIT */
/* ll_call_soon with no handle on a loop that is not running queues in C
 * (the loop's idle queue) without entering the library's Go side. What a
 * host relies on: the calls keep one FIFO order with everything else, a
 * closed loop refuses them, a released loop's id stays stale, a worker
 * thread may fill an idle loop before the owner runs it but not a running
 * one, and many loops at once each get their own calls. Timers with no
 * handle are queued in C the same way. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define LOG_MAX 8192
static int order[LOG_MAX];
static int norder;

static void log_cb(ll_loop loop, void *arg) {
    (void)loop;
    if (norder < LOG_MAX)
        order[norder++] = (int)(intptr_t)arg;
}

static ll_loop new_loop(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    return loop;
}

static int log_counts_up(int n) {
    if (norder != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (order[i] != i)
            return 0;
    return 1;
}

/* Handle-less calls, calls with a handle, timers due at once and a
 * thread-safe post, all made while the loop is idle: one order. */
static void test_order_with_everything_else(void) {
    ll_loop loop = new_loop();
    norder = 0;
    ll_handle h = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)0, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, &h), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0, log_cb, (void *)4, NULL), 0); /* timers after the ready queue */
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)3, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK(log_counts_up(5));
    ll_release(h);
    ll_release(loop);
}

/* Closing drops what the idle queue held (as it drops every ready
 * callback); afterwards the call is LL_ECLOSED, and after release the id
 * is stale even though the library reuses the queue's record. */
static void test_close_and_release(void) {
    ll_loop loop = new_loop();
    norder = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)0, NULL), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, NULL), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)2, NULL), LL_EBADHANDLE);
    ll_loop other = new_loop(); /* may reuse the record */
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)3, NULL), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_call_soon(other, log_cb, (void *)0, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(other, LL_RUN_NOWAIT), 0);
    CHECK(log_counts_up(1));
    ll_release(other);
}

struct fill {
    ll_loop loop;
    int from, n, rc;
};

static void *fill_thread(void *arg) {
    struct fill *f = arg;
    for (int i = 0; i < f->n && f->rc == 0; i++)
        f->rc = ll_call_soon(f->loop, log_cb, (void *)(intptr_t)(f->from + i), NULL);
    return NULL;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

/* A worker fills an idle loop, the owner runs it; while it runs, the
 * worker's call is refused (LL_EWRONGTHREAD) and nothing is queued. */
static void *refused_thread(void *arg) {
    struct fill *f = arg;
    f->rc = ll_call_soon(f->loop, log_cb, (void *)(intptr_t)9999, NULL);
    return NULL;
}

static void check_worker_refused(ll_loop loop, void *arg) {
    struct fill *f = arg;
    pthread_t t;
    pthread_create(&t, NULL, refused_thread, f);
    pthread_join(t, NULL);
    ll_loop_stop(loop);
}

static void test_worker_fills_idle_loop(void) {
    ll_loop loop = new_loop();
    norder = 0;
    struct fill f = {loop, 0, 3000, 0};
    pthread_t t;
    pthread_create(&t, NULL, fill_thread, &f);
    pthread_join(t, NULL);
    CHECK_EQ_INT(f.rc, 0);
    CHECK_EQ_INT(ll_call_soon(loop, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK(log_counts_up(3000));

    struct fill r = {loop, 0, 1, 0};
    CHECK_EQ_INT(ll_call_soon(loop, check_worker_refused, &r, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(r.rc, LL_EWRONGTHREAD);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 3000); /* 9999 never ran */
    ll_release(loop);
}

/* 100 idle loops (more than the registry's slots, so some take the Go
 * path): each runs exactly its own calls, in order. */
static void test_many_loops(void) {
    enum { NLOOPS = 100, PER = 20 };
    ll_loop loops[NLOOPS];
    for (int i = 0; i < NLOOPS; i++)
        loops[i] = new_loop();
    for (int k = 0; k < PER; k++)
        for (int i = 0; i < NLOOPS; i++)
            CHECK_EQ_INT(ll_call_soon(loops[i], log_cb, (void *)(intptr_t)(i * PER + k), NULL), 0);
    norder = 0;
    for (int i = 0; i < NLOOPS; i++)
        CHECK_EQ_INT(ll_loop_run_once(loops[i], LL_RUN_NOWAIT), 0);
    CHECK(log_counts_up(NLOOPS * PER));
    for (int i = 0; i < NLOOPS; i++)
        ll_release(loops[i]);
}

/* Long runs of handle-less calls are handed over as one batch: the order
 * with calls that have a handle, a cancelled one, and what the batch's
 * own callbacks schedule (next iteration, in the order they asked) holds. */
static ll_handle cancel_me;

static void schedule_more_cb(ll_loop loop, void *arg) {
    log_cb(loop, arg);
    int v = (int)(intptr_t)arg;
    if (v % 100 == 0) { /* a few of them schedule more, both ways */
        ll_handle h = 0;
        CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(intptr_t)(10000 + v), NULL), 0);
        CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(intptr_t)(10001 + v), &h), 0);
        CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(intptr_t)(10002 + v), NULL), 0);
        ll_release(h);
    }
}

static void test_batches_keep_order(void) {
    ll_loop loop = new_loop();
    norder = 0;
    int want[LOG_MAX], nwant = 0;
    for (int i = 0; i < 1000; i++) {
        if (i == 300 || i == 650) {
            ll_handle h = 0;
            CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(intptr_t)(5000 + i), &h), 0);
            ll_release(h);
            want[nwant++] = 5000 + i;
        }
        if (i == 400)
            CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(intptr_t)7777, &cancel_me), 0);
        CHECK_EQ_INT(ll_call_soon(loop, schedule_more_cb, (void *)(intptr_t)i, NULL), 0);
        want[nwant++] = i;
    }
    CHECK_EQ_INT(ll_handle_cancel(cancel_me), 0);
    for (int i = 0; i < 1000; i += 100) {
        want[nwant++] = 10000 + i;
        want[nwant++] = 10001 + i;
        want[nwant++] = 10002 + i;
    }
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 1002); /* the first iteration: only what was ready */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, nwant);
    int same = norder == nwant;
    for (int i = 0; same && i < nwant; i++)
        same = order[i] == want[i];
    CHECK(same && "batches keep one FIFO order");
    ll_release(cancel_me);

    /* A closed loop drops a queued batch unrun. */
    norder = 0;
    for (int i = 0; i < 500; i++)
        CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)(intptr_t)i, NULL), 0);
    ll_handle h = 0;
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, &h), 0); /* moves the 500 into the loop */
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(norder, 0);
    ll_release(h);
    ll_release(loop);
}

/* Timers with no handle queue in C too (moved into the loop every 4,096):
 * never early against the loop clock, equal deadlines in scheduling order
 * with timers that have a handle, across the moves, and refused or dropped
 * with the loop closed. */
#define NTIMERS 5000
static double sched_at[NTIMERS], delay_of[NTIMERS], ran_at[NTIMERS];
static int early;

static void timed_cb(ll_loop loop, void *arg) {
    int i = (int)(intptr_t)arg;
    ran_at[i] = ll_loop_time(loop);
    if (ran_at[i] < sched_at[i] + delay_of[i])
        early++;
    log_cb(loop, arg);
}

static void later_from_callback_cb(ll_loop loop, void *arg) {
    (void)arg;
    CHECK_EQ_INT(ll_call_later(loop, 0.001, log_cb, (void *)(intptr_t)1, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.0, log_cb, (void *)(intptr_t)0, NULL), 0);
}

static void test_timers_queued_in_c(void) {
    ll_loop loop = new_loop();
    norder = 0;
    early = 0;
    for (int i = 0; i < NTIMERS; i++) {
        delay_of[i] = (NTIMERS - i) * 2e-6; /* scheduled latest-first */
        sched_at[i] = ll_loop_time(loop);
        CHECK_EQ_INT(ll_call_later(loop, delay_of[i], timed_cb, (void *)(intptr_t)i, NULL), 0);
    }
    CHECK_EQ_INT(ll_call_later(loop, 0.05, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(norder, NTIMERS);
    CHECK_EQ_INT(early, 0);

    /* Equal deadlines, with and without handles, past a move: in order. */
    norder = 0;
    double when = ll_loop_time(loop) + 0.01;
    ll_handle hs[NTIMERS / 100];
    int nh = 0;
    for (int i = 0; i < NTIMERS; i++) {
        ll_handle *out = i % 100 == 7 ? &hs[nh++] : NULL;
        CHECK_EQ_INT(ll_call_at(loop, when, log_cb, (void *)(intptr_t)i, out), 0);
    }
    CHECK_EQ_INT(ll_call_at(loop, when + 0.01, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK(log_counts_up(NTIMERS));
    for (int i = 0; i < nh; i++)
        ll_release(hs[i]);

    /* From a callback: queued in C in its batch, run in deadline order. */
    norder = 0;
    CHECK_EQ_INT(ll_call_soon(loop, later_from_callback_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.02, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK(log_counts_up(2));

    /* Closed: queued ones are dropped, later ones refused. */
    norder = 0;
    CHECK_EQ_INT(ll_call_later(loop, 0, log_cb, (void *)0, NULL), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0, log_cb, (void *)0, NULL), LL_ECLOSED);
    CHECK_EQ_INT(ll_call_at(loop, 0, log_cb, (void *)0, NULL), LL_ECLOSED);
    CHECK_EQ_INT(norder, 0);
    ll_release(loop);
}

int main(void) {
    alarm(60);
    RUN_TEST(test_order_with_everything_else);
    RUN_TEST(test_close_and_release);
    RUN_TEST(test_worker_fills_idle_loop);
    RUN_TEST(test_many_loops);
    RUN_TEST(test_batches_keep_order);
    RUN_TEST(test_timers_queued_in_c);
    return CHECK_REPORT();
}
