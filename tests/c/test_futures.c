/* SPDX-License-Identifier: MIT */
/* Futures: states, outcomes and their retrieval codes, done callbacks
 * (scheduled with call_soon, in registration order), host values freed
 * exactly once, and the bad-input table of every ll_future_* function.
 * "Exception was never retrieved" is in test_tasks_lifecycle.c. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

/* A healthy loop used after every bad call to show that nothing broke. */
static ll_loop good;

/* Free functions record every call, to count them. */
static int nfree;
static uintptr_t freed[64];
static void count_free(uintptr_t v) {
    freed[nfree++ % 64] = v;
}

/* An order log shared by done callbacks (arg = a tag) and plain callbacks. */
static int order[64];
static int norder;
static ll_future last_fut;
static void done_log(ll_future f, void *arg) {
    last_fut = f;
    if (norder < 64)
        order[norder++] = (int)(intptr_t)arg;
}
static void done_other(ll_future f, void *arg) { done_log(f, (void *)((intptr_t)arg + 100)); }
static void soon_log(ll_loop loop, void *arg) {
    (void)loop;
    if (norder < 64)
        order[norder++] = (int)(intptr_t)arg;
}

#define CHECK_ORDER(...)                                                            \
    do {                                                                            \
        const int want_[] = {__VA_ARGS__};                                          \
        int n_ = (int)(sizeof want_ / sizeof want_[0]), same_ = n_ == norder;       \
        for (int i_ = 0; same_ && i_ < n_; i_++)                                    \
            same_ = order[i_] == want_[i_];                                         \
        CHECK(same_);                                                               \
        if (!same_) {                                                               \
            fprintf(stderr, "  got:");                                              \
            for (int i_ = 0; i_ < norder; i_++)                                     \
                fprintf(stderr, " %d", order[i_]);                                  \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

/* ---- states and outcomes -------------------------------------------------- */

static void test_states_and_results(void) {
    ll_future f, g, c;
    uintptr_t v = 99;
    int code = 1;
    const char *msg = "unset";
    uintptr_t payload = 99;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK(f != 0);
    CHECK_EQ_INT(ll_future_state(f), LL_PENDING);
    CHECK_EQ_INT(ll_future_done(f), 0);
    /* Pending: asyncio's InvalidStateError, and the out values untouched. */
    CHECK_EQ_INT(ll_future_result(f, &v), LL_ESTATE);
    CHECK_EQ_INT(v, 99);
    CHECK_EQ_INT(ll_future_exception(f, &code, &msg, &payload), LL_ESTATE);

    CHECK_EQ_INT(ll_future_set_result(f, 1234, NULL), 0);
    CHECK_EQ_INT(ll_future_state(f), LL_FINISHED);
    CHECK_EQ_INT(ll_future_done(f), 1);
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    CHECK_EQ_INT(v, 1234);
    CHECK_EQ_INT(ll_future_result(f, NULL), 0);
    CHECK_EQ_INT(ll_future_exception(f, &code, &msg, &payload), 0);
    CHECK_EQ_INT(code, 0);
    /* Done is final: a second outcome is refused, a cancel does nothing. */
    CHECK_EQ_INT(ll_future_set_result(f, 5, NULL), LL_ESTATE);
    CHECK_EQ_INT(ll_future_set_exception(f, -5, "late", 0, NULL), LL_ESTATE);
    CHECK_EQ_INT(ll_future_cancel(f, "too late"), 0);
    CHECK_EQ_INT(ll_future_state(f), LL_FINISHED);
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    CHECK_EQ_INT(v, 1234);

    /* A failure: result() returns the exception's code; exception() gives
     * the code, a copy of the message and the payload. */
    char text[32] = "disk on fire";
    CHECK_EQ_INT(ll_future_new(good, &g), 0);
    CHECK_EQ_INT(ll_future_set_exception(g, 0, "no code", 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_future_set_exception(g, LL_ECANCELLED, "use cancel", 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_future_state(g), LL_PENDING);
    CHECK_EQ_INT(ll_future_set_exception(g, -77, text, 0xfeed, NULL), 0);
    strcpy(text, "overwritten");
    CHECK_EQ_INT(ll_future_state(g), LL_FINISHED);
    CHECK_EQ_INT(ll_future_result(g, &v), -77);
    CHECK_EQ_INT(ll_future_exception(g, &code, &msg, &payload), 0);
    CHECK_EQ_INT(code, -77);
    CHECK_EQ_STR(msg, "disk on fire");
    CHECK_EQ_INT(payload, 0xfeed);
    const char *again = NULL;
    CHECK_EQ_INT(ll_future_exception(g, NULL, &again, NULL), 0);
    CHECK(again == msg); /* stays valid (and the same) while the id lives */
    CHECK_EQ_INT(ll_future_set_result(g, 1, NULL), LL_ESTATE);
    CHECK_EQ_INT(ll_future_cancel(g, NULL), 0);

    /* Cancel (with a message, copied): 1 the first time, 0 afterwards. */
    char why[16] = "shutting down";
    CHECK_EQ_INT(ll_future_new(good, &c), 0);
    CHECK_EQ_INT(ll_future_cancel(c, why), 1);
    memset(why, 'x', sizeof why - 1);
    CHECK_EQ_INT(ll_future_state(c), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_done(c), 1);
    CHECK_EQ_INT(ll_future_cancel(c, "again"), 0);
    CHECK_EQ_INT(ll_future_result(c, &v), LL_ECANCELLED);
    CHECK_EQ_INT(ll_future_exception(c, &code, &msg, &payload), LL_ECANCELLED);
    CHECK_EQ_INT(ll_future_set_result(c, 1, NULL), LL_ESTATE);
    CHECK_EQ_INT(ll_future_set_exception(c, -1, NULL, 0, NULL), LL_ESTATE);

    /* A NULL message is an empty one. */
    ll_future e;
    CHECK_EQ_INT(ll_future_new(good, &e), 0);
    CHECK_EQ_INT(ll_future_set_exception(e, -3, NULL, 0, NULL), 0);
    msg = NULL;
    CHECK_EQ_INT(ll_future_exception(e, &code, &msg, NULL), 0);
    CHECK_EQ_INT(code, -3);
    CHECK_EQ_STR(msg, "");
    CHECK_EQ_INT(ll_release(e), 0);

    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_release(g), 0);
    CHECK_EQ_INT(ll_release(c), 0);
    CHECK_EQ_INT(ll_future_state(f), LL_EBADHANDLE);
    STILL_RUNS(good);
}

/* ---- done callbacks --------------------------------------------------------- */

static void test_done_callbacks_order(void) {
    ll_future f;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    norder = 0;
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)1), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)2), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)3), 0);
    CHECK_EQ_INT(ll_call_soon(good, soon_log, (void *)10, NULL), 0);
    /* Completing the future schedules the callbacks with call_soon: none
     * runs now, and they queue behind what was already ready. */
    CHECK_EQ_INT(ll_future_set_result(f, 5, NULL), 0);
    CHECK_EQ_INT(norder, 0);
    CHECK_EQ_INT(ll_call_soon(good, soon_log, (void *)20, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_ORDER(10, 1, 2, 3, 20);
    CHECK_EQ_INT(last_fut, f);

    /* Added once done: scheduled at once (still not called synchronously). */
    norder = 0;
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)4), 0);
    CHECK_EQ_INT(norder, 0);
    CHECK_EQ_INT(ll_call_soon(good, soon_log, (void *)30, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_ORDER(4, 30);
    /* Each ran once: another iteration runs nothing. */
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 2);

    /* Cancellation schedules them too. */
    ll_future c;
    CHECK_EQ_INT(ll_future_new(good, &c), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(c, done_log, (void *)7), 0);
    norder = 0;
    CHECK_EQ_INT(ll_future_cancel(c, NULL), 1);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_ORDER(7);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(ll_release(c), 0);
}

