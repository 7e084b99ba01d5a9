/* SPDX-License-Identifier: MIT */
/* The bad-input table of the loop's own calls (GUIDE.md §4): ids that are
 * 0, stale, forged or of another kind, bad arguments, and calls the loop's
 * state refuses (closed, running). Every bad call returns its documented
 * code, never crashes, and the loop goes on running callbacks afterwards.
 * test_badinput_transports.c is the same table for the transport calls. */
#include <limits.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

/* A healthy loop used after every bad call to show that nothing broke. */
static ll_loop good;

static void io_cb(ll_loop loop, int fd, void *arg) {
    (void)loop;
    (void)fd;
    *(int *)arg += 1;
}

/* Every loop-taking function, given a bad loop id, returns LL_EBADHANDLE
 * (negative for ll_loop_time). include_release: ll_release also takes ids
 * of every kind, so it is left out for a live id of another kind. */
static void check_bad_loop_id_at(ll_loop id, int include_release, const char *file, int line) {
    int sink = 0;
    int p[2];
    if (pipe(p) != 0)
        return;
    struct ll_loop_stats st = {.size = sizeof st};
    struct {
        const char *name;
        int rc;
    } r[] = {
        {"ll_loop_close", ll_loop_close(id)},
        {"ll_loop_run_forever", ll_loop_run_forever(id)},
        {"ll_loop_run_once(ONCE)", ll_loop_run_once(id, LL_RUN_ONCE)},
        {"ll_loop_run_once(NOWAIT)", ll_loop_run_once(id, LL_RUN_NOWAIT)},
        {"ll_loop_stop", ll_loop_stop(id)},
        {"ll_loop_is_running", ll_loop_is_running(id)},
        {"ll_loop_is_closed", ll_loop_is_closed(id)},
        {"ll_loop_set_debug", ll_loop_set_debug(id, 1)},
        {"ll_loop_get_debug", ll_loop_get_debug(id)},
        {"ll_loop_set_slow_callback_duration", ll_loop_set_slow_callback_duration(id, 0.5)},
        {"ll_loop_set_exception_handler", ll_loop_set_exception_handler(id, NULL, NULL)},
        {"ll_call_soon", ll_call_soon(id, count_cb, &sink, NULL)},
        {"ll_call_later", ll_call_later(id, 0.0, count_cb, &sink, NULL)},
        {"ll_call_at", ll_call_at(id, 0.0, count_cb, &sink, NULL)},
        {"ll_call_soon_threadsafe", ll_call_soon_threadsafe(id, count_cb, &sink)},
        {"ll_loop_wakeup", ll_loop_wakeup(id)},
        {"ll_add_reader", ll_add_reader(id, p[0], io_cb, &sink)},
        {"ll_add_writer", ll_add_writer(id, p[1], io_cb, &sink)},
        {"ll_remove_reader", ll_remove_reader(id, p[0])},
        {"ll_remove_writer", ll_remove_writer(id, p[1])},
        {"ll_loop_stats", ll_loop_stats(id, &st)},
        {"ll_release", include_release ? ll_release(id) : LL_EBADHANDLE},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        if (r[i].rc == LL_EBADHANDLE)
            check_passed++;
        else
            CHECK_FAIL_AT(file, line, "%s(0x%llx) = %d, want LL_EBADHANDLE", r[i].name,
                          (unsigned long long)id, r[i].rc);
    }
    /* A handle out pointer is left alone on failure. */
    ll_handle h = 0;
    ll_call_soon(id, count_cb, &sink, &h);
    ll_call_later(id, 1.0, count_cb, &sink, &h);
    if (h == 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "a handle was returned for bad loop id 0x%llx", (unsigned long long)id);
    if (ll_loop_time(id) < 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "ll_loop_time(0x%llx) not negative", (unsigned long long)id);
    if (sink == 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "a callback ran for bad loop id 0x%llx", (unsigned long long)id);
    close(p[0]);
    close(p[1]);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_LOOP_ID(id, rel) check_bad_loop_id_at((id), (rel), __FILE__, __LINE__)

static void check_bad_handle_id_at(ll_handle id, int include_release, const char *file, int line) {
    int rc1 = ll_handle_cancel(id), rc2 = ll_handle_cancelled(id);
    int rc3 = include_release ? ll_release(id) : LL_EBADHANDLE;
    double when = ll_timer_when(id);
    if (rc1 == LL_EBADHANDLE && rc2 == LL_EBADHANDLE && rc3 == LL_EBADHANDLE && when < 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line,
                      "bad handle 0x%llx: cancel %d, cancelled %d, release %d, timer_when %g",
                      (unsigned long long)id, rc1, rc2, rc3, when);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_HANDLE_ID(id, rel) check_bad_handle_id_at((id), (rel), __FILE__, __LINE__)

/* ---- ids ------------------------------------------------------------------ */

static void test_id_zero(void) {
    CHECK_BAD_LOOP_ID(0, 1);
    CHECK_BAD_HANDLE_ID(0, 1);
}

static void test_stale_ids(void) {
    ll_loop l;
    ll_handle h, t;
    int ran = 0;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_call_soon(l, count_cb, &ran, &h), 0);
    CHECK_EQ_INT(ll_call_later(l, 10.0, count_cb, &ran, &t), 0);
    CHECK_EQ_INT(ll_release(h), 0);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(ll_release(l), 0);
    CHECK_BAD_LOOP_ID(l, 1);
    CHECK_BAD_HANDLE_ID(h, 1);
    CHECK_BAD_HANDLE_ID(t, 1);

    /* New objects may reuse the slots: the old ids must stay dead. */
    ll_loop l2;
    ll_handle h2;
    CHECK_EQ_INT(ll_loop_new(&l2), 0);
    CHECK_EQ_INT(ll_call_soon(l2, count_cb, &ran, &h2), 0);
    CHECK(l2 != l);
    CHECK_BAD_LOOP_ID(l, 1);
    CHECK_BAD_HANDLE_ID(h, 1);
    CHECK_EQ_INT(ll_loop_is_closed(l2), 0);
    CHECK_EQ_INT(ll_handle_cancelled(h2), 0);
    CHECK_EQ_INT(ll_loop_run_once(l2, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ran, 1);
    CHECK_EQ_INT(ll_release(h2), 0);
    CHECK_EQ_INT(ll_release(l2), 0);
}

static void test_forged_ids(void) {
    ll_handle h;
    int ran = 0;
    CHECK_EQ_INT(ll_call_soon(good, count_cb, &ran, &h), 0);
    const uint64_t forged[] = {
        good ^ (1ull << 32),          /* same slot, another generation */
        good ^ (0x5a5aull << 40),
        good + 0x100000,              /* a slot far beyond the table */
        (good & 0xffffffff00000000ull), /* slot part 0 */
        UINT64_MAX,
        0xdeadbeefcafef00dull,
        1, 2, 3,
    };
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        if (forged[i] == good || forged[i] == h)
            continue;
        CHECK_BAD_LOOP_ID(forged[i], 1);
    }
    const uint64_t forged_h[] = {h ^ (1ull << 32), h + 0x100000, UINT64_MAX, 0x1234567800000001ull};
    for (size_t i = 0; i < sizeof forged_h / sizeof forged_h[0]; i++)
        CHECK_BAD_HANDLE_ID(forged_h[i], 1);
    /* The real objects were not disturbed. */
    CHECK_EQ_INT(ll_handle_cancelled(h), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ran, 1);
    CHECK_EQ_INT(ll_release(h), 0);
}

static void test_wrong_kind_ids(void) {
    ll_handle h, t;
    int ran = 0;
    CHECK_EQ_INT(ll_call_soon(good, count_cb, &ran, &h), 0);
    CHECK_EQ_INT(ll_call_later(good, 0.0, count_cb, &ran, &t), 0);
    /* A handle id where a loop id belongs, and the reverse. */
    CHECK_BAD_LOOP_ID(h, 0);
    CHECK_BAD_LOOP_ID(t, 0);
    CHECK_BAD_HANDLE_ID(good, 0);
    /* Neither object was harmed: both callbacks run. */
    CHECK_EQ_INT(ll_handle_cancelled(h), 0);
    usleep(1000);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ran, 2);
    CHECK_EQ_INT(ll_release(h), 0);
    CHECK_EQ_INT(ll_release(t), 0);
    CHECK_EQ_INT(ll_loop_is_closed(good), 0);
}

