/* SPDX-License-Identifier: MIT */
/* Tasks: coroutines as step functions (asyncio's Task.__step). The seed
 * trace of "Hello ... World", bare yield, the errors a step can make,
 * and the bad-input table. Cancellation, current/all tasks and lifetime
 * are in test_tasks_lifecycle.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

static ll_loop good;

/* An event log of string literals, compared in order. */
static const char *events[32];
static int nevents;
static void ev(const char *e) {
    if (nevents < 32)
        events[nevents++] = e;
}
static void check_events_at(const char *file, int line, const char **want) {
    int n = 0, same = 1;
    while (want[n] != NULL)
        n++;
    same = n == nevents;
    for (int i = 0; same && i < n; i++)
        same = strcmp(events[i], want[i]) == 0;
    if (same) {
        check_passed++;
        return;
    }
    CHECK_FAIL_AT(file, line, "events differ");
    for (int i = 0; i < nevents || i < n; i++)
        fprintf(stderr, "  %-34s | want %s\n", i < nevents ? events[i] : "-", i < n ? want[i] : "-");
}
#define CHECK_EVENTS(...) check_events_at(__FILE__, __LINE__, (const char *[]){__VA_ARGS__, NULL})

static int nfree;
static uintptr_t last_freed;
static void count_free(uintptr_t v) {
    nfree++;
    last_freed = v;
}

/* ---- the seed trace: asyncio's Hello ... World ------------------------------ */

struct hello {
    ll_loop loop;
    ll_task task;
    ll_future sleep;
    int state;
};

static void hello_sleep_done(ll_future f, void *arg) {
    struct hello *h = arg;
    ev("timer fired: sleep done");
    CHECK_EQ_INT(f, h->sleep);
    CHECK_EQ_INT(ll_future_state(h->task), LL_PENDING); /* woken, not yet stepped */
    ll_task cur = 1;
    CHECK_EQ_INT(ll_current_task(h->loop, &cur), 0);
    CHECK_EQ_INT(cur, 0);
}

static void hello_task_done(ll_future f, void *arg) {
    struct hello *h = arg;
    ev("task done");
    CHECK_EQ_INT(f, h->task);
}

static void hello_step(ll_task t, void *arg) {
    struct hello *h = arg;
    ll_future woken = 1;
    ll_task cur = 0;
    CHECK_EQ_INT(ll_task_awaited(t, &woken), 0);
    CHECK_EQ_INT(ll_task_must_raise_cancel(t), 0);
    CHECK_EQ_INT(ll_current_task(h->loop, &cur), 0);
    CHECK_EQ_INT(cur, t);
    switch (h->state++) {
    case 0:
        ev("step 1: Hello");
        CHECK_EQ_INT(woken, 0);
        CHECK_EQ_INT(ll_sleep(h->loop, 0.001, &h->sleep), 0);
        CHECK_EQ_INT(ll_future_add_done_callback(h->sleep, hello_sleep_done, h), 0);
        CHECK_EQ_INT(ll_task_await(t, h->sleep), 0);
        return;
    default: {
        ev("step 2: World");
        uintptr_t v = 1;
        CHECK_EQ_INT(woken, h->sleep);
        CHECK_EQ_INT(ll_future_result(woken, &v), 0);
        CHECK_EQ_INT(v, 0);
        CHECK_EQ_INT(ll_task_return(t, 42, NULL), 0);
        return;
    }
    }
}

static void test_hello_world_trace(void) {
    struct hello h = {.loop = good};
    nevents = 0;
    double t0 = ll_loop_time(good);
    CHECK_EQ_INT(ll_task_new(good, hello_step, &h, &h.task), 0);
    CHECK_EQ_INT(nevents, 0); /* the first step is scheduled, not run */
    CHECK_EQ_INT(ll_future_add_done_callback(h.task, hello_task_done, &h), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, h.task), 0);
    CHECK_EVENTS("step 1: Hello", "timer fired: sleep done", "step 2: World", "task done");
    CHECK(ll_loop_time(good) - t0 >= 0.001 - 1e-6);
    CHECK_EQ_INT(ll_loop_is_running(good), 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_state(h.task), LL_FINISHED);
    CHECK_EQ_INT(ll_future_result(h.task, &v), 0);
    CHECK_EQ_INT(v, 42);
    CHECK_EQ_INT(ll_release(h.sleep), 0);
    CHECK_EQ_INT(ll_release(h.task), 0);
}

