/* SPDX-License-Identifier: MIT */
/* The executor: ll_run_in_executor on the loop's bounded pool of worker
 * threads, results delivered on the loop thread, errors through *err,
 * ll_loop_set_executor_workers, ll_loop_shutdown_default_executor, closing
 * a loop with work in flight, and the bad-input table. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

static ll_loop good;
static pthread_t main_thread;

/* ---- work functions (they run on worker threads) -------------------------- */

static int on_main_thread_count; /* jobs that ran on the loop's thread (must stay 0) */

static uintptr_t double_it(void *arg, int *err) {
    (void)err;
    if (pthread_equal(pthread_self(), main_thread))
        __atomic_add_fetch(&on_main_thread_count, 1, __ATOMIC_SEQ_CST);
    return (uintptr_t)arg * 2;
}

static uintptr_t fail_42(void *arg, int *err) {
    (void)arg;
    *err = -42;
    return 1234; /* ignored: *err wins */
}

/* Sleeps arg milliseconds, tracking how many jobs run at once. */
static int running_now, running_max, finished_jobs;
static uintptr_t sleep_ms(void *arg, int *err) {
    (void)err;
    int now = __atomic_add_fetch(&running_now, 1, __ATOMIC_SEQ_CST);
    int max = __atomic_load_n(&running_max, __ATOMIC_SEQ_CST);
    while (now > max && !__atomic_compare_exchange_n(&running_max, &max, now, 0, __ATOMIC_SEQ_CST,
                                                     __ATOMIC_SEQ_CST))
        ;
    /* The whole time: a signal (the Go runtime's preemption signal on
     * this executor thread, see ll_work_fn) may cut a sleep short. */
    struct timespec left = {0, (long)(uintptr_t)arg * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
    __atomic_sub_fetch(&running_now, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&finished_jobs, 1, __ATOMIC_SEQ_CST);
    return (uintptr_t)arg;
}

static void reset_counters(void) {
    __atomic_store_n(&running_now, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&running_max, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&finished_jobs, 0, __ATOMIC_SEQ_CST);
}

/* Waits (up to 5 s) until n jobs have finished. */
static int wait_finished(int n) {
    for (int i = 0; i < 500 && __atomic_load_n(&finished_jobs, __ATOMIC_SEQ_CST) < n; i++)
        usleep(10000);
    return __atomic_load_n(&finished_jobs, __ATOMIC_SEQ_CST);
}

static int delivered_off_main;
static void on_job_done(ll_future f, void *arg) {
    (void)f;
    (void)arg;
    if (!pthread_equal(pthread_self(), main_thread))
        delivered_off_main++;
}

/* Submits n sleep_ms(ms) jobs on loop and runs until they are all done. */
static double run_sleepers(ll_loop loop, int n, int ms) {
    ll_future f[16], g;
    double t0 = ll_loop_time(loop);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(ll_run_in_executor(loop, sleep_ms, (void *)(uintptr_t)ms, &f[i]), 0);
    CHECK_EQ_INT(ll_gather(loop, (size_t)n, f, 0, &g), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(loop, g), 0);
    CHECK_EQ_INT(ll_future_result(g, NULL), 0);
    ll_release(g);
    for (int i = 0; i < n; i++)
        ll_release(f[i]);
    return ll_loop_time(loop) - t0;
}

/* ---- tests ------------------------------------------------------------------ */

#define NJOBS 1000
static void test_thousand_jobs(void) {
    static ll_future f[NJOBS];
    ll_future g;
    on_main_thread_count = delivered_off_main = 0;
    for (int i = 0; i < NJOBS; i++)
        CHECK_EQ_INT(ll_run_in_executor(good, double_it, (void *)(uintptr_t)i, &f[i]), 0);
    for (int i = 0; i < NJOBS; i += 100)
        CHECK_EQ_INT(ll_future_add_done_callback(f[i], on_job_done, NULL), 0);
    CHECK_EQ_INT(ll_gather(good, NJOBS, f, 0, &g), 0);
    /* No timer is pending: only the workers' posts can wake the loop. */
    CHECK_EQ_INT(ll_loop_run_until_complete(good, g), 0);
    uintptr_t n = 0;
    CHECK_EQ_INT(ll_future_result(g, &n), 0);
    CHECK_EQ_INT(n, NJOBS);
    int wrong = 0;
    for (int i = 0; i < NJOBS; i++) {
        uintptr_t v = 0;
        if (ll_future_result(f[i], &v) != 0 || v != (uintptr_t)i * 2)
            wrong++;
        ll_release(f[i]);
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(on_main_thread_count, 0);
    ll_loop_run_once(good, LL_RUN_NOWAIT); /* the done callbacks */
    CHECK_EQ_INT(delivered_off_main, 0);
    ll_release(g);
}

static void test_job_error(void) {
    ll_future f;
    int code = 0;
    CHECK_EQ_INT(ll_run_in_executor(good, fail_42, NULL, &f), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, f), 0);
    CHECK_EQ_INT(ll_future_state(f), LL_FINISHED);
    CHECK_EQ_INT(ll_future_result(f, NULL), -42);
    CHECK_EQ_INT(ll_future_exception(f, &code, NULL, NULL), 0);
    CHECK_EQ_INT(code, -42);
    ll_release(f);

    /* Cancelled before the work finished: the work still runs, its value
     * is ignored and the future stays cancelled. */
    reset_counters();
    CHECK_EQ_INT(ll_run_in_executor(good, sleep_ms, (void *)(uintptr_t)20, &f), 0);
    CHECK_EQ_INT(ll_future_cancel(f, NULL), 1);
    CHECK_EQ_INT(wait_finished(1), 1);
    for (int i = 0; i < 5; i++) {
        usleep(2000);
        CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    }
    CHECK_EQ_INT(ll_future_state(f), LL_CANCELLED);
    ll_release(f);
}

static void test_workers_bound(void) {
    ll_loop l;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, -1), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, 1025), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, 1024), 0);
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, 1), 0);
    /* One worker: jobs run one at a time. */
    reset_counters();
    double took = run_sleepers(l, 4, 10);
    CHECK_EQ_INT(running_max, 1);
    CHECK(took >= 0.04 - 1e-3);
    /* Two workers: never more than two at once. */
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, 2), 0);
    reset_counters();
    took = run_sleepers(l, 6, 20);
    CHECK(running_max <= 2);
    CHECK(running_max >= 1);
    CHECK(took >= 0.06 - 1e-3);
    ll_release(l);

    /* The default, min(32, ncpu + 4), is at least 5: eight sleepers overlap. */
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    reset_counters();
    run_sleepers(l, 8, 50);
    CHECK(running_max > 2);
    CHECK(running_max <= 32);
    ll_release(l);
}