/* ---- arguments ------------------------------------------------------------ */

static void test_null_out(void) {
    CHECK_EQ_INT(ll_loop_new(NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_stats(good, NULL), LL_EINVAL);
    /* A size below the first version's is refused and nothing is written. */
    struct ll_loop_stats st = {.size = LL_LOOP_STATS_V1_SIZE - 8, .iterations = 77};
    CHECK_EQ_INT(ll_loop_stats(good, &st), LL_EINVAL);
    CHECK_EQ_INT(st.iterations, 77);
    st.size = 0;
    CHECK_EQ_INT(ll_loop_stats(good, &st), LL_EINVAL);
    STILL_RUNS(good);
}

static void null_cb_inside_cb(ll_loop loop, void *arg) {
    /* Inside a callback (the library's in-batch fast path): still EINVAL. */
    *(int *)arg = ll_call_soon(loop, NULL, NULL, NULL);
}

static void test_null_callback(void) {
    ll_handle h = 0;
    int sink = 0;
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(ll_call_soon(good, NULL, &sink, NULL), LL_EINVAL);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_call_soon(good, NULL, &sink, &h), LL_EINVAL);
    CHECK_EQ_INT(h, 0);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_call_later(good, 0.0, NULL, &sink, &h), LL_EINVAL);
    CHECK_EQ_INT(h, 0);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_call_at(good, 0.0, NULL, &sink, NULL), LL_EINVAL);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_call_soon_threadsafe(good, NULL, &sink), LL_EINVAL);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_add_reader(good, p[0], NULL, &sink), LL_EINVAL);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_add_writer(good, p[1], NULL, &sink), LL_EINVAL);
    STILL_RUNS(good);
    int rc = 1;
    CHECK_EQ_INT(ll_call_soon(good, null_cb_inside_cb, &rc, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(rc, LL_EINVAL);
    STILL_RUNS(good);
    close(p[0]);
    close(p[1]);
}

static void test_bad_delays(void) {
    int ran = 0;
    ll_handle h = 0;
    const double bad[] = {NAN, -NAN, 1e300, INFINITY, 1e12};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(ll_call_later(good, bad[i], count_cb, &ran, &h), LL_EINVAL);
        STILL_RUNS(good);
        CHECK_EQ_INT(ll_call_at(good, bad[i], count_cb, &ran, &h), LL_EINVAL);
        STILL_RUNS(good);
    }
    CHECK_EQ_INT(h, 0);
    CHECK_EQ_INT(ran, 0);
    /* A deadline in the distant past, -INFINITY included, is simply due. */
    CHECK_EQ_INT(ll_call_later(good, -INFINITY, count_cb, &ran, NULL), 0);
    CHECK_EQ_INT(ll_call_at(good, -1e300, count_cb, &ran, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ran, 2);
    ran = 0;
    /* A long but valid delay is accepted (and cancelled here). */
    CHECK_EQ_INT(ll_call_later(good, 1e6, count_cb, &ran, &h), 0);
    CHECK(h != 0);
    CHECK_EQ_INT(ll_handle_cancel(h), 0);
    CHECK_EQ_INT(ll_release(h), 0);

    CHECK_EQ_INT(ll_loop_set_slow_callback_duration(good, NAN), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_set_slow_callback_duration(good, -1.0), LL_EINVAL);
    STILL_RUNS(good);
}

static void test_bad_run_mode(void) {
    int ran = 0;
    CHECK_EQ_INT(ll_call_soon(good, count_cb, &ran, NULL), 0);
    /* -1 in particular must not mean "run forever". */
    const int modes[] = {-1, 2, 3, 100, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        CHECK_EQ_INT(ll_loop_run_once(good, modes[i]), LL_EINVAL);
        CHECK_EQ_INT(ran, 0); /* nothing ran */
    }
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ran, 1);
    STILL_RUNS(good);
}

