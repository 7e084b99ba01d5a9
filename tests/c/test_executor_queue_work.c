/* SPDX-License-Identifier: MIT */
/* ll_queue_work, libuv's uv_queue_work: work(arg) on an executor thread,
 * then after(loop, arg) on the loop thread, each exactly once; after never
 * runs for a loop closed first (the work still does); the refusals (NULL
 * work or after, bad loop ids, closed loop, executor shut down, another
 * thread in debug mode), each followed by a check that the loop still runs
 * a normal callback. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

static ll_loop good;
static pthread_t main_thread;

static void stop_cb(ll_loop loop, void *arg) {
    *(int *)arg = 1;
    ll_loop_stop(loop);
}

/* ---- many jobs ------------------------------------------------------------ */

struct job {
    int index;
    int work_runs;     /* atomic: written on a worker */
    int work_on_main;  /* atomic */
    uintptr_t result;  /* written by work, read by after */
    int after_runs;    /* loop thread only */
    int after_early;   /* after ran before its work finished */
    int after_off_main;
    ll_loop after_loop;
};

#define NJOBS 10000
static struct job jobs[NJOBS];
static int afters_done;
static ll_loop many_loop;

static void job_work(void *arg) {
    struct job *j = arg;
    if (pthread_equal(pthread_self(), main_thread))
        __atomic_add_fetch(&j->work_on_main, 1, __ATOMIC_SEQ_CST);
    j->result = (uintptr_t)j->index * 3;
    __atomic_add_fetch(&j->work_runs, 1, __ATOMIC_SEQ_CST);
}

static void job_after(ll_loop loop, void *arg) {
    struct job *j = arg;
    j->after_runs++;
    j->after_loop = loop;
    if (__atomic_load_n(&j->work_runs, __ATOMIC_SEQ_CST) != 1 || j->result != (uintptr_t)j->index * 3)
        j->after_early++;
    if (!pthread_equal(pthread_self(), main_thread))
        j->after_off_main++;
    if (++afters_done == NJOBS)
        ll_loop_stop(many_loop);
}

static void test_ten_thousand_jobs(void) {
    many_loop = good;
    afters_done = 0;
    for (int i = 0; i < NJOBS; i++) {
        jobs[i] = (struct job){.index = i};
        CHECK_EQ_INT(ll_queue_work(good, job_work, job_after, &jobs[i]), 0);
    }
    int timed_out = 0;
    ll_handle watchdog;
    CHECK_EQ_INT(ll_call_later(good, 30, stop_cb, &timed_out, &watchdog), 0);
    CHECK_EQ_INT(ll_loop_run_forever(good), 0);
    CHECK_EQ_INT(timed_out, 0);
    ll_handle_cancel(watchdog);
    ll_release(watchdog);
    for (int i = 0; i < 3; i++) /* nothing more may run */
        CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    int bad_work = 0, bad_after = 0, on_main = 0, off_main = 0, early = 0, wrong_loop = 0;
    for (int i = 0; i < NJOBS; i++) {
        bad_work += jobs[i].work_runs != 1;
        bad_after += jobs[i].after_runs != 1;
        on_main += jobs[i].work_on_main;
        off_main += jobs[i].after_off_main;
        early += jobs[i].after_early;
        wrong_loop += jobs[i].after_loop != good;
    }
    CHECK_EQ_INT(afters_done, NJOBS);
    CHECK_EQ_INT(bad_work, 0);
    CHECK_EQ_INT(bad_after, 0);
    CHECK_EQ_INT(on_main, 0);   /* work never on the loop thread */
    CHECK_EQ_INT(off_main, 0);  /* after always on it */
    CHECK_EQ_INT(early, 0);     /* after sees its work finished */
    CHECK_EQ_INT(wrong_loop, 0);
    STILL_RUNS(good);
}

/* With one worker, afters come back in submission order. */
static int order_log[100];
static int norder;
static void nop_work(void *arg) { (void)arg; }
static void log_after(ll_loop loop, void *arg) {
    (void)loop;
    if (norder < 100)
        order_log[norder++] = (int)(intptr_t)arg;
}

static void test_one_worker_keeps_order(void) {
    ll_loop l;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_set_executor_workers(l, 1), 0);
    norder = 0;
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(ll_queue_work(l, nop_work, log_after, (void *)(intptr_t)i), 0);
    ll_handle watchdog;
    int timed_out = 0;
    CHECK_EQ_INT(ll_call_later(l, 10, stop_cb, &timed_out, &watchdog), 0);
    for (int i = 0; i < 10000 && norder < 100 && !timed_out; i++)
        CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(norder, 100);
    int misplaced = 0;
    for (int i = 0; i < norder; i++)
        misplaced += order_log[i] != i;
    CHECK_EQ_INT(misplaced, 0);
    ll_release(watchdog);
    STILL_RUNS(l);
    CHECK_EQ_INT(ll_release(l), 0);
}

