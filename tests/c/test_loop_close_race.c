/* SPDX-License-Identifier: MIT */
/* Closing a loop while executor work runs and other threads post to it:
 * 20 rounds of 48 ll_run_in_executor jobs and 16 ll_queue_work jobs, with
 * 8 threads calling ll_call_soon_threadsafe all along, then ll_loop_close
 * (or ll_release straight away) while jobs are still running. Nothing may
 * crash or touch freed memory, every work item still runs to completion
 * (the documented contract: the host frees what work reads once the work
 * has returned), no callback or after runs once the loop is closed, and a post returns 0 before the close and LL_ECLOSED or
 * LL_EBADHANDLE after it, never anything else. Run it under valgrind or
 * the ASan build (make test-asan) to see the memory side. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define ROUNDS 20
#define JOBS 48
#define QUEUED 16
#define POSTERS 8
#define WORKERS 4

/* One round's work state, freed as soon as the round's running work has
 * returned: the loop must never call work that reads it after that. */
struct round {
    int gate;    /* atomic: running work waits for it */
    int started; /* atomic: work functions entered */
    int done;    /* atomic: work functions returned */
};

static int total_started;   /* atomic: work functions entered, all rounds */
static int closed_flag;     /* atomic: the loop of this round is closed */
static int ran_after_close; /* atomic: callbacks run after the close */
static int posts_ok, posts_refused, posts_bad;

static void note_if_closed(void) {
    if (__atomic_load_n(&closed_flag, __ATOMIC_SEQ_CST))
        __atomic_add_fetch(&ran_after_close, 1, __ATOMIC_SEQ_CST);
}

static void work_body(struct round *r) {
    __atomic_add_fetch(&total_started, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&r->started, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&r->gate, __ATOMIC_SEQ_CST))
        usleep(200);
    __atomic_add_fetch(&r->done, 1, __ATOMIC_SEQ_CST);
}

static uintptr_t gated_job(void *arg, int *err) {
    (void)err;
    work_body(arg);
    return 1;
}

static void gated_queued(void *arg) { work_body(arg); }

static void after_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    note_if_closed();
}

static void posted_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    note_if_closed();
}

struct poster {
    ll_loop loop;
    int stop; /* atomic */
};

/* Posts until told to stop; counts what each post returned. */
static void *poster_main(void *arg) {
    struct poster *p = arg;
    while (!__atomic_load_n(&p->stop, __ATOMIC_SEQ_CST)) {
        int rc = ll_call_soon_threadsafe(p->loop, posted_cb, NULL);
        if (rc == 0)
            __atomic_add_fetch(&posts_ok, 1, __ATOMIC_SEQ_CST);
        else if (rc == LL_ECLOSED || rc == LL_EBADHANDLE)
            __atomic_add_fetch(&posts_refused, 1, __ATOMIC_SEQ_CST);
        else
            __atomic_add_fetch(&posts_bad, 1, __ATOMIC_SEQ_CST);
        usleep(20); /* 8 posters on a 2-core machine: leave the loop some CPU */
    }
    return NULL;
}

static int wait_count(int *p, int want) {
    for (int i = 0; i < 2000 && __atomic_load_n(p, __ATOMIC_SEQ_CST) < want; i++)
        usleep(1000);
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* One round: WORKERS work functions running (blocked on the gate), the
 * rest queued, posters posting; close or release the loop; open the gate.
 * All the work still runs (as documented), the afters never do, and the
 * round's memory is freed once the last work item has returned. */
static void run_round(int round) {
    ll_loop loop;
    ll_future futs[JOBS];
    struct poster p = {0};
    pthread_t th[POSTERS];
    struct round *r = calloc(1, sizeof *r);

    __atomic_store_n(&closed_flag, 0, __ATOMIC_SEQ_CST);
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_set_executor_workers(loop, WORKERS), 0);
    p.loop = loop;
    for (int i = 0; i < POSTERS; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, poster_main, &p), 0);
    for (int i = 0; i < QUEUED / 2; i++)
        CHECK_EQ_INT(ll_queue_work(loop, gated_queued, after_cb, r), 0);
    for (int i = 0; i < JOBS; i++)
        CHECK_EQ_INT(ll_run_in_executor(loop, gated_job, r, &futs[i]), 0);
    for (int i = QUEUED / 2; i < QUEUED; i++)
        CHECK_EQ_INT(ll_queue_work(loop, gated_queued, after_cb, r), 0);
    /* Every worker holds one work item; posts are delivered meanwhile. */
    CHECK_EQ_INT(wait_count(&r->started, WORKERS), WORKERS);
    for (int i = 0; i < 3 + round % 4; i++) {
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
        usleep(300);
    }
    if (round % 3 == 0)
        for (int i = 0; i < JOBS; i += 2)
            ll_release(futs[i]); /* some futures released before the close */

    __atomic_store_n(&closed_flag, 1, __ATOMIC_SEQ_CST);
    if (round % 2 == 0)
        CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_release(loop), 0); /* odd rounds: release an open loop */
    __atomic_store_n(&r->gate, 1, __ATOMIC_SEQ_CST); /* running work returns */
    CHECK_EQ_INT(wait_count(&r->done, JOBS + QUEUED), JOBS + QUEUED);
    usleep(3000); /* posters keep posting to the released loop */
    CHECK_EQ_INT(__atomic_load_n(&total_started, __ATOMIC_SEQ_CST), (round + 1) * (JOBS + QUEUED));
    free(r); /* every work item has returned: nothing reads r any more */
    __atomic_store_n(&p.stop, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < POSTERS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < JOBS; i++)
        if (round % 3 != 0 || i % 2 != 0)
            ll_release(futs[i]);
}

static uintptr_t triple(void *arg, int *err) {
    (void)err;
    return (uintptr_t)arg * 3;
}

static void test_close_while_jobs_run_and_threads_post(void) {
    for (int round = 0; round < ROUNDS; round++)
        run_round(round);
    usleep(20000); /* outcomes of the last round reach their dead loop */
    CHECK_EQ_INT(ran_after_close, 0);
    CHECK_EQ_INT(posts_bad, 0);
    CHECK(posts_ok > 0);
    CHECK(posts_refused > 0);

    /* The library still works: a new loop runs a job. */
    ll_loop loop;
    ll_future f;
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_run_in_executor(loop, triple, (void *)(uintptr_t)3, &f), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(loop, f), 0);
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    CHECK_EQ_INT(v, 9);
    ll_release(f);
    CHECK_EQ_INT(ll_release(loop), 0);
}

int main(void) {
    RUN_TEST(test_close_while_jobs_run_and_threads_post);
    return CHECK_REPORT();
}
