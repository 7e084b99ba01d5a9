/* SPDX-License-Identifier: MIT */
/* Timers with a handle made from C (ll_call_later/ll_call_at with out):
 * their records live in C (capi/cloop/timerslab.c) and their ids are of a kind
 * of their own. Checked here: order with handle-less timers and Go-made
 * handles at equal deadlines, cancel from a callback and of itself,
 * release before and after the run, stale and forged ids, ids of the wrong
 * kind both ways, close and release of the loop with live handles, the
 * purge of cancelled timers, and slot reuse. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "libloop.h"
#include "libloop/stats.h"
#include "check.h"

static int order[64];
static int norder;

static void log_cb(ll_loop loop, void *arg) {
    (void)loop;
    if (norder < 64)
        order[norder++] = (int)(intptr_t)arg;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

/* Runs the loop until a timer after everything scheduled so far stops it. */
static void run_all(ll_loop loop, double after) {
    CHECK_EQ_INT(ll_call_later(loop, after, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
}

/* Equal deadlines run in scheduling order whether the timer has a handle
 * (a record in C) or none (a value in Go's queue). */
static void test_equal_deadlines_keep_order(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    norder = 0;
    double when = ll_loop_time(loop) + 0.01;
    ll_handle hs[12];
    for (int i = 0; i < 12; i++)
        CHECK_EQ_INT(ll_call_at(loop, when, log_cb, (void *)(intptr_t)i, i % 3 == 1 ? NULL : &hs[i]), 0);
    run_all(loop, 0.02);
    CHECK_EQ_INT(norder, 12);
    for (int i = 0; i < norder; i++)
        CHECK_EQ_INT(order[i], i);
    for (int i = 0; i < 12; i++)
        if (i % 3 != 1)
            CHECK_EQ_INT(ll_release(hs[i]), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

struct canceller {
    ll_handle victim;
    int rc;
};

static void cancel_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct canceller *c = arg;
    c->rc = ll_handle_cancel(c->victim);
}

static ll_handle self_handle;
static int self_rc = -1, self_cancelled = -1;

static void cancel_self_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    self_rc = ll_handle_cancel(self_handle);
    self_cancelled = ll_handle_cancelled(self_handle);
}

/* A timer cancelled by an earlier callback of the same iteration does not
 * run; a timer cancelling itself while it runs changes nothing else. */
static void test_cancel_from_callback(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    norder = 0;
    double when = ll_loop_time(loop) + 0.005;
    struct canceller c = {0, -1};
    ll_handle first, victim;
    CHECK_EQ_INT(ll_call_at(loop, when, cancel_cb, &c, &first), 0);
    CHECK_EQ_INT(ll_call_at(loop, when, log_cb, (void *)7, &victim), 0);
    CHECK_EQ_INT(ll_call_at(loop, when, cancel_self_cb, NULL, &self_handle), 0);
    c.victim = victim;
    run_all(loop, 0.01);
    CHECK_EQ_INT(c.rc, 0);
    CHECK_EQ_INT(norder, 0);
    CHECK_EQ_INT(ll_handle_cancelled(victim), 1);
    CHECK_EQ_INT(ll_handle_cancelled(first), 0);
    CHECK_EQ_INT(self_rc, 0);
    CHECK_EQ_INT(self_cancelled, 1);
    CHECK_EQ_INT(ll_release(first), 0);
    CHECK_EQ_INT(ll_release(victim), 0);
    CHECK_EQ_INT(ll_release(self_handle), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* Released before it runs, a timer still runs; its id is stale at once. */
static void test_release_before_and_after_run(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    norder = 0;
    ll_handle early, late;
    CHECK_EQ_INT(ll_call_later(loop, 0.001, log_cb, (void *)1, &early), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.002, log_cb, (void *)2, &late), 0);
    double when = ll_timer_when(late);
    CHECK(when >= ll_loop_time(loop) && when < ll_loop_time(loop) + 0.01);
    CHECK_EQ_INT(ll_release(early), 0);
    CHECK_EQ_INT(ll_release(early), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_handle_cancel(early), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_handle_cancelled(early), LL_EBADHANDLE);
    CHECK(ll_timer_when(early) < 0);
    run_all(loop, 0.005);
    CHECK_EQ_INT(norder, 2);
    CHECK_EQ_INT(ll_handle_cancel(late), 0); /* after it ran: does nothing */
    CHECK(ll_timer_when(late) == when);
    CHECK_EQ_INT(ll_release(late), 0);
    CHECK_EQ_INT(ll_release(late), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static void future_step(ll_task task, void *arg) {
    (void)task;
    (void)arg;
}

static ll_handle rel_own, rel_other;
static int rel_rc[4];

static void release_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    rel_rc[0] = ll_release(rel_own);
    rel_rc[1] = ll_release(rel_own);
    rel_rc[2] = ll_release(rel_other); /* not yet run: it still runs */
    rel_rc[3] = ll_handle_cancelled(rel_other);
}

/* Released from a callback of its loop (the C path), a handle releases
 * once; a timer released before it runs still runs. */
static void test_release_from_callback(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    norder = 0;
    CHECK_EQ_INT(ll_call_later(loop, 0.001, release_cb, NULL, &rel_own), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.003, log_cb, (void *)4, &rel_other), 0);
    run_all(loop, 0.006);
    CHECK_EQ_INT(rel_rc[0], 0);
    CHECK_EQ_INT(rel_rc[1], LL_EBADHANDLE);
    CHECK_EQ_INT(rel_rc[2], 0);
    CHECK_EQ_INT(rel_rc[3], LL_EBADHANDLE);
    CHECK_EQ_INT(norder, 1);
    CHECK_EQ_INT(ll_release(rel_own), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(rel_other), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A timer handle is refused where another kind is wanted, and other kinds
 * (and forged ids with bit 63 set) are refused by the handle calls. */
static void test_wrong_kinds_and_forged(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    ll_handle t, soon;
    ll_future f;
    CHECK_EQ_INT(ll_call_later(loop, 3600, log_cb, NULL, &t), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, NULL, &soon), 0);
    CHECK_EQ_INT(ll_future_new(loop, &f), 0);
    CHECK_EQ_INT(ll_future_done(t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_future_cancel(t, NULL), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_is_running(t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_call_soon(t, log_cb, NULL, NULL), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_call_later(t, 0, log_cb, NULL, NULL), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_call_soon_threadsafe(t, log_cb, NULL), LL_EBADHANDLE);
    CHECK(ll_loop_time(t) < 0);
    ll_task task;
    CHECK_EQ_INT(ll_task_new(t, future_step, NULL, &task), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_handle_cancel(f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_handle_cancelled(loop), LL_EBADHANDLE);
    CHECK(ll_timer_when(f) < 0);
    CHECK(ll_timer_when(soon) < 0); /* a handle, not a timer */
    CHECK_EQ_INT(ll_handle_cancel(soon), 0);
    CHECK_EQ_INT(ll_handle_cancelled(soon), 1);
    uint64_t forged[] = {(uint64_t)1 << 63, ((uint64_t)1 << 63) | 0xFFFFFF, t ^ ((uint64_t)1 << 30),
                         t + 1, t - 1, ~(uint64_t)0, ((uint64_t)1 << 63) | ((uint64_t)12345 << 24) | 1};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        CHECK_EQ_INT(ll_handle_cancel(forged[i]), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_handle_cancelled(forged[i]), LL_EBADHANDLE);
        CHECK(ll_timer_when(forged[i]) < 0);
        CHECK_EQ_INT(ll_release(forged[i]), LL_EBADHANDLE);
    }
    CHECK_EQ_INT(ll_handle_cancelled(t), 0);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(ll_release(soon), 0);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* Handles outlive their loop's close and release: each still answers and
 * releases exactly once, and a closed loop takes no new timer. */
static void test_handles_after_close_and_release(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    ll_handle hs[3000];
    for (int i = 0; i < 3000; i++)
        CHECK_EQ_INT(ll_call_later(loop, 1 + i * 1e-3, log_cb, NULL, &hs[i]), 0);
    CHECK_EQ_INT(ll_handle_cancel(hs[0]), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_handle h;
    CHECK_EQ_INT(ll_call_later(loop, 1, log_cb, NULL, &h), LL_ECLOSED);
    CHECK_EQ_INT(ll_handle_cancelled(hs[0]), 1);
    CHECK_EQ_INT(ll_handle_cancelled(hs[1]), 0);
    CHECK(ll_timer_when(hs[1]) > 0);
    CHECK_EQ_INT(ll_release(hs[1]), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
    /* The loop is gone; its handles are not. */
    CHECK_EQ_INT(ll_handle_cancel(hs[2]), 0);
    CHECK_EQ_INT(ll_handle_cancelled(hs[2]), 1);
    CHECK_EQ_INT(ll_release(hs[1]), LL_EBADHANDLE);
    int bad = 0;
    for (int i = 0; i < 3000; i++)
        if (i != 1 && ll_release(hs[i]) != 0)
            bad++;
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(ll_release(hs[2]), LL_EBADHANDLE);
    /* A new loop reuses the records; the old ids stay stale. */
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    for (int i = 0; i < 100; i++) {
        CHECK_EQ_INT(ll_call_later(loop, 3600, log_cb, NULL, &h), 0);
        CHECK_EQ_INT(ll_release(h), 0);
    }
    CHECK_EQ_INT(ll_handle_cancelled(hs[5]), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* Over half of many timers cancelled: they are dropped within an iteration
 * (the stats count only live ones), and released ids free their records. */
static void test_purge_of_cancelled(void) {
    enum { N = 20000 };
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    ll_handle *hs = calloc(N, sizeof *hs);
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(ll_call_later(loop, 3600 + i, log_cb, NULL, &hs[i]), 0);
    for (int i = 0; i < N; i++)
        if (i % 4 != 0)
            CHECK_EQ_INT(ll_handle_cancel(hs[i]), 0);
    struct ll_loop_stats st = {.size = sizeof st};
    CHECK_EQ_INT(ll_loop_stats(loop, &st), 0);
    CHECK_EQ_INT(st.timers, N / 4);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_loop_stats(loop, &st), 0);
    CHECK_EQ_INT(st.timers, N / 4);
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(ll_release(hs[i]), 0);
    free(hs);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* Made and released over and over, no id is issued twice and an old one
 * stays stale (the slab reuses a slot only after thousands of others). */
static void test_ids_never_reissued(void) {
    enum { CYCLES = 100000 };
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    ll_handle first = 0, prev = 0;
    int stale_live = 0, dup = 0;
    for (int i = 0; i < CYCLES; i++) {
        ll_handle h;
        CHECK_EQ_INT(ll_call_later(loop, 3600, log_cb, NULL, &h), 0);
        if (i == 0)
            first = h;
        if (i > 0 && (h == prev || h == first))
            dup++;
        CHECK_EQ_INT(ll_handle_cancel(h), 0);
        CHECK_EQ_INT(ll_release(h), 0);
        if (ll_handle_cancelled(first) != LL_EBADHANDLE || ll_release(prev) != LL_EBADHANDLE)
            stale_live++;
        prev = h;
        if (i % 1000 == 999)
            ll_loop_run_once(loop, LL_RUN_NOWAIT);
    }
    CHECK_EQ_INT(stale_live, 0);
    CHECK_EQ_INT(dup, 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

enum { SHUF = 3000 };
static int shuf_log[SHUF];
static int shuf_n;

static void shuf_cb(ll_loop loop, void *arg) {
    (void)loop;
    if (shuf_n < SHUF)
        shuf_log[shuf_n++] = (int)(intptr_t)arg;
}

struct shuf_timer {
    double when;
    int index, cancelled;
};

static int by_when_then_index(const void *a, const void *b) {
    const struct shuf_timer *x = a, *y = b;
    if (x->when != y->when)
        return x->when < y->when ? -1 : 1;
    return x->index - y->index;
}

/* Deadlines in random order with many ties (1 ms buckets), timers with and
 * without a handle mixed, a third cancelled: what runs is exactly the rest,
 * in (deadline, scheduling order). */
static void test_shuffled_deadlines(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    srand(11);
    static struct shuf_timer ts[SHUF];
    static ll_handle hs[SHUF];
    double base = ll_loop_time(loop) + 0.005;
    shuf_n = 0;
    for (int i = 0; i < SHUF; i++) {
        ts[i] = (struct shuf_timer){base + (rand() % 20) * 1e-3, i, 0};
        int with_handle = rand() % 3 != 0;
        hs[i] = 0;
        CHECK_EQ_INT(ll_call_at(loop, ts[i].when, shuf_cb, (void *)(intptr_t)i, with_handle ? &hs[i] : NULL), 0);
        if (with_handle && rand() % 3 == 0 && i > 0) { /* cancel this one or an earlier one */
            int k = rand() % 2 ? i : rand() % i;
            if (hs[k] != 0 && !ts[k].cancelled) {
                CHECK_EQ_INT(ll_handle_cancel(hs[k]), 0);
                ts[k].cancelled = 1;
            }
        }
    }
    run_all(loop, 0.05);
    qsort(ts, SHUF, sizeof ts[0], by_when_then_index);
    int k = 0, bad = 0;
    for (int i = 0; i < SHUF; i++) {
        if (ts[i].cancelled)
            continue;
        if (k >= shuf_n || shuf_log[k] != ts[i].index)
            bad++;
        k++;
    }
    CHECK_EQ_INT(shuf_n, k);
    CHECK_EQ_INT(bad, 0);
    for (int i = 0; i < SHUF; i++)
        if (hs[i] != 0)
            CHECK_EQ_INT(ll_release(hs[i]), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

int main(void) {
    RUN_TEST(test_shuffled_deadlines);
    RUN_TEST(test_equal_deadlines_keep_order);
    RUN_TEST(test_cancel_from_callback);
    RUN_TEST(test_release_before_and_after_run);
    RUN_TEST(test_release_from_callback);
    RUN_TEST(test_wrong_kinds_and_forged);
    RUN_TEST(test_handles_after_close_and_release);
    RUN_TEST(test_purge_of_cancelled);
    RUN_TEST(test_ids_never_reissued);
    return CHECK_REPORT();
}
