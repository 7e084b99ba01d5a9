/* SPDX-License-Identifier: MIT */
/* The helpers C hosts need most: ll_sleep, ll_gather (with and without
 * return_exceptions) and ll_wait_for, with their bad-input table (which
 * covers ll_loop_run_until_complete too; its behaviour and ll_run's are in
 * test_run.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

static ll_loop good;

static void count_done(ll_future f, void *arg) {
    (void)f;
    *(int *)arg += 1;
}

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

/* ---- sleep ----------------------------------------------------------------- */

static void test_sleep(void) {
    ll_future s;
    uintptr_t v = 1;
    double t0 = ll_loop_time(good);
    CHECK_EQ_INT(ll_sleep(good, 0.02, &s), 0);
    CHECK_EQ_INT(ll_future_state(s), LL_PENDING);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, s), 0);
    CHECK(ll_loop_time(good) - t0 >= 0.02 - 1e-6);
    CHECK_EQ_INT(ll_future_result(s, &v), 0);
    CHECK_EQ_INT(v, 0);
    ll_release(s);

    /* Zero and negative delays are due in the next iteration. */
    CHECK_EQ_INT(ll_sleep(good, -1.0, &s), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_future_state(s), LL_FINISHED);
    ll_release(s);

    /* Cancelling a sleep cancels its timer: the loop does not wait for it. */
    CHECK_EQ_INT(ll_sleep(good, 30.0, &s), 0);
    CHECK_EQ_INT(ll_future_cancel(s, NULL), 1);
    t0 = ll_loop_time(good);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, s), 0);
    CHECK_EQ_INT(ll_future_state(s), LL_CANCELLED);
    CHECK_EQ_INT(ll_call_later(good, 0.01, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(good), 0);
    CHECK(ll_loop_time(good) - t0 < 5.0);
    ll_release(s);
}

/* ---- gather -------------------------------------------------------------------- */