/* ---- refusals ----------------------------------------------------------------- */

static int never_work_runs, never_after_runs;
static void never_work(void *arg) {
    (void)arg;
    __atomic_add_fetch(&never_work_runs, 1, __ATOMIC_SEQ_CST);
}
static void never_after(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    never_after_runs++;
}

static void check_bad_loop_at(uint64_t id, const char *file, int line) {
    int rc = ll_queue_work(id, never_work, never_after, NULL);
    if (rc == LL_EBADHANDLE)
        check_passed++;
    else
        CHECK_FAIL_AT(file, line, "ll_queue_work(bad loop 0x%llx) = %d", (unsigned long long)id, rc);
    still_runs_at(good, file, line);
}
#define CHECK_BAD_LOOP(id) check_bad_loop_at((id), __FILE__, __LINE__)

static void test_bad_input(void) {
    ll_loop dead;
    ll_future f;
    ll_handle h;
    int ran = 0;
    never_work_runs = never_after_runs = 0;
    CHECK_EQ_INT(ll_queue_work(good, NULL, never_after, NULL), LL_EINVAL);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_queue_work(good, never_work, NULL, NULL), LL_EINVAL);
    STILL_RUNS(good);
    CHECK_EQ_INT(ll_queue_work(good, NULL, NULL, NULL), LL_EINVAL);
    STILL_RUNS(good);

    CHECK_EQ_INT(ll_loop_new(&dead), 0);
    CHECK_EQ_INT(ll_release(dead), 0);
    CHECK_EQ_INT(ll_future_new(good, &f), 0);
    CHECK_EQ_INT(ll_call_later(good, 3600, count_cb, &ran, &h), 0);
    CHECK_BAD_LOOP(0);
    CHECK_BAD_LOOP(dead);
    CHECK_BAD_LOOP(f); /* a future id as a loop */
    CHECK_BAD_LOOP(h); /* a handle id as a loop */
    CHECK_BAD_LOOP(good ^ (1ull << 32));
    CHECK_BAD_LOOP(UINT64_MAX);

    usleep(20000); /* a wrongly accepted job would have run by now */
    CHECK_EQ_INT(ll_loop_run_once(good, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(never_work_runs, 0);
    CHECK_EQ_INT(never_after_runs, 0);
    CHECK_EQ_INT(ran, 0);
    ll_release(f);
    ll_handle_cancel(h);
    ll_release(h);
    STILL_RUNS(good);
}

static void test_closed_loop(void) {
    ll_loop l;
    never_work_runs = never_after_runs = 0;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_close(l), 0);
    CHECK_EQ_INT(ll_queue_work(l, never_work, never_after, NULL), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(l), 0);
    CHECK_EQ_INT(ll_queue_work(l, never_work, never_after, NULL), LL_EBADHANDLE);
    usleep(10000);
    CHECK_EQ_INT(never_work_runs, 0);
    CHECK_EQ_INT(never_after_runs, 0);
    STILL_RUNS(good);
}

/* Sleeps 20 ms (arg unused) and counts how many jobs finished. */
static int slept_jobs;
static void sleep_20ms(void *arg) {
    (void)arg;
    usleep(20000);
    __atomic_add_fetch(&slept_jobs, 1, __ATOMIC_SEQ_CST);
}
static void quick_work(void *arg) {
    (void)arg;
    __atomic_add_fetch(&slept_jobs, 1, __ATOMIC_SEQ_CST);
}
static int afters_ran;
static void count_after(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    afters_ran++;
}

/* Waits (up to 5 s) until n jobs have finished. */
static int wait_slept(int n) {
    for (int i = 0; i < 500 && __atomic_load_n(&slept_jobs, __ATOMIC_SEQ_CST) < n; i++)
        usleep(10000);
    return __atomic_load_n(&slept_jobs, __ATOMIC_SEQ_CST);
}