static void test_shutdown(void) {
    ll_loop l;
    ll_future f[3], sd, late = 0;
    uintptr_t v = 0;
    /* Never used: the shutdown future is finished at once. */
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_shutdown_default_executor(l, &sd), 0);
    CHECK_EQ_INT(ll_future_state(sd), LL_FINISHED);
    ll_release(sd);
    ll_release(l);

    /* With work queued and running: it finishes once all of it is done,
     * and the jobs' own futures are resolved (not dropped). */
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, 1), 0);
    reset_counters();
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_run_in_executor(l, sleep_ms, (void *)(uintptr_t)(10 + i), &f[i]), 0);
    CHECK_EQ_INT(ll_loop_shutdown_default_executor(l, &sd), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(l, sd), 0);
    CHECK_EQ_INT(ll_future_result(sd, NULL), 0);
    CHECK_EQ_INT(finished_jobs, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(ll_future_result(f[i], &v), 0);
        CHECK_EQ_INT(v, 10 + i);
        ll_release(f[i]);
    }
    /* Later jobs are refused. */
    CHECK_EQ_INT(ll_run_in_executor(l, double_it, NULL, &late), LL_ESTATE);
    CHECK_EQ_INT(late, 0);
    STILL_RUNS(l);
    ll_release(sd);
    ll_release(l);
}

