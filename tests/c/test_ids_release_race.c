/* SPDX-License-Identifier: MIT */
/* ll_release from two threads at once: for a handle, a future and a loop id,
 * exactly one caller gets 0 and the other LL_EBADHANDLE, the reference is
 * dropped once (a future's value is freed exactly once) and nothing is freed
 * twice (ASan). Also: releasing objects of a loop that another thread runs
 * is refused and leaves them usable, and a release racing a run of the same
 * loop never crashes. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define ROUNDS 20000

/* Two racers release shared.id when shared.round moves on; main checks. */
struct race {
    atomic_ulong round;     /* main bumps it to start a round */
    atomic_int done;        /* racers finished this round */
    atomic_ullong id;
    atomic_int rc[2];
    atomic_int quit;
};

static struct race shared;

struct racer {
    int index;
};

static void *racer_main(void *arg) {
    int me = ((struct racer *)arg)->index;
    unsigned long seen = 0;
    for (;;) {
        unsigned long r;
        while ((r = atomic_load(&shared.round)) == seen) {
            if (atomic_load(&shared.quit))
                return NULL;
            sched_yield();
        }
        seen = r;
        atomic_store(&shared.rc[me], ll_release(atomic_load(&shared.id)));
        atomic_fetch_add(&shared.done, 1);
    }
}

/* Makes one object per round; returns its id (0 on failure). */
typedef uint64_t (*make_fn)(ll_loop loop);

static atomic_int frees;

static void count_free(uintptr_t v) {
    (void)v;
    atomic_fetch_add(&frees, 1);
}

static void never_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

static uint64_t make_handle(ll_loop loop) {
    ll_handle h = 0;
    return ll_call_later(loop, 3600, never_cb, NULL, &h) == 0 ? h : 0;
}

static uint64_t make_future(ll_loop loop) {
    ll_future f = 0;
    if (ll_future_new(loop, &f) != 0 || ll_future_set_result(f, 7, count_free) != 0)
        return 0;
    return f;
}

static uint64_t make_loop(ll_loop loop) {
    (void)loop;
    ll_loop l = 0;
    return ll_loop_new(&l) == 0 ? l : 0;
}

/* Runs ROUNDS rounds of two threads releasing one fresh id made by make. */
static void race_release(make_fn make) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    atomic_store(&frees, 0);
    memset(&shared, 0, sizeof shared);
    pthread_t th[2];
    struct racer rs[2] = {{0}, {1}};
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, racer_main, &rs[i]), 0);
    int bad_rounds = 0, made = 0;
    for (int k = 1; k <= ROUNDS; k++) {
        uint64_t id = make(loop);
        if (id == 0)
            break;
        made++;
        atomic_store(&shared.id, id);
        atomic_store(&shared.done, 0);
        atomic_store(&shared.round, (unsigned long)k);
        while (atomic_load(&shared.done) < 2)
            sched_yield();
        int a = atomic_load(&shared.rc[0]), b = atomic_load(&shared.rc[1]);
        if (!((a == 0 && b == LL_EBADHANDLE) || (a == LL_EBADHANDLE && b == 0))) {
            if (bad_rounds++ < 5)
                fprintf(stderr, "round %d: ll_release returned %d and %d\n", k, a, b);
        }
        /* The id is stale for everyone now. */
        if (ll_release(id) != LL_EBADHANDLE)
            bad_rounds++;
    }
    atomic_store(&shared.quit, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(made, ROUNDS);
    CHECK_EQ_INT(bad_rounds, 0);
    if (make == make_future)
        CHECK_EQ_INT(atomic_load(&frees), ROUNDS); /* each value freed exactly once */
    CHECK_EQ_INT(ll_release(loop), 0);
}

static void test_race_handle(void) { race_release(make_handle); }
static void test_race_future(void) { race_release(make_future); }
static void test_race_loop(void) { race_release(make_loop); }

/* ---- objects of a loop running on another thread ----------------------- */

struct runner {
    ll_loop loop;
    atomic_int started;
};

static void started_cb(ll_loop loop, void *arg) {
    (void)loop;
    atomic_store(&((struct runner *)arg)->started, 1);
}

static void *run_main(void *arg) {
    struct runner *r = arg;
    ll_call_soon_threadsafe(r->loop, started_cb, r);
    ll_loop_run_forever(r->loop);
    return NULL;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

static void test_release_while_running_elsewhere(void) {
    struct runner r = {0};
    CHECK_EQ_INT(ll_loop_new(&r.loop), 0);
    ll_future f;
    ll_handle h;
    CHECK_EQ_INT(ll_future_new(r.loop, &f), 0);
    atomic_store(&frees, 0);
    CHECK_EQ_INT(ll_future_set_result(f, 1, count_free), 0);
    CHECK_EQ_INT(ll_call_later(r.loop, 3600, never_cb, NULL, &h), 0);
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, run_main, &r), 0);
    while (!atomic_load(&r.started))
        sched_yield();
    /* The loop runs on th: this thread may not drop its objects. */
    CHECK_EQ_INT(ll_release(f), LL_EWRONGTHREAD);
    CHECK_EQ_INT(ll_release(h), LL_EWRONGTHREAD);
    CHECK_EQ_INT(ll_release(r.loop), LL_EWRONGTHREAD);
    CHECK_EQ_INT(atomic_load(&frees), 0);
    CHECK_EQ_INT(ll_call_soon_threadsafe(r.loop, stop_cb, NULL), 0);
    pthread_join(th, NULL);
    /* Stopped: every id is still the host's, and releases once. */
    CHECK_EQ_INT(ll_future_done(f), 1);
    CHECK_EQ_INT(ll_handle_cancelled(h), 0);
    CHECK_EQ_INT(ll_release(f), 0);
    CHECK_EQ_INT(atomic_load(&frees), 1);
    CHECK_EQ_INT(ll_release(h), 0);
    CHECK_EQ_INT(ll_release(r.loop), 0);
    CHECK_EQ_INT(ll_release(f), LL_EBADHANDLE);
}

/* ---- a release racing a run of the same loop --------------------------- */

struct run_race {
    ll_loop loop;
    atomic_int go;
    int run_rc;
};

static void *run_race_main(void *arg) {
    struct run_race *rr = arg;
    while (!atomic_load(&rr->go))
        sched_yield();
    rr->run_rc = ll_loop_run_once(rr->loop, LL_RUN_NOWAIT);
    return NULL;
}

static void test_release_races_run(void) {
    int bad = 0;
    for (int k = 0; k < 2000; k++) {
        struct run_race rr = {0};
        CHECK_EQ_INT(ll_loop_new(&rr.loop), 0);
        pthread_t th;
        CHECK_EQ_INT(pthread_create(&th, NULL, run_race_main, &rr), 0);
        atomic_store(&rr.go, 1);
        int rel = ll_release(rr.loop);
        pthread_join(th, NULL);
        /* Either the release came first (the run finds no loop) or the run
         * did (the release is refused while it runs, or succeeds after). */
        if (rel == 0) {
            if (rr.run_rc != 0 && rr.run_rc != LL_EBADHANDLE)
                bad++;
        } else if (rel == LL_EWRONGTHREAD && rr.run_rc == 0) {
            if (ll_release(rr.loop) != 0)
                bad++;
        } else {
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

int main(void) {
    alarm(300); /* a deadlock fails the test instead of blocking CI */
    RUN_TEST(test_race_handle);
    RUN_TEST(test_race_future);
    RUN_TEST(test_race_loop);
    RUN_TEST(test_release_while_running_elsewhere);
    RUN_TEST(test_release_races_run);
    return CHECK_REPORT();
}