/* Inside a callback, call_soon (C's fast path) and set_result keep one
 * FIFO order. */
static ll_future inner_fut;
static void complete_inside_cb(ll_loop loop, void *arg) {
    (void)arg;
    CHECK_EQ_INT(ll_call_soon(loop, soon_log, (void *)11, NULL), 0);
    CHECK_EQ_INT(ll_future_set_result(inner_fut, 1, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, soon_log, (void *)12, NULL), 0);
}

static void test_done_callbacks_fifo_inside_callback(void) {
    CHECK_EQ_INT(ll_future_new(good, &inner_fut), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(inner_fut, done_log, (void *)13), 0);
    norder = 0;
    CHECK_EQ_INT(ll_call_soon(good, complete_inside_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_ORDER(11, 13, 12);
    CHECK_EQ_INT(ll_release(inner_fut), 0);
}

static void test_remove_done_callback(void) {
    ll_future f;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)1), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)2), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)1), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_other, (void *)1), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, done_log, (void *)3), 0);
    /* Both (done_log, 1) registrations go; the same fn with another arg and
     * another fn with the same arg stay. */
    CHECK_EQ_INT(ll_future_remove_done_callback(f, done_log, (void *)1), 2);
    CHECK_EQ_INT(ll_future_remove_done_callback(f, done_log, (void *)1), 0);
    CHECK_EQ_INT(ll_future_remove_done_callback(f, done_log, (void *)9), 0);
    CHECK_EQ_INT(ll_future_remove_done_callback(f, NULL, NULL), 0);
    CHECK_EQ_INT(ll_future_set_result(f, 0, NULL), 0);
    /* Already scheduled: too late to remove; it still runs. */
    CHECK_EQ_INT(ll_future_remove_done_callback(f, done_log, (void *)3), 0);
    norder = 0;
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_ORDER(2, 101, 3);
    CHECK_EQ_INT(ll_release(f), 0);
}