static void test_gather_results(void) {
    ll_future f[3], g;
    uintptr_t v = 0;
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_future_new(good, &f[i]), 0);
    CHECK_EQ_INT(ll_gather(good, 3, f, 0, &g), 0);
    CHECK_EQ_INT(ll_future_set_result(f[1], 11, NULL), 0);
    CHECK_EQ_INT(ll_future_set_result(f[0], 10, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_future_state(g), LL_PENDING); /* one child left */
    CHECK_EQ_INT(ll_future_set_result(f[2], 12, NULL), 0);
    CHECK_EQ_INT(ll_future_state(g), LL_PENDING); /* via call_soon, not at once */
    CHECK_EQ_INT(ll_loop_run_until_complete(good, g), 0);
    CHECK_EQ_INT(ll_future_result(g, &v), 0);
    CHECK_EQ_INT(v, 3); /* the value is n; each child holds its own result */
    CHECK_EQ_INT(ll_future_result(f[2], &v), 0);
    CHECK_EQ_INT(v, 12);
    ll_release(g);
    for (int i = 0; i < 3; i++)
        ll_release(f[i]);

    /* No children: finished at once with 0. */
    CHECK_EQ_INT(ll_gather(good, 0, NULL, 0, &g), 0);
    CHECK_EQ_INT(ll_future_result(g, &v), 0);
    CHECK_EQ_INT(v, 0);
    ll_release(g);
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

static void test_gather_failures(void) {
    ll_future f[3], g;
    int code = 0;
    const char *msg = NULL;
    struct reports r = {0};
    CHECK_EQ_INT(ll_loop_set_exception_handler(good, report_handler, &r), 0);

    /* Without return_exceptions: fails with the first child to fail (in
     * time, not in position), at once, before the others are done. */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_future_new(good, &f[i]), 0);
    CHECK_EQ_INT(ll_gather(good, 3, f, 0, &g), 0);
    CHECK_EQ_INT(ll_future_set_exception(f[2], -7, "third broke", 0, NULL), 0);
    CHECK_EQ_INT(ll_future_set_exception(f[0], -5, "first broke", 0, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, g), 0);
    CHECK_EQ_INT(ll_future_state(f[1]), LL_PENDING);
    CHECK_EQ_INT(ll_future_result(g, NULL), -7);
    CHECK_EQ_INT(ll_future_exception(g, &code, &msg, NULL), 0);
    CHECK_EQ_INT(code, -7);
    CHECK_EQ_INT(strcmp(msg ? msg : "", "third broke"), 0);
    /* Children whose failure the gather consumed are not reported. */
    CHECK_EQ_INT(ll_future_set_result(f[1], 1, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    ll_release(g);
    for (int i = 0; i < 3; i++)
        ll_release(f[i]);
    CHECK_EQ_INT(r.n, 0);

    /* A cancelled child fails it with LL_ECANCELLED. */
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(ll_future_new(good, &f[i]), 0);
    CHECK_EQ_INT(ll_gather(good, 2, f, 0, &g), 0);
    CHECK_EQ_INT(ll_future_cancel(f[1], NULL), 1);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, g), 0);
    CHECK_EQ_INT(ll_future_result(g, NULL), LL_ECANCELLED);
    CHECK_EQ_INT(ll_future_state(f[0]), LL_PENDING); /* the sibling is left alone */
    ll_release(g);
    ll_release(f[0]);
    ll_release(f[1]);

    /* With return_exceptions: waits for all and finishes with n; each
     * child keeps its outcome. */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_future_new(good, &f[i]), 0);
    CHECK_EQ_INT(ll_gather(good, 3, f, 1, &g), 0);
    CHECK_EQ_INT(ll_future_set_exception(f[0], -5, "first broke", 0, NULL), 0);
    CHECK_EQ_INT(ll_future_cancel(f[1], NULL), 1);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_future_state(g), LL_PENDING);
    CHECK_EQ_INT(ll_future_set_result(f[2], 9, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, g), 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(g, &v), 0);
    CHECK_EQ_INT(v, 3);
    CHECK_EQ_INT(ll_future_result(f[0], NULL), -5);
    CHECK_EQ_INT(ll_future_result(f[1], NULL), LL_ECANCELLED);
    ll_release(g);
    for (int i = 0; i < 3; i++)
        ll_release(f[i]);
    CHECK_EQ_INT(r.n, 0);
    ll_loop_set_exception_handler(good, NULL, NULL);
}

static void test_gather_cancel(void) {
    for (int rexc = 0; rexc < 2; rexc++) {
        ll_future f[3], g;
        CHECK_EQ_INT(ll_future_new(good, &f[0]), 0);
        CHECK_EQ_INT(ll_sleep(good, 30.0, &f[1]), 0);
        CHECK_EQ_INT(ll_future_new(good, &f[2]), 0);
        CHECK_EQ_INT(ll_future_set_result(f[2], 1, NULL), 0); /* done already */
        CHECK_EQ_INT(ll_gather(good, 3, f, rexc, &g), 0);
        /* Cancelling the gather cancels every child still pending. */
        CHECK_EQ_INT(ll_future_cancel(g, "enough"), 1);
        CHECK_EQ_INT(ll_future_state(f[0]), LL_CANCELLED);
        CHECK_EQ_INT(ll_future_state(f[1]), LL_CANCELLED);
        CHECK_EQ_INT(ll_future_state(f[2]), LL_FINISHED);
        double t0 = ll_loop_time(good);
        CHECK_EQ_INT(ll_loop_run_until_complete(good, g), 0);
        CHECK(ll_loop_time(good) - t0 < 5.0);
        CHECK_EQ_INT(ll_future_done(g), 1);
        CHECK_EQ_INT(ll_future_result(g, NULL), LL_ECANCELLED);
        CHECK_EQ_INT(ll_future_cancel(g, NULL), 0);
        ll_release(g);
        for (int i = 0; i < 3; i++)
            ll_release(f[i]);
    }
}

/* ---- wait_for ------------------------------------------------------------------- */

