/* SPDX-License-Identifier: MIT */
/* Threads: ll_call_soon_threadsafe from many pthreads while the loop is
 * blocked in poll (every callback runs exactly once, in each thread's post
 * order), and ll_loop_wakeup. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define NTHREADS 8
#define PER_THREAD 10000

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- 8 threads x 10,000 posts ------------------------------------------ */

struct stress {
    ll_loop loop;
    pthread_t threads[NTHREADS];
    atomic_int go;              /* threads spin until the loop is blocked */
    atomic_int post_errors;
    unsigned char seen[NTHREADS][PER_THREAD]; /* run count of each post */
    int next[NTHREADS];         /* next expected sequence number per thread */
    int out_of_order;
    int total;
    int timed_out;
};

static struct stress st;

/* The posted callback: arg encodes (thread, seq). Runs on the loop thread. */
static void posted_cb(ll_loop loop, void *arg) {
    uintptr_t v = (uintptr_t)arg;
    int t = (int)(v / PER_THREAD), i = (int)(v % PER_THREAD);
    if (st.seen[t][i] < 255)
        st.seen[t][i]++;
    if (st.next[t] != i)
        st.out_of_order++;
    st.next[t] = i + 1;
    if (++st.total == NTHREADS * PER_THREAD)
        ll_loop_stop(loop);
}

static void *poster(void *arg) {
    int t = (int)(intptr_t)arg;
    while (!atomic_load(&st.go))
        usleep(100);
    for (int i = 0; i < PER_THREAD; i++) {
        int rc = ll_call_soon_threadsafe(st.loop, posted_cb, (void *)(uintptr_t)(t * PER_THREAD + i));
        if (rc != 0)
            atomic_fetch_add(&st.post_errors, 1);
        if (i % 1000 == 999)
            usleep(200); /* let the loop drain and block again now and then */
    }
    return NULL;
}

/* Runs on the loop thread from a 20 ms timer. Afterwards the loop has
 * nothing to do but the 30 s safety timer, so it blocks in poll and only the
 * threads' posts can wake it. */
static void release_threads_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    atomic_store(&st.go, 1);
}

static void safety_cb(ll_loop loop, void *arg) {
    (void)arg;
    st.timed_out = 1;
    ll_loop_stop(loop);
}

static void test_threadsafe_stress(void) {
    CHECK_EQ_INT(ll_loop_new(&st.loop), 0);
    for (int t = 0; t < NTHREADS; t++)
        CHECK_EQ_INT(pthread_create(&st.threads[t], NULL, poster, (void *)(intptr_t)t), 0);
    ll_handle safety = 0;
    CHECK_EQ_INT(ll_call_later(st.loop, 30.0, safety_cb, NULL, &safety), 0);
    CHECK_EQ_INT(ll_call_later(st.loop, 0.02, release_threads_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(st.loop), 0);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(st.threads[t], NULL);

    CHECK_EQ_INT(st.timed_out, 0);
    CHECK_EQ_INT(atomic_load(&st.post_errors), 0);
    CHECK_EQ_INT(st.total, NTHREADS * PER_THREAD);
    int missing = 0, duplicated = 0;
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) {
            if (st.seen[t][i] == 0)
                missing++;
            else if (st.seen[t][i] > 1)
                duplicated++;
        }
    CHECK_EQ_INT(missing, 0);
    CHECK_EQ_INT(duplicated, 0);
    CHECK_EQ_INT(st.out_of_order, 0);

    /* Nothing more arrives afterwards. */
    CHECK_EQ_INT(ll_loop_run_once(st.loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(st.total, NTHREADS * PER_THREAD);
    CHECK_EQ_INT(ll_handle_cancel(safety), 0);
    ll_release(safety);
    ll_release(st.loop);
}

/* ---- one delayed post or wakeup against a blocked LL_RUN_ONCE ------------ */

struct delayed {
    ll_loop loop;
    int wakeup_only; /* 1: ll_loop_wakeup, 0: ll_call_soon_threadsafe */
    int rc;
};

static atomic_int flag_ran;

static void flag_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    atomic_fetch_add(&flag_ran, 1);
}

static void *delayed_thread(void *arg) {
    struct delayed *d = arg;
    usleep(50000);
    d->rc = d->wakeup_only ? ll_loop_wakeup(d->loop) : ll_call_soon_threadsafe(d->loop, flag_cb, NULL);
    return NULL;
}

static void run_blocked_once(int wakeup_only) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    atomic_store(&flag_ran, 0);
    struct delayed d = {loop, wakeup_only, -1};
    pthread_t th;
    double t0 = mono();
    CHECK_EQ_INT(pthread_create(&th, NULL, delayed_thread, &d), 0);
    /* Nothing is scheduled: this blocks in poll until the other thread acts. */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    double elapsed = mono() - t0;
    pthread_join(th, NULL);
    CHECK_EQ_INT(d.rc, 0);
    CHECK(elapsed >= 0.045);
    CHECK(elapsed < 5.0);
    /* A posted callback runs in the iteration it woke; a bare wakeup runs nothing. */
    CHECK_EQ_INT(atomic_load(&flag_ran), wakeup_only ? 0 : 1);
    ll_release(loop);
}