static void test_close_with_work_in_flight(void) {
    for (int how = 0; how < 2; how++) {
        ll_loop l;
        ll_future f[4];
        CHECK_EQ_INT(ll_loop_new(&l), 0);
        CHECK_EQ_INT(ll_loop_set_executor_workers(l, 2), 0);
        reset_counters();
        for (int i = 0; i < 4; i++)
            CHECK_EQ_INT(ll_run_in_executor(l, sleep_ms, (void *)(uintptr_t)50, &f[i]), 0);
        usleep(5000); /* let the first two start */
        if (how == 0) {
            /* Close (not release): the work finishes and its outcome is
             * dropped; the futures never resolve. */
            CHECK_EQ_INT(ll_loop_close(l), 0);
            ll_future late = 0;
            CHECK_EQ_INT(ll_run_in_executor(l, double_it, NULL, &late), LL_ECLOSED);
            CHECK_EQ_INT(ll_loop_set_executor_workers(l, 4), LL_ECLOSED);
            CHECK_EQ_INT(ll_loop_shutdown_default_executor(l, &late), LL_ECLOSED);
            CHECK_EQ_INT(late, 0);
            CHECK_EQ_INT(wait_finished(4), 4);
            usleep(20000);
            for (int i = 0; i < 4; i++) {
                CHECK_EQ_INT(ll_future_state(f[i]), LL_PENDING);
                CHECK_EQ_INT(ll_release(f[i]), 0);
            }
            CHECK_EQ_INT(ll_release(l), 0);
        } else {
            /* Release everything at once, futures first. */
            for (int i = 0; i < 4; i++)
                CHECK_EQ_INT(ll_release(f[i]), 0);
            CHECK_EQ_INT(ll_release(l), 0);
            CHECK_EQ_INT(wait_finished(4), 4);
            usleep(20000);
        }
        /* Nothing leaks: once the host has released them, the futures are
         * gone (the dropped jobs hold no reference), and a second release
         * is refused. */
        for (int i = 0; i < 4; i++) {
            CHECK_EQ_INT(ll_future_state(f[i]), LL_EBADHANDLE);
            CHECK_EQ_INT(ll_release(f[i]), LL_EBADHANDLE);
        }
    }
    STILL_RUNS(good);
}

/* ---- bad input ---------------------------------------------------------------- */

static void check_bad_loop_at(uint64_t id, const char *file, int line) {
    ll_future out = 0;
    int rc1 = ll_run_in_executor(id, double_it, NULL, &out);
    int rc2 = ll_loop_set_executor_workers(id, 4);
    int rc3 = ll_loop_shutdown_default_executor(id, &out);
    if (rc1 == LL_EBADHANDLE && rc2 == LL_EBADHANDLE && rc3 == LL_EBADHANDLE && out == 0)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "bad loop 0x%llx: run_in_executor %d, set_workers %d, shutdown %d",
                      (unsigned long long)id, rc1, rc2, rc3);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_LOOP(id) check_bad_loop_at((id), __FILE__, __LINE__)

static void test_bad_input(void) {
    ll_loop dead;
    ll_future f, out = 0;
    ll_handle h;
    int ran = 0;
    CHECK_EQ_INT(ll_loop_new(&dead), 0);
    CHECK_EQ_INT(ll_release(dead), 0);
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_call_later(good, 3600, count_cb, &ran, &h), 0);
    CHECK_BAD_LOOP(0);
    CHECK_BAD_LOOP(dead);
    CHECK_BAD_LOOP(f); /* a future id as a loop */
    CHECK_BAD_LOOP(h);
    CHECK_BAD_LOOP(good ^ (1ull << 32));
    CHECK_BAD_LOOP(UINT64_MAX);

    CHECK_EQ_INT(ll_run_in_executor(good, NULL, NULL, &out), LL_EINVAL);
    CHECK_EQ_INT(ll_run_in_executor(good, double_it, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_shutdown_default_executor(good, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_set_executor_workers(good, 0), LL_EINVAL);
    CHECK_EQ_INT(out, 0);
    STILL_RUNS(good);
    /* The executor of `good` still works after all that. */
    CHECK_EQ_INT(ll_run_in_executor(good, double_it, (void *)21, &out), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(good, out), 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(out, &v), 0);
    CHECK_EQ_INT(v, 42);
    ll_release(out);
    ll_release(f);
    ll_release(h);
    CHECK_EQ_INT(ran, 0);
}

int main(void) {
    main_thread = pthread_self();
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_thousand_jobs);
    RUN_TEST(test_job_error);
    RUN_TEST(test_workers_bound);
    RUN_TEST(test_shutdown);
    RUN_TEST(test_close_with_work_in_flight);
    RUN_TEST(test_bad_input);
    ll_release(good);
    return CHECK_REPORT();
}
