/* SPDX-License-Identifier: MIT */
/* ll_call_soon_threadsafe's queue (capi/cloop/postq.c) against its two races: no
 * lost wakeup when the loop goes to sleep between single posts (the wake
 * flag, the linger, the barrier the loop forces before it sleeps), and
 * posts racing ll_loop_close and the reuse of the loop's queue record by
 * the next loop. test_threads_postq.c has the queue's order and boundaries. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static void timeout_cb(ll_loop loop, void *arg) {
    *(int *)arg = 1;
    ll_loop_stop(loop);
}

/* ---- no lost wakeup ----------------------------------------------------- */

/* One post at a time, each after the previous one ran (so the loop has
 * gone idle, and often to sleep): a post the loop misses as it goes to
 * sleep would hang here until the safety timer. The gaps vary so that
 * posts land before, during and after the loop's linger and arming. */
#define SINGLES_NATIVE 3000
/* Under valgrind (tests/valgrind/run.sh sets LIBLOOP_VALGRIND) a twentieth:
 * its threads run one at a time, each hand-off here waits for valgrind to
 * switch threads, and 3,000 of them outlast the alarm; memcheck still sees
 * every path of the post and the wake 150 times. */
static int SINGLES = SINGLES_NATIVE;

static atomic_int single_ran;

static void single_cb(ll_loop loop, void *arg) {
    (void)arg;
    if (atomic_fetch_add(&single_ran, 1) + 1 == SINGLES)
        ll_loop_stop(loop);
}

static void *single_poster(void *arg) {
    ll_loop loop = *(ll_loop *)arg;
    for (int i = 0; i < SINGLES; i++) {
        while (atomic_load(&single_ran) != i)
            sched_yield();
        unsigned gap = (unsigned)(i * 7919) % 23; /* 0-22 us: around the 5 us linger */
        if (gap > 0)
            usleep(gap);
        ll_call_soon_threadsafe(loop, single_cb, NULL);
    }
    return NULL;
}

static void test_no_lost_wakeup(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    atomic_store(&single_ran, 0);
    int timed_out = 0;
    ll_handle safety;
    CHECK_EQ_INT(ll_call_later(loop, 60, timeout_cb, &timed_out, &safety), 0);
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, single_poster, &loop), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(timed_out, 0);
    CHECK_EQ_INT(atomic_load(&single_ran), SINGLES);
    CHECK_EQ_INT(ll_handle_cancel(safety), 0);
    ll_release(safety);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* ---- posts racing close and the queue's reuse -------------------------- */

/* Posters hammer a loop that runs a little, then closes and is released;
 * the next round's loop reuses the freed queue record. A post returns 0
 * (it was queued before the close: it ran, or was dropped with the loop)
 * or LL_ECLOSED / LL_EBADHANDLE; a callback never runs on a loop other
 * than the one it was posted to (the record's reuse), and never more
 * often than posts were accepted. */
#define RACERS 4
/* Under valgrind (its threads run one at a time, each for a long slice)
 * the racers post far faster than the loop runs their callbacks: 268
 * million accepted posts in the first round, measured. There they yield
 * after each post and the rounds are a tenth; the race with the close is
 * the same. */
static int RACE_ROUNDS = 40;
static int racer_yields;

struct race {
    ll_loop loop;       /* the loop of this round, posted to by every racer */
    atomic_int stop;
    atomic_long ok, refused, other;
};

static struct race rc_;
static ll_loop running_loop; /* the loop whose callbacks may run now */
static long wrong_loop, race_ran;

static void race_cb(ll_loop loop, void *arg) {
    if ((ll_loop)(uintptr_t)arg != loop || loop != running_loop)
        wrong_loop++;
    race_ran++;
}

static void *racer(void *arg) {
    (void)arg;
    while (!atomic_load(&rc_.stop)) {
        ll_loop loop = __atomic_load_n(&rc_.loop, __ATOMIC_ACQUIRE);
        int r = ll_call_soon_threadsafe(loop, race_cb, (void *)(uintptr_t)loop);
        if (r == 0)
            atomic_fetch_add(&rc_.ok, 1);
        else if (r == LL_ECLOSED || r == LL_EBADHANDLE)
            atomic_fetch_add(&rc_.refused, 1);
        else
            atomic_fetch_add(&rc_.other, 1);
        if (racer_yields)
            sched_yield();
    }
    return NULL;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

static void test_posts_racing_close(void) {
    pthread_t th[RACERS];
    ll_loop first;
    CHECK_EQ_INT(ll_loop_new(&first), 0);
    __atomic_store_n(&rc_.loop, first, __ATOMIC_RELEASE);
    for (int t = 0; t < RACERS; t++)
        CHECK_EQ_INT(pthread_create(&th[t], NULL, racer, NULL), 0);
    for (int r = 0; r < RACE_ROUNDS; r++) {
        ll_loop loop = __atomic_load_n(&rc_.loop, __ATOMIC_ACQUIRE);
        running_loop = loop;
        CHECK_EQ_INT(ll_call_later(loop, 0.002, stop_cb, NULL, NULL), 0);
        CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
        running_loop = 0;
        /* Close while the racers still post to it (some accepted, some
         * refused), release it, and make the next round's loop: it takes
         * the same queue record, while racers may still hold the old id. */
        CHECK_EQ_INT(ll_loop_close(loop), 0);
        usleep(200);
        CHECK_EQ_INT(ll_release(loop), 0);
        ll_loop next;
        CHECK_EQ_INT(ll_loop_new(&next), 0);
        __atomic_store_n(&rc_.loop, next, __ATOMIC_RELEASE);
    }
    atomic_store(&rc_.stop, 1);
    for (int t = 0; t < RACERS; t++)
        pthread_join(th[t], NULL);
    ll_loop last = __atomic_load_n(&rc_.loop, __ATOMIC_ACQUIRE);
    /* Stale racers' posts to released loops must not have reached it. */
    running_loop = last;
    CHECK_EQ_INT(ll_loop_run_once(last, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_release(last), 0);
    CHECK_EQ_INT(wrong_loop, 0);
    CHECK_EQ_INT(atomic_load(&rc_.other), 0);
    CHECK(atomic_load(&rc_.ok) > 0);
    CHECK(race_ran > 0 && race_ran <= atomic_load(&rc_.ok));
}

int main(void) {
    if (getenv("LIBLOOP_VALGRIND") != NULL) {
        SINGLES = SINGLES_NATIVE / 20;
        RACE_ROUNDS = 4;
        racer_yields = 1;
    }
    alarm(240); /* a lost wakeup fails the test instead of hanging CI */
    RUN_TEST(test_no_lost_wakeup);
    RUN_TEST(test_posts_racing_close);
    return CHECK_REPORT();
}