static void test_threadsafe_wakes_blocked_poll(void) { run_blocked_once(0); }
static void test_wakeup(void) { run_blocked_once(1); }

/* A wakeup while the loop waits for a far timer makes run_once return
 * early, and a later blocking run still waits (the wakeup was consumed). */
static void test_wakeup_consumed(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    atomic_store(&flag_ran, 0);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(ll_loop_wakeup(loop), 0); /* coalesce while idle */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    double t0 = mono();
    CHECK_EQ_INT(ll_call_later(loop, 0.08, flag_cb, NULL, NULL), 0);
    for (int k = 0; k < 10 && atomic_load(&flag_ran) == 0; k++)
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(atomic_load(&flag_ran), 1);
    CHECK(mono() - t0 >= 0.079);
    ll_release(loop);
}

/* Posts made while the loop is not running run at its next iteration, in
 * order; after close, posting fails with LL_ECLOSED. */
static int idle_log[3];
static int nidle;
static void idle_cb(ll_loop loop, void *arg) {
    (void)loop;
    idle_log[nidle++] = (int)(intptr_t)arg;
}

struct idle_post {
    ll_loop loop;
    int rc[3];
};

static void *idle_poster(void *arg) {
    struct idle_post *p = arg;
    for (int i = 0; i < 3; i++)
        p->rc[i] = ll_call_soon_threadsafe(p->loop, idle_cb, (void *)(intptr_t)(i + 1));
    return NULL;
}

static void *closed_poster(void *arg) {
    struct idle_post *p = arg;
    p->rc[0] = ll_call_soon_threadsafe(p->loop, idle_cb, (void *)9);
    p->rc[1] = ll_loop_wakeup(p->loop);
    return NULL;
}

static void test_post_while_idle_and_closed(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    struct idle_post p = {loop, {-1, -1, -1}};
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, idle_poster, &p), 0);
    pthread_join(th, NULL);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(p.rc[i], 0);
    nidle = 0;
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(nidle, 3);
    CHECK_EQ_INT(idle_log[0], 1);
    CHECK_EQ_INT(idle_log[1], 2);
    CHECK_EQ_INT(idle_log[2], 3);

    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(pthread_create(&th, NULL, closed_poster, &p), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(p.rc[0], LL_ECLOSED);
    CHECK_EQ_INT(p.rc[1], LL_ECLOSED);
    CHECK_EQ_INT(nidle, 3);
    ll_release(loop);
}

/* A loop can be run by different threads one after another. */
struct runner {
    ll_loop loop;
    int rc;
};
static void *run_nowait_thread(void *arg) {
    struct runner *r = arg;
    r->rc = ll_loop_run_once(r->loop, LL_RUN_NOWAIT);
    return NULL;
}

static void test_run_from_another_thread(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    atomic_store(&flag_ran, 0);
    CHECK_EQ_INT(ll_call_soon(loop, flag_cb, NULL, NULL), 0);
    struct runner r = {loop, -1};
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, run_nowait_thread, &r), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(r.rc, 0);
    CHECK_EQ_INT(atomic_load(&flag_ran), 1);
    /* And back on this thread. */
    CHECK_EQ_INT(ll_call_soon(loop, flag_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(atomic_load(&flag_ran), 2);
    ll_release(loop);
}

/* Two threads racing to run one idle loop: one runs it, the other gets
 * LL_ERUNNING (never two threads inside one loop), and a callback scheduled
 * before runs exactly once. */
struct run_pair {
    ll_loop loop;
    atomic_int go;
    int rc;
};
static atomic_int pair_ran;
static void pair_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    atomic_fetch_add(&pair_ran, 1);
}
static void *pair_runner(void *arg) {
    struct run_pair *p = arg;
    while (!atomic_load(&p->go))
        sched_yield();
    p->rc = ll_loop_run_once(p->loop, LL_RUN_NOWAIT);
    return NULL;
}

static void test_two_threads_run_one_loop(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    int bad = 0, lost = 0;
    for (int k = 0; k < 2000; k++) {
        atomic_store(&pair_ran, 0);
        CHECK_EQ_INT(ll_call_soon(loop, pair_cb, NULL, NULL), 0);
        struct run_pair ps[2] = {{loop, 0, -1}, {loop, 0, -1}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, pair_runner, &ps[i]);
        atomic_store(&ps[0].go, 1);
        atomic_store(&ps[1].go, 1);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < 2; i++)
            if (ps[i].rc != 0 && ps[i].rc != LL_ERUNNING)
                bad++;
        if (ps[0].rc != 0 && ps[1].rc != 0)
            bad++; /* at least one of them ran it */
        if (atomic_load(&pair_ran) != 1)
            lost++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(lost, 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

int main(void) {
    alarm(120); /* a hang (a lost wakeup) fails the test instead of blocking CI */
    RUN_TEST(test_threadsafe_stress);
    RUN_TEST(test_threadsafe_wakes_blocked_poll);
    RUN_TEST(test_wakeup);
    RUN_TEST(test_wakeup_consumed);
    RUN_TEST(test_post_while_idle_and_closed);
    RUN_TEST(test_run_from_another_thread);
    RUN_TEST(test_two_threads_run_one_loop);
    return CHECK_REPORT();
}