/* ---- yield, await and the errors a step can make ----------------------------- */

static void log_soon(ll_loop loop, void *arg) {
    (void)loop;
    ev((const char *)arg);
}

static void yield_step(ll_task t, void *arg) {
    int *steps = arg;
    ll_future woken = 1;
    CHECK_EQ_INT(ll_task_awaited(t, &woken), 0);
    CHECK_EQ_INT(woken, 0);
    ev("step");
    if (++*steps < 3)
        CHECK_EQ_INT(ll_task_yield(t), 0);
    else
        CHECK_EQ_INT(ll_task_return(t, 0, NULL), 0);
}

static void test_bare_yield(void) {
    int steps = 0;
    ll_task t;
    nevents = 0;
    CHECK_EQ_INT(ll_task_new(good, yield_step, &steps, &t), 0);
    CHECK_EQ_INT(ll_call_soon(good, log_soon, "callback", NULL), 0);
    /* A yield steps again in the next iteration, behind what is ready. */
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EVENTS("step", "callback");
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(steps, 2);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(steps, 3);
    CHECK_EQ_INT(ll_future_state(t), LL_FINISHED);
    ll_release(t);
}

enum { AWAIT_SELF, AWAIT_OTHER_LOOP, DO_NOTHING, TWO_OUTCOMES, AWAIT_DONE, BAD_AWAIT_THEN_RETURN };
struct misc {
    int mode;
    ll_future other;
    int steps;
    int rc, rc2;
};
static void misc_step(ll_task t, void *arg) {
    struct misc *m = arg;
    if (m->steps++ > 0) {
        CHECK_EQ_INT(ll_task_return(t, 2, NULL), 0);
        return;
    }
    switch (m->mode) {
    case AWAIT_SELF:
        m->rc = ll_task_await(t, t);
        break;
    case AWAIT_OTHER_LOOP:
    case AWAIT_DONE:
        m->rc = ll_task_await(t, m->other);
        break;
    case DO_NOTHING:
        break;
    case TWO_OUTCOMES:
        m->rc = ll_task_yield(t);
        m->rc2 = ll_task_return(t, 9, count_free);
        m->rc2 = m->rc2 == LL_ESTATE ? ll_task_raise(t, -1, NULL, 0, NULL) : m->rc2;
        break;
    case BAD_AWAIT_THEN_RETURN: /* a refused id does not use up the step */
        m->rc = ll_task_await(t, m->other);
        m->rc2 = ll_task_return(t, 3, NULL);
        break;
    }
}

static int task_error(ll_task t) {
    int code = 0;
    CHECK_EQ_INT(ll_future_state(t), LL_FINISHED);
    CHECK_EQ_INT(ll_future_exception(t, &code, NULL, NULL), 0);
    return code;
}