static void test_after_shutdown(void) {
    ll_loop l;
    ll_future sd;
    __atomic_store_n(&slept_jobs, 0, __ATOMIC_SEQ_CST);
    afters_ran = 0;
    never_work_runs = never_after_runs = 0;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_queue_work(l, sleep_20ms, count_after, NULL), 0);
    CHECK_EQ_INT(ll_loop_shutdown_default_executor(l, &sd), 0);
    CHECK_EQ_INT(ll_queue_work(l, never_work, never_after, NULL), LL_ESTATE);
    STILL_RUNS(l);
    CHECK_EQ_INT(ll_loop_run_until_complete(l, sd), 0);
    CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_NOWAIT), 0);
    /* The job queued before the shutdown ran both halves. */
    CHECK_EQ_INT(slept_jobs, 1);
    CHECK_EQ_INT(afters_ran, 1);
    CHECK_EQ_INT(ll_queue_work(l, never_work, never_after, NULL), LL_ESTATE);
    STILL_RUNS(l);
    CHECK_EQ_INT(never_work_runs, 0);
    CHECK_EQ_INT(never_after_runs, 0);
    ll_release(sd);
    CHECK_EQ_INT(ll_release(l), 0);

    /* A loop that never used its executor refuses work after shutdown too. */
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_shutdown_default_executor(l, &sd), 0);
    CHECK_EQ_INT(ll_queue_work(l, never_work, never_after, NULL), LL_ESTATE);
    STILL_RUNS(l);
    ll_release(sd);
    CHECK_EQ_INT(ll_release(l), 0);
    STILL_RUNS(good);
}

/* Closing or releasing a loop with work queued, running, and finished but
 * undelivered: no crash, the work finishes, after never runs. */
static void test_release_with_work_in_flight(void) {
    for (int how = 0; how < 2; how++) {
        ll_loop l;
        __atomic_store_n(&slept_jobs, 0, __ATOMIC_SEQ_CST);
        afters_ran = 0;
        CHECK_EQ_INT(ll_loop_new(&l), 0);
        CHECK_EQ_INT(ll_loop_set_executor_workers(l, 2), 0);
        for (int i = 0; i < 2; i++)
            CHECK_EQ_INT(ll_queue_work(l, quick_work, count_after, NULL), 0);
        CHECK_EQ_INT(wait_slept(2), 2); /* done, their afters not delivered */
        for (int i = 0; i < 6; i++)
            CHECK_EQ_INT(ll_queue_work(l, sleep_20ms, count_after, NULL), 0);
        usleep(5000); /* let the first two start */
        if (how == 0) {
            CHECK_EQ_INT(ll_loop_close(l), 0);
            CHECK_EQ_INT(ll_queue_work(l, never_work, never_after, NULL), LL_ECLOSED);
            CHECK_EQ_INT(wait_slept(8), 8);
            usleep(20000);
            CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_NOWAIT), LL_ECLOSED);
            CHECK_EQ_INT(ll_release(l), 0);
        } else {
            CHECK_EQ_INT(ll_release(l), 0);
            CHECK_EQ_INT(wait_slept(8), 8);
            usleep(20000);
        }
        CHECK_EQ_INT(afters_ran, 0);
        CHECK_EQ_INT(ll_queue_work(l, never_work, never_after, NULL), LL_EBADHANDLE);
        STILL_RUNS(good);
    }
    CHECK_EQ_INT(never_after_runs, 0);
}

/* Debug mode: a call from a thread that does not run the loop. */
struct wrong_thread_call {
    ll_loop loop;
    int rc;
};
static void *queue_from_thread(void *arg) {
    struct wrong_thread_call *c = arg;
    c->rc = ll_queue_work(c->loop, never_work, never_after, NULL);
    return NULL;
}
static void call_from_other_thread(ll_loop loop, void *arg) {
    struct wrong_thread_call *c = arg;
    pthread_t th;
    c->loop = loop;
    if (pthread_create(&th, NULL, queue_from_thread, c) == 0)
        pthread_join(th, NULL);
    ll_loop_stop(loop);
}

static void test_wrong_thread_in_debug_mode(void) {
    ll_loop l;
    struct wrong_thread_call c = {0, 12345};
    never_work_runs = never_after_runs = 0;
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_set_debug(l, 1), 0);
    CHECK_EQ_INT(ll_call_soon(l, call_from_other_thread, &c, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(l), 0);
    CHECK_EQ_INT(c.rc, LL_EWRONGTHREAD);
    usleep(10000);
    STILL_RUNS(l);
    CHECK_EQ_INT(never_work_runs, 0);
    CHECK_EQ_INT(never_after_runs, 0);
    CHECK_EQ_INT(ll_release(l), 0);
}

int main(void) {
    main_thread = pthread_self();
    if (ll_loop_new(&good) != 0)
        return 1;
    RUN_TEST(test_ten_thousand_jobs);
    RUN_TEST(test_one_worker_keeps_order);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_closed_loop);
    RUN_TEST(test_after_shutdown);
    RUN_TEST(test_release_with_work_in_flight);
    RUN_TEST(test_wrong_thread_in_debug_mode);
    ll_release(good);
    return CHECK_REPORT();
}