/* ---- host values freed exactly once ----------------------------------------- */

static uintptr_t seen_value;
static int seen_rc;
static int frees_when_called; /* how many frees had happened when it ran */
static void read_result_cb(ll_future f, void *arg) {
    (void)arg;
    seen_rc = ll_future_result(f, &seen_value);
    frees_when_called = nfree;
}

static void test_free_exactly_once(void) {
    ll_future f;
    nfree = 0;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_set_result(f, 0xA1, count_free), 0);
    /* A refused second outcome: ownership of that value stays with us. */
    CHECK_EQ_INT(ll_future_set_result(f, 0xA2, count_free), LL_ESTATE);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(nfree, 0); /* still ours to read */
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(nfree, 1);
    CHECK_EQ_INT(freed[0], 0xA1);
    CHECK_EQ_INT(ll_release(f), LL_EBADHANDLE);
    CHECK_EQ_INT(nfree, 1);

    /* An exception payload, likewise (retrieved, so no report). */
    nfree = 0;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_set_exception(f, -9, "bad", 0xB1, count_free), 0);
    CHECK_EQ_INT(ll_future_result(f, NULL), -9);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(nfree, 1);
    CHECK_EQ_INT(freed[0], 0xB1);

    /* Released by the host while a done callback is still scheduled: the
     * loop still needs the future, so the callback can read the value and
     * the free comes after it. */
    nfree = 0;
    seen_rc = 1;
    frees_when_called = -1;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, read_result_cb, NULL), 0);
    CHECK_EQ_INT(ll_future_set_result(f, 0xC1, count_free), 0);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(nfree, 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(seen_rc, 0);
    CHECK_EQ_INT(seen_value, 0xC1);
    CHECK_EQ_INT(frees_when_called, 0); /* no free before the callback ran */
    CHECK_EQ_INT(nfree, 1);
    CHECK_EQ_INT(freed[0], 0xC1);
    CHECK_EQ_INT(ll_future_state(f), LL_EBADHANDLE);

    /* A future outlives its loop: the value is freed when we release it. */
    ll_loop l;
    nfree = 0;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_future_new(l, &f), 0);
    CHECK_EQ_INT(ll_future_set_result(f, 0xD1, count_free), 0);
    CHECK_EQ_INT(ll_release(l), 0);
    CHECK_EQ_INT(nfree, 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    CHECK_EQ_INT(v, 0xD1);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(nfree, 1);

    /* Never completed: nothing to free. */
    nfree = 0;
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(nfree, 0);
    STILL_RUNS(good);
}

/* ---- bad input ---------------------------------------------------------------- */

/* Every ll_future_* call given a bad future id returns LL_EBADHANDLE, calls
 * no free function and runs no callback. */