static void test_step_errors(void) {
    ll_loop other;
    ll_task t;
    CHECK_EQ_INT(ll_loop_new(&other), 0);
    for (int mode = AWAIT_SELF; mode <= BAD_AWAIT_THEN_RETURN; mode++) {
        struct misc m = {.mode = mode};
        nfree = 0;
        if (mode == AWAIT_OTHER_LOOP)
            CHECK_EQ_INT(ll_future_new(other, &m.other), 0);
        if (mode == AWAIT_DONE) {
            CHECK_EQ_INT(ll_future_new(good, &m.other), 0);
            CHECK_EQ_INT(ll_future_set_result(m.other, 1, NULL), 0);
        }
        if (mode == BAD_AWAIT_THEN_RETURN)
            m.other = good; /* a loop id, not a future */
        CHECK_EQ_INT(ll_task_new(good, misc_step, &m, &t), 0);
        CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
        if (mode == AWAIT_SELF || mode == AWAIT_OTHER_LOOP || mode == DO_NOTHING) {
            /* The task fails with LL_ESTATE (and so does the bad await). */
            if (mode != DO_NOTHING)
                CHECK_EQ_INT(m.rc, LL_ESTATE);
            CHECK_EQ_INT(task_error(t), LL_ESTATE);
            CHECK_EQ_INT(m.steps, 1);
        } else if (mode == BAD_AWAIT_THEN_RETURN) {
            CHECK_EQ_INT(m.rc, LL_EBADHANDLE);
            CHECK_EQ_INT(m.rc2, 0);
            CHECK_EQ_INT(ll_future_result(t, NULL), 0);
        } else {
            /* TWO_OUTCOMES: the yield stands, the second call is refused and
             * its value stays ours. AWAIT_DONE: woken in the next iteration. */
            CHECK_EQ_INT(m.rc, 0);
            if (mode == TWO_OUTCOMES) {
                CHECK_EQ_INT(m.rc2, LL_ESTATE);
                CHECK_EQ_INT(nfree, 0);
            }
            CHECK_EQ_INT(ll_future_state(t), LL_PENDING);
            CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
            CHECK_EQ_INT(m.steps, 2);
            CHECK_EQ_INT(ll_future_result(t, NULL), 0);
        }
        if (m.other != 0 && m.other != good)
            ll_release(m.other);
        ll_release(t);
    }
    ll_release(other);
    STILL_RUNS(good);
}

/* A future the host releases while a task awaits it: the loop still needs
 * it, so the next step can read its value, and the free comes after. */
struct holder {
    ll_future fut;
    int steps, rc, frees_seen;
    uintptr_t v;
};
static void holder_step(ll_task t, void *arg) {
    struct holder *h = arg;
    if (h->steps++ == 0) {
        CHECK_EQ_INT(ll_task_await(t, h->fut), 0);
        return;
    }
    h->rc = ll_future_result(h->fut, &h->v);
    h->frees_seen = nfree;
    CHECK_EQ_INT(ll_task_return(t, 0, NULL), 0);
}

static void test_awaited_value_outlives_release(void) {
    struct holder h = {.rc = 1, .frees_seen = -1};
    ll_task t;
    nfree = 0;
    CHECK_EQ_INT(ll_future_new(good, &h.fut), 0);
    CHECK_EQ_INT(ll_task_new(good, holder_step, &h, &t), 0);
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_future_set_result(h.fut, 0xF00D, count_free), 0);
    CHECK_EQ_INT(ll_release(h.fut), 0);
    CHECK_EQ_INT(ll_release(h.fut), LL_EBADHANDLE); /* our reference is gone */
    CHECK_EQ_INT(nfree, 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, t), 0);
    CHECK_EQ_INT(h.rc, 0);
    CHECK_EQ_INT(h.v, 0xF00D);
    CHECK_EQ_INT(h.frees_seen, 0);
    CHECK_EQ_INT(nfree, 1);
    CHECK_EQ_INT(last_freed, 0xF00D);
    CHECK_EQ_INT(ll_future_state(h.fut), LL_EBADHANDLE);
    ll_release(t);
}

/* ---- bad input ----------------------------------------------------------------- */

static void noop_step(ll_task t, void *arg) {
    (void)arg;
    ll_task_return(t, 0, NULL);
}