static void test_wait_for(void) {
    ll_future inner, w;
    uintptr_t v = 0;
    /* Times out: the inner future is cancelled, the outer fails with
     * LL_ETIMEDOUT, after (not before) the timeout. */
    CHECK_EQ_INT(ll_future_new(good, &inner), 0);
    double t0 = ll_loop_time(good);
    CHECK_EQ_INT(ll_wait_for(good, inner, 0.02, &w), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, w), 0);
    CHECK(ll_loop_time(good) - t0 >= 0.02 - 1e-6);
    CHECK_EQ_INT(ll_future_result(w, NULL), LL_ETIMEDOUT);
    CHECK_EQ_INT(ll_future_state(inner), LL_CANCELLED);
    ll_release(w);
    ll_release(inner);

    /* Succeeds: takes the inner result; the value stays owned by inner. */
    nfree = 0;
    CHECK_EQ_INT(ll_future_new(good, &inner), 0);
    CHECK_EQ_INT(ll_wait_for(good, inner, 5.0, &w), 0);
    CHECK_EQ_INT(ll_call_later(good, 0.005, finish77_cb, (void *)(uintptr_t)inner, NULL), 0);
    t0 = ll_loop_time(good);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, w), 0);
    CHECK(ll_loop_time(good) - t0 < 2.0);
    CHECK_EQ_INT(ll_future_result(w, &v), 0);
    CHECK_EQ_INT(v, 77);
    ll_release(w);
    CHECK_EQ_INT(nfree, 0);
    ll_release(inner);
    CHECK_EQ_INT(nfree, 1);

    /* A failing inner future passes its code through. */
    CHECK_EQ_INT(ll_future_new(good, &inner), 0);
    CHECK_EQ_INT(ll_wait_for(good, inner, INFINITY, &w), 0);
    CHECK_EQ_INT(ll_future_set_exception(inner, -12, "nope", 0, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, w), 0);
    CHECK_EQ_INT(ll_future_result(w, NULL), -12);
    ll_release(w);
    ll_release(inner);

    /* Timeout 0 times out at once (cancelling inner synchronously). */
    CHECK_EQ_INT(ll_future_new(good, &inner), 0);
    CHECK_EQ_INT(ll_wait_for(good, inner, 0, &w), 0);
    CHECK_EQ_INT(ll_future_state(inner), LL_CANCELLED);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, w), 0);
    CHECK_EQ_INT(ll_future_result(w, NULL), LL_ETIMEDOUT);
    ll_release(w);
    ll_release(inner);

    /* Cancelling the outer future cancels the inner one. */
    CHECK_EQ_INT(ll_future_new(good, &inner), 0);
    CHECK_EQ_INT(ll_wait_for(good, inner, 5.0, &w), 0);
    CHECK_EQ_INT(ll_future_cancel(w, NULL), 1);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_future_state(inner), LL_CANCELLED);
    ll_release(w);
    ll_release(inner);
}

/* ---- bad input ---------------------------------------------------------------------- */

static void check_bad_loop_at(uint64_t id, ll_future child, const char *file, int line) {
    ll_future out = 0;
    int rc[] = {ll_sleep(id, 0.0, &out), ll_gather(id, 1, &child, 0, &out), ll_gather(id, 0, NULL, 1, &out),
                ll_wait_for(id, child, 1.0, &out), ll_loop_run_until_complete(id, child)};
    int ok = out == 0;
    for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++)
        ok &= rc[i] == LL_EBADHANDLE;
    if (ok)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "bad loop 0x%llx: sleep %d gather %d %d wait_for %d ruc %d",
                      (unsigned long long)id, rc[0], rc[1], rc[2], rc[3], rc[4]);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_LOOP(id, child) check_bad_loop_at((id), (child), __FILE__, __LINE__)