static void check_bad_future_id_at(uint64_t id, int include_release, const char *file, int line) {
    int code = 0;
    const char *msg = NULL;
    uintptr_t v = 0;
    int frees = nfree, calls = norder;
    struct {
        const char *name;
        int rc;
    } r[] = {
        {"ll_future_state", ll_future_state(id)},
        {"ll_future_done", ll_future_done(id)},
        {"ll_future_set_result", ll_future_set_result(id, 1, count_free)},
        {"ll_future_set_exception", ll_future_set_exception(id, -5, "x", 2, count_free)},
        {"ll_future_cancel", ll_future_cancel(id, "m")},
        {"ll_future_result", ll_future_result(id, &v)},
        {"ll_future_exception", ll_future_exception(id, &code, &msg, &v)},
        {"ll_future_add_done_callback", ll_future_add_done_callback(id, done_log, NULL)},
        {"ll_future_add_done_callback(NULL)", ll_future_add_done_callback(id, NULL, NULL)},
        {"ll_future_remove_done_callback", ll_future_remove_done_callback(id, done_log, NULL)},
        {"ll_release", include_release ? ll_release(id) : LL_EBADHANDLE},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        if (r[i].rc == LL_EBADHANDLE)
            check_passed++;
        else
            CHECK_FAIL_AT(file, line, "%s(0x%llx) = %d, want LL_EBADHANDLE", r[i].name,
                          (unsigned long long)id, r[i].rc);
    }
    ll_loop_run_once(good, LL_RUN_NOWAIT);
    if (nfree == frees && norder == calls && v == 0 && msg == NULL)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "bad id 0x%llx: a free ran, a callback ran or an out was written",
                      (unsigned long long)id);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_FUTURE_ID(id, rel) check_bad_future_id_at((id), (rel), __FILE__, __LINE__)

static void check_bad_loop_for_future_new_at(uint64_t id, const char *file, int line) {
    ll_future out = 0;
    int rc = ll_future_new(id, &out);
    if (rc == LL_EBADHANDLE && out == 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "ll_future_new(0x%llx) = %d, out %llu", (unsigned long long)id, rc,
                      (unsigned long long)out);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_LOOP(id) check_bad_loop_for_future_new_at((id), __FILE__, __LINE__)

static void test_bad_input(void) {
    ll_future live, stale;
    ll_handle h;
    ll_loop dead;
    int ran = 0;
    CHECK_EQ_INT(ll_future_new(good, &live), 0);
    CHECK_EQ_INT(ll_future_new(good, &stale), 0);
    CHECK_EQ_INT(ll_release(stale), 0);
    CHECK_EQ_INT(ll_call_later(good, 3600, count_cb, &ran, &h), 0);
    CHECK_EQ_INT(ll_loop_new(&dead), 0);
    CHECK_EQ_INT(ll_release(dead), 0);

    CHECK_BAD_FUTURE_ID(0, 1);
    CHECK_BAD_FUTURE_ID(stale, 1);
    CHECK_BAD_FUTURE_ID(live ^ (1ull << 32), 1); /* forged: another generation */
    CHECK_BAD_FUTURE_ID(live + 0x100000, 1);      /* forged: beyond the table */
    CHECK_BAD_FUTURE_ID(UINT64_MAX, 1);
    CHECK_BAD_FUTURE_ID(good, 0); /* wrong kind: a loop id as a future */
    CHECK_BAD_FUTURE_ID(h, 0);    /* wrong kind: a handle id as a future */

    CHECK_BAD_LOOP(0);
    CHECK_BAD_LOOP(dead);
    CHECK_BAD_LOOP(good ^ (1ull << 32));
    CHECK_BAD_LOOP(live); /* a future id as a loop */
    CHECK_BAD_LOOP(h);

    /* NULL out pointer and NULL callback. */
    CHECK_EQ_INT(ll_future_new(good, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_future_add_done_callback(live, NULL, NULL), LL_EINVAL);
    STILL_RUNS(good);
    /* Closed loop. */
    ll_loop closed;
    ll_future out = 0;
    CHECK_EQ_INT(ll_loop_new(&closed), 0);
    CHECK_EQ_INT(ll_loop_close(closed), 0);
    CHECK_EQ_INT(ll_future_new(closed, &out), LL_ECLOSED);
    CHECK_EQ_INT(out, 0);
    CHECK_EQ_INT(ll_release(closed), 0);
    STILL_RUNS(good);

    /* The live objects were not disturbed. */
    CHECK_EQ_INT(ll_future_state(live), LL_PENDING);
    CHECK_EQ_INT(ll_handle_cancelled(h), 0);
    CHECK_EQ_INT(ran, 0);
    CHECK_EQ_INT(ll_release(live), 0);
    CHECK_EQ_INT(ll_release(h), 0);
}

int main(void) {
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_states_and_results);
    RUN_TEST(test_done_callbacks_order);
    RUN_TEST(test_done_callbacks_fifo_inside_callback);
    RUN_TEST(test_remove_done_callback);
    RUN_TEST(test_free_exactly_once);
    RUN_TEST(test_bad_input);
    ll_release(good);
    return CHECK_REPORT();
}