/* ---- loop state ----------------------------------------------------------- */

static void test_closed_loop(void) {
    ll_loop l;
    int sink = 0, p[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_close(l), 0);
    ll_handle h = 0;
    CHECK_EQ_INT(ll_call_soon(l, count_cb, &sink, NULL), LL_ECLOSED);
    CHECK_EQ_INT(ll_call_soon(l, count_cb, &sink, &h), LL_ECLOSED);
    CHECK_EQ_INT(ll_call_later(l, 0.0, count_cb, &sink, &h), LL_ECLOSED);
    CHECK_EQ_INT(ll_call_at(l, 0.0, count_cb, &sink, &h), LL_ECLOSED);
    CHECK_EQ_INT(h, 0);
    CHECK_EQ_INT(ll_call_soon_threadsafe(l, count_cb, &sink), LL_ECLOSED);
    CHECK_EQ_INT(ll_loop_wakeup(l), LL_ECLOSED);
    CHECK_EQ_INT(ll_add_reader(l, p[0], io_cb, &sink), LL_ECLOSED);
    CHECK_EQ_INT(ll_add_writer(l, p[1], io_cb, &sink), LL_ECLOSED);
    CHECK_EQ_INT(ll_loop_stop(l), LL_ECLOSED);
    CHECK_EQ_INT(ll_loop_run_forever(l), LL_ECLOSED);
    CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_ONCE), LL_ECLOSED);
    CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_NOWAIT), LL_ECLOSED);
    /* Still answers questions, and close stays idempotent. */
    CHECK_EQ_INT(ll_loop_is_closed(l), 1);
    CHECK_EQ_INT(ll_loop_is_running(l), 0);
    CHECK(ll_loop_time(l) >= 0);
    CHECK_EQ_INT(ll_loop_close(l), 0);
    CHECK_EQ_INT(sink, 0);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_release(l), 0);
    CHECK_EQ_INT(ll_loop_close(l), LL_EBADHANDLE);
    close(p[0]);
    close(p[1]);
}