static void check_bad_future_at(uint64_t id, ll_future ok_child, const char *file, int line) {
    ll_future out = 0, two[2] = {ok_child, id};
    int rc[] = {ll_gather(good, 2, two, 0, &out), ll_wait_for(good, id, 1.0, &out),
                ll_loop_run_until_complete(good, id)};
    if (rc[0] == LL_EBADHANDLE && rc[1] == LL_EBADHANDLE && rc[2] == LL_EBADHANDLE && out == 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "bad future 0x%llx: gather %d wait_for %d ruc %d", (unsigned long long)id,
                      rc[0], rc[1], rc[2]);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_FUTURE(id, ok) check_bad_future_at((id), (ok), __FILE__, __LINE__)

static void test_bad_input(void) {
    ll_future f, stale, foreign_f, out = 0;
    ll_loop dead, other;
    ll_handle h;
    int ran = 0;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_new(good, &stale), 0);
    CHECK_EQ_INT(ll_release(stale), 0);
    CHECK_EQ_INT(ll_loop_new(&dead), 0);
    CHECK_EQ_INT(ll_release(dead), 0);
    CHECK_EQ_INT(ll_loop_new(&other), 0);
    CHECK_EQ_INT(ll_future_new(other, &foreign_f), 0);
    CHECK_EQ_INT(ll_call_later(good, 3600, count_cb, &ran, &h), 0);

    CHECK_BAD_LOOP(0, f);
    CHECK_BAD_LOOP(dead, f);
    CHECK_BAD_LOOP(f, f); /* a future id as a loop */
    CHECK_BAD_LOOP(h, f);
    CHECK_BAD_LOOP(good ^ (1ull << 32), f);

    CHECK_BAD_FUTURE(0, f);
    CHECK_BAD_FUTURE(stale, f);
    CHECK_BAD_FUTURE(good, f); /* a loop id as a future */
    CHECK_BAD_FUTURE(h, f);
    CHECK_BAD_FUTURE(f ^ (1ull << 32), f);

    /* NULL out pointers, NaN and oversize delays, a NULL array. */
    CHECK_EQ_INT(ll_sleep(good, 0.1, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_sleep(good, NAN, &out), LL_EINVAL);
    CHECK_EQ_INT(ll_sleep(good, 1e12, &out), LL_EINVAL);
    CHECK_EQ_INT(ll_sleep(good, INFINITY, &out), LL_EINVAL);
    CHECK_EQ_INT(ll_gather(good, 1, &f, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_gather(good, 2, NULL, 0, &out), LL_EINVAL);
    CHECK_EQ_INT(ll_wait_for(good, f, 1.0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_wait_for(good, f, NAN, &out), LL_EINVAL);
    /* Futures of another loop. */
    ll_future mixed[2] = {f, foreign_f};
    CHECK_EQ_INT(ll_gather(good, 2, mixed, 0, &out), LL_EINVAL);
    CHECK_EQ_INT(ll_wait_for(good, foreign_f, 1.0, &out), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, foreign_f), LL_EINVAL);
    CHECK_EQ_INT(out, 0);
    STILL_RUNS(good);
    /* A closed loop. */
    CHECK_EQ_INT(ll_loop_close(other), 0);
    CHECK_EQ_INT(ll_sleep(other, 0.1, &out), LL_ECLOSED);
    CHECK_EQ_INT(ll_gather(other, 1, &foreign_f, 0, &out), LL_ECLOSED);
    CHECK_EQ_INT(ll_wait_for(other, foreign_f, 1.0, &out), LL_ECLOSED);
    CHECK_EQ_INT(ll_loop_run_until_complete(other, foreign_f), LL_ECLOSED);
    CHECK_EQ_INT(out, 0);
    STILL_RUNS(good);

    /* Nothing was disturbed: f is still pending and usable. */
    CHECK_EQ_INT(ll_future_state(f), LL_PENDING);
    CHECK_EQ_INT(ll_future_add_done_callback(f, count_done, &ran), 0);
    ll_release(f);
    ll_release(foreign_f);
    ll_release(other);
    ll_release(h);
    CHECK_EQ_INT(ran, 0);
}

int main(void) {
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_sleep);
    RUN_TEST(test_gather_results);
    RUN_TEST(test_gather_failures);
    RUN_TEST(test_gather_cancel);
    RUN_TEST(test_wait_for);
    RUN_TEST(test_bad_input);
    ll_release(good);
    return CHECK_REPORT();
}