static void check_bad_task_id_at(uint64_t id, const char *file, int line) {
    ll_future out = 0;
    int frees = nfree;
    struct {
        const char *name;
        int rc;
    } r[] = {
        {"ll_task_await", ll_task_await(id, 0)},
        {"ll_task_yield", ll_task_yield(id)},
        {"ll_task_return", ll_task_return(id, 1, count_free)},
        {"ll_task_raise", ll_task_raise(id, -1, "m", 1, count_free)},
        {"ll_task_awaited", ll_task_awaited(id, &out)},
        {"ll_task_must_raise_cancel", ll_task_must_raise_cancel(id)},
        {"ll_task_cancel", ll_task_cancel(id, "m")},
        {"ll_task_uncancel", ll_task_uncancel(id)},
        {"ll_task_cancelling", ll_task_cancelling(id)},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        if (r[i].rc == LL_EBADHANDLE)
            check_passed++;
        else
            CHECK_FAIL_AT(file, line, "%s(0x%llx) = %d, want LL_EBADHANDLE", r[i].name,
                          (unsigned long long)id, r[i].rc);
    }
    if (out != 0 || nfree != frees)
        CHECK_FAIL_AT(file, line, "bad task id 0x%llx: out written or value freed", (unsigned long long)id);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_TASK_ID(id) check_bad_task_id_at((id), __FILE__, __LINE__)

static void check_bad_loop_at(uint64_t id, const char *file, int line) {
    ll_task out = 0, buf[2];
    int rc1 = ll_task_new(id, noop_step, NULL, &out);
    int rc2 = ll_current_task(id, &out);
    int rc3 = ll_all_tasks(id, buf, 2);
    if (rc1 == LL_EBADHANDLE && rc2 == LL_EBADHANDLE && rc3 == LL_EBADHANDLE && out == 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "bad loop 0x%llx: task_new %d, current_task %d, all_tasks %d",
                      (unsigned long long)id, rc1, rc2, rc3);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_LOOP(id) check_bad_loop_at((id), __FILE__, __LINE__)

static void test_bad_input(void) {
    ll_future plain;
    ll_task live, stale;
    ll_handle h;
    ll_loop dead;
    int ran = 0;
    CHECK_EQ_INT(ll_future_new(good, &plain), 0);
    CHECK_EQ_INT(ll_task_new(good, noop_step, NULL, &stale), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, stale), 0);
    CHECK_EQ_INT(ll_release(stale), 0);
    CHECK_EQ_INT(ll_call_later(good, 3600, count_cb, &ran, &h), 0);
    CHECK_EQ_INT(ll_loop_new(&dead), 0);
    CHECK_EQ_INT(ll_release(dead), 0);

    CHECK_BAD_TASK_ID(0);
    CHECK_BAD_TASK_ID(stale);
    CHECK_BAD_TASK_ID(plain); /* a plain future is not a task */
    CHECK_BAD_TASK_ID(good);  /* a loop id */
    CHECK_BAD_TASK_ID(h);
    CHECK_BAD_TASK_ID(plain ^ (1ull << 32));
    CHECK_BAD_TASK_ID(UINT64_MAX);

    CHECK_BAD_LOOP(0);
    CHECK_BAD_LOOP(dead);
    CHECK_BAD_LOOP(plain);
    CHECK_BAD_LOOP(h);
    CHECK_BAD_LOOP(good + 0x100000);

    /* NULL step, NULL out pointers, code 0; a closed loop. */
    ll_task out = 0;
    CHECK_EQ_INT(ll_task_new(good, NULL, NULL, &out), LL_EINVAL);
    CHECK_EQ_INT(out, 0);
    CHECK_EQ_INT(ll_task_new(good, noop_step, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_current_task(good, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_all_tasks(good, NULL, 4), LL_EINVAL);
    CHECK_EQ_INT(ll_all_tasks(good, NULL, 0), 0); /* nothing left from the above */
    CHECK_EQ_INT(ll_task_new(good, noop_step, NULL, &live), 0);
    CHECK_EQ_INT(ll_task_awaited(live, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_task_raise(live, 0, NULL, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_task_await(live, 0), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_task_await(live, stale), LL_EBADHANDLE);
    STILL_RUNS(good); /* also runs live's first step */
    CHECK_EQ_INT(ll_future_state(live), LL_FINISHED);
    ll_release(live);
    ll_loop closed;
    CHECK_EQ_INT(ll_loop_new(&closed), 0);
    CHECK_EQ_INT(ll_loop_close(closed), 0);
    CHECK_EQ_INT(ll_task_new(closed, noop_step, NULL, &out), LL_ECLOSED);
    CHECK_EQ_INT(out, 0);
    ll_release(closed);
    STILL_RUNS(good);

    CHECK_EQ_INT(ll_future_state(plain), LL_PENDING);
    CHECK_EQ_INT(ran, 0);
    ll_release(plain);
    ll_release(h);
}

int main(void) {
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_hello_world_trace);
    RUN_TEST(test_bare_yield);
    RUN_TEST(test_step_errors);
    RUN_TEST(test_awaited_value_outlives_release);
    RUN_TEST(test_bad_input);
    ll_release(good);
    return CHECK_REPORT();
}