/* Called from inside a running loop's callback. */
struct running_probe {
    ll_loop other;
    int run_forever, run_once, run_nowait, run_other, close, release;
};

static void running_probe_cb(ll_loop loop, void *arg) {
    struct running_probe *p = arg;
    p->run_forever = ll_loop_run_forever(loop);
    p->run_once = ll_loop_run_once(loop, LL_RUN_ONCE);
    p->run_nowait = ll_loop_run_once(loop, LL_RUN_NOWAIT);
    p->run_other = ll_loop_run_once(p->other, LL_RUN_NOWAIT); /* any loop on this thread */
    p->close = ll_loop_close(loop);
    p->release = ll_release(loop);
}

static void test_while_running(void) {
    ll_loop l, other;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_new(&other), 0);
    int other_ran = 0;
    CHECK_EQ_INT(ll_call_soon(other, count_cb, &other_ran, NULL), 0);
    struct running_probe p = {other, 0, 0, 0, 0, 0, 0};
    CHECK_EQ_INT(ll_call_soon(l, running_probe_cb, &p, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(p.run_forever, LL_ERUNNING);
    CHECK_EQ_INT(p.run_once, LL_ERUNNING);
    CHECK_EQ_INT(p.run_nowait, LL_ERUNNING);
    CHECK_EQ_INT(p.run_other, LL_ERUNNING);
    CHECK_EQ_INT(p.close, LL_ERUNNING);
    CHECK_EQ_INT(p.release, LL_ERUNNING);
    CHECK_EQ_INT(other_ran, 0);
    /* Nothing was closed or released, and both loops carry on. */
    CHECK_EQ_INT(ll_loop_is_closed(l), 0);
    CHECK_EQ_INT(ll_loop_is_running(l), 0);
    STILL_RUNS(l);
    CHECK_EQ_INT(ll_loop_run_once(other, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(other_ran, 1);

    /* Same from run_forever. */
    memset(&p, 0, sizeof p);
    p.other = other;
    CHECK_EQ_INT(ll_call_soon(l, running_probe_cb, &p, NULL), 0);
    CHECK_EQ_INT(ll_loop_stop(l), 0);
    CHECK_EQ_INT(ll_loop_run_forever(l), 0);
    CHECK_EQ_INT(p.run_forever, LL_ERUNNING);
    CHECK_EQ_INT(p.close, LL_ERUNNING);
    CHECK_EQ_INT(p.release, LL_ERUNNING);
    STILL_RUNS(l);
    CHECK_EQ_INT(ll_release(l), 0);
    CHECK_EQ_INT(ll_release(other), 0);
}

int main(void) {
    if (ll_loop_new(&good) != 0) {
        fprintf(stderr, "cannot create a loop\n");
        return 1;
    }
    RUN_TEST(test_id_zero);
    RUN_TEST(test_stale_ids);
    RUN_TEST(test_forged_ids);
    RUN_TEST(test_wrong_kind_ids);
    RUN_TEST(test_null_out);
    RUN_TEST(test_null_callback);
    RUN_TEST(test_bad_delays);
    RUN_TEST(test_bad_run_mode);
    RUN_TEST(test_closed_loop);
    RUN_TEST(test_while_running);
    CHECK_EQ_INT(ll_release(good), 0);
    return CHECK_REPORT();
}
