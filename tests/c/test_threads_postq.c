/* SPDX-License-Identifier: MIT */
/* ll_call_soon_threadsafe's lock-free chunk queue (capi/cloop/postq.c): chunk
 * boundaries (255 slots a chunk) on an idle and a running loop, exactly
 * once and FIFO per thread under 6 tight posting threads, a lone poster
 * (the bias: plain-store posts) joined half-way by a second, one order
 * across threads (a post that happens before another runs before it),
 * posts from the loop's own thread, and one thread posting to several
 * loops. test_threads_postq_race.c has the wakeup and close races. Run it under
 * the ASan build too (make test-asan): chunks are freed and reused as the
 * loop passes them. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define CHUNK 255 /* slots per chunk: LL__POSTQ_CAP in capi/cloop/postq.h */

/* ---- chunk boundaries ---------------------------------------------------- */

static long order_next, order_bad, order_ran;

static void order_cb(ll_loop loop, void *arg) {
    (void)loop;
    if ((long)(intptr_t)arg != order_next)
        order_bad++;
    order_next = (long)(intptr_t)arg + 1;
    order_ran++;
}

/* Post n to an idle loop, then run one iteration: all n run, in order. */
static void post_idle_then_run(ll_loop loop, long *seq, long n) {
    order_ran = 0;
    for (long i = 0; i < n; i++)
        CHECK_EQ_INT(ll_call_soon_threadsafe(loop, order_cb, (void *)(intptr_t)(*seq)++), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(order_ran, n);
}

static void test_chunk_boundaries(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    long seq = 0;
    order_next = 0;
    order_bad = 0;
    /* Takes that end one before, at, and one after a chunk's end, and runs
     * of several chunks, in an order that moves the head across many
     * chunks at every offset. */
    long sizes[] = {1, CHUNK - 2, 1, 1, CHUNK, CHUNK - 1, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 7, 1, 10 * CHUNK};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        post_idle_then_run(loop, &seq, sizes[k]);
    for (long n = 1; n <= 2 * CHUNK + 3; n += 17)
        post_idle_then_run(loop, &seq, n);
    CHECK_EQ_INT(order_bad, 0);
    CHECK_EQ_INT(order_next, seq);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* Posts left queued at close are dropped (their chunks freed: ASan), and
 * posting after the close is refused. */
static void test_close_with_queued_posts(void) {
    for (long n = 0; n <= 3 * CHUNK; n += CHUNK / 2) {
        ll_loop loop;
        CHECK_EQ_INT(ll_loop_new(&loop), 0);
        order_ran = 0;
        order_next = 0;
        for (long i = 0; i < n; i++)
            CHECK_EQ_INT(ll_call_soon_threadsafe(loop, order_cb, (void *)(intptr_t)i), 0);
        CHECK_EQ_INT(ll_loop_close(loop), 0);
        CHECK_EQ_INT(ll_call_soon_threadsafe(loop, order_cb, NULL), LL_ECLOSED);
        CHECK_EQ_INT(order_ran, 0);
        CHECK_EQ_INT(ll_release(loop), 0);
    }
}

/* ---- many tight posters ------------------------------------------------- */

#define POSTERS 6
#define PER_POSTER 60000

struct tight {
    ll_loop loop;
    atomic_int go;
    atomic_int errors;
    int next[POSTERS];
    long bad, total;
};

static struct tight tt;

static void tight_cb(ll_loop loop, void *arg) {
    uintptr_t v = (uintptr_t)arg;
    int t = (int)(v / PER_POSTER), i = (int)(v % PER_POSTER);
    if (tt.next[t] != i) /* a repeat, a loss or a swap all break this */
        tt.bad++;
    tt.next[t] = i + 1;
    if (++tt.total == (long)POSTERS * PER_POSTER)
        ll_loop_stop(loop);
}

static void *tight_poster(void *arg) {
    int t = (int)(intptr_t)arg;
    while (!atomic_load(&tt.go))
        sched_yield();
    for (int i = 0; i < PER_POSTER; i++)
        if (ll_call_soon_threadsafe(tt.loop, tight_cb, (void *)(uintptr_t)(t * PER_POSTER + i)) != 0)
            atomic_fetch_add(&tt.errors, 1);
    return NULL;
}

static void timeout_cb(ll_loop loop, void *arg) {
    *(int *)arg = 1;
    ll_loop_stop(loop);
}

static void test_tight_posters_exactly_once_fifo(void) {
    CHECK_EQ_INT(ll_loop_new(&tt.loop), 0);
    pthread_t th[POSTERS];
    for (int t = 0; t < POSTERS; t++)
        CHECK_EQ_INT(pthread_create(&th[t], NULL, tight_poster, (void *)(intptr_t)t), 0);
    int timed_out = 0;
    ll_handle safety;
    CHECK_EQ_INT(ll_call_later(tt.loop, 60, timeout_cb, &timed_out, &safety), 0);
    atomic_store(&tt.go, 1);
    CHECK_EQ_INT(ll_loop_run_forever(tt.loop), 0);
    for (int t = 0; t < POSTERS; t++)
        pthread_join(th[t], NULL);
    CHECK_EQ_INT(timed_out, 0);
    CHECK_EQ_INT(atomic_load(&tt.errors), 0);
    CHECK_EQ_INT(tt.bad, 0);
    CHECK_EQ_INT(tt.total, (long)POSTERS * PER_POSTER);
    for (int t = 0; t < POSTERS; t++)
        CHECK_EQ_INT(tt.next[t], PER_POSTER);
    /* Nothing more runs: every post ran once already. */
    CHECK_EQ_INT(ll_loop_run_once(tt.loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(tt.total, (long)POSTERS * PER_POSTER);
    CHECK_EQ_INT(ll_handle_cancel(safety), 0);
    ll_release(safety);
    CHECK_EQ_INT(ll_release(tt.loop), 0);
}

/* ---- one poster, then a second one -------------------------------------- */

/* Thread A posts alone, in bursts with pauses (so the loop sleeps between
 * them, and the first poster's plain-store posts must still wake it);
 * half-way, B starts posting too, while A is in full flow: the bias is
 * dropped under A's feet. Every post runs once, each thread's in order. */
#define A_POSTS 120000
#define B_POSTS 40000

struct duo {
    ll_loop loop;
    atomic_int a_done; /* A's posts made so far */
    atomic_int errors;
    int next_a, next_b;
    long bad, total;
};

static struct duo du;

static void duo_cb(ll_loop loop, void *arg) {
    uintptr_t v = (uintptr_t)arg;
    int *next = v >= (uintptr_t)A_POSTS ? &du.next_b : &du.next_a;
    int i = (int)(v >= (uintptr_t)A_POSTS ? v - A_POSTS : v);
    if (*next != i)
        du.bad++;
    *next = i + 1;
    if (++du.total == A_POSTS + B_POSTS)
        ll_loop_stop(loop);
}

static void *duo_a(void *arg) {
    (void)arg;
    for (int i = 0; i < A_POSTS; i++) {
        if (ll_call_soon_threadsafe(du.loop, duo_cb, (void *)(uintptr_t)i) != 0)
            atomic_fetch_add(&du.errors, 1);
        atomic_store(&du.a_done, i + 1);
        if (i < A_POSTS / 2 && i % 2000 == 1999)
            usleep(300);
    }
    return NULL;
}

static void *duo_b(void *arg) {
    (void)arg;
    while (atomic_load(&du.a_done) < A_POSTS / 2 + 1000)
        sched_yield();
    for (int i = 0; i < B_POSTS; i++)
        if (ll_call_soon_threadsafe(du.loop, duo_cb, (void *)(uintptr_t)(A_POSTS + i)) != 0)
            atomic_fetch_add(&du.errors, 1);
    return NULL;
}

static void test_one_poster_then_two(void) {
    CHECK_EQ_INT(ll_loop_new(&du.loop), 0);
    int timed_out = 0;
    ll_handle safety;
    CHECK_EQ_INT(ll_call_later(du.loop, 60, timeout_cb, &timed_out, &safety), 0);
    pthread_t a, b;
    CHECK_EQ_INT(pthread_create(&a, NULL, duo_a, NULL), 0);
    CHECK_EQ_INT(pthread_create(&b, NULL, duo_b, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(du.loop), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    CHECK_EQ_INT(timed_out, 0);
    CHECK_EQ_INT(atomic_load(&du.errors), 0);
    CHECK_EQ_INT(du.bad, 0);
    CHECK_EQ_INT(du.next_a, A_POSTS);
    CHECK_EQ_INT(du.next_b, B_POSTS);
    CHECK_EQ_INT(du.total, A_POSTS + B_POSTS);
    CHECK_EQ_INT(ll_handle_cancel(safety), 0);
    ll_release(safety);
    CHECK_EQ_INT(ll_release(du.loop), 0);
}

/* ---- one order across threads ------------------------------------------ */

/* Thread A posts "a", then tells B, which posts "b": a happens before b,
 * so a runs first, every round. */
#define ROUNDS 20000

struct relay {
    ll_loop loop;
    atomic_int turn; /* round whose "a" was posted, for B */
    atomic_int done; /* rounds whose "b" was posted */
    int last_a, swapped, runs;
};

static struct relay rl;

static void relay_a(ll_loop loop, void *arg) {
    (void)loop;
    rl.last_a = (int)(intptr_t)arg;
    rl.runs++;
}

static void relay_b(ll_loop loop, void *arg) {
    if (rl.last_a != (int)(intptr_t)arg)
        rl.swapped++;
    if (++rl.runs == 2 * ROUNDS)
        ll_loop_stop(loop);
}

static void *relay_thread_a(void *arg) {
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        while (atomic_load(&rl.done) != r - 1)
            sched_yield();
        ll_call_soon_threadsafe(rl.loop, relay_a, (void *)(intptr_t)r);
        atomic_store(&rl.turn, r);
    }
    return NULL;
}

static void *relay_thread_b(void *arg) {
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        while (atomic_load(&rl.turn) != r)
            sched_yield();
        ll_call_soon_threadsafe(rl.loop, relay_b, (void *)(intptr_t)r);
        atomic_store(&rl.done, r);
    }
    return NULL;
}

static void test_order_across_threads(void) {
    CHECK_EQ_INT(ll_loop_new(&rl.loop), 0);
    pthread_t a, b;
    int timed_out = 0;
    ll_handle safety;
    CHECK_EQ_INT(ll_call_later(rl.loop, 60, timeout_cb, &timed_out, &safety), 0);
    CHECK_EQ_INT(pthread_create(&a, NULL, relay_thread_a, NULL), 0);
    CHECK_EQ_INT(pthread_create(&b, NULL, relay_thread_b, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(rl.loop), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    CHECK_EQ_INT(timed_out, 0);
    CHECK_EQ_INT(rl.swapped, 0);
    CHECK_EQ_INT(rl.runs, 2 * ROUNDS);
    CHECK_EQ_INT(ll_handle_cancel(safety), 0);
    ll_release(safety);
    CHECK_EQ_INT(ll_release(rl.loop), 0);
}

/* ---- from the loop's own thread ---------------------------------------- */

/* A callback posts the next one thread-safely, across several chunks:
 * each runs once, in the following iteration, in order. */
static long self_n;

static void self_cb(ll_loop loop, void *arg) {
    long i = (long)(intptr_t)arg;
    if (i != self_n)
        order_bad++;
    self_n++;
    if (i + 1 < 3 * CHUNK + 5)
        CHECK_EQ_INT(ll_call_soon_threadsafe(loop, self_cb, (void *)(intptr_t)(i + 1)), 0);
    else
        ll_loop_stop(loop);
}

static void test_post_from_loop_thread(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    self_n = 0;
    order_bad = 0;
    CHECK_EQ_INT(ll_call_soon_threadsafe(loop, self_cb, (void *)(intptr_t)0), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(self_n, 3 * CHUNK + 5);
    CHECK_EQ_INT(order_bad, 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* ---- one thread, several loops ------------------------------------------ */

/* A thread remembers the queue it posted to last: alternating between two
 * loops must still put every post on its own loop, in order; a closed
 * loop refuses, and so does a released one whose queue record the next
 * loop took (nothing runs there). */
static ll_loop alt_loops[2];
static int alt_next[2], alt_bad;

static void alt_cb(ll_loop loop, void *arg) {
    uintptr_t v = (uintptr_t)arg;
    int which = (int)(v & 1), i = (int)(v >> 1);
    if (loop != alt_loops[which] || alt_next[which] != i)
        alt_bad++;
    alt_next[which] = i + 1;
}

static void test_one_thread_several_loops(void) {
    CHECK_EQ_INT(ll_loop_new(&alt_loops[0]), 0);
    CHECK_EQ_INT(ll_loop_new(&alt_loops[1]), 0);
    alt_next[0] = alt_next[1] = alt_bad = 0;
    for (int i = 0; i < 1000; i++)
        for (int w = 0; w < 2; w++)
            CHECK_EQ_INT(ll_call_soon_threadsafe(alt_loops[w], alt_cb, (void *)(uintptr_t)((i << 1) | w)), 0);
    for (int w = 0; w < 2; w++)
        CHECK_EQ_INT(ll_loop_run_once(alt_loops[w], LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(alt_bad, 0);
    CHECK_EQ_INT(alt_next[0], 1000);
    CHECK_EQ_INT(alt_next[1], 1000);

    ll_loop old = alt_loops[0];
    CHECK_EQ_INT(ll_loop_close(old), 0);
    CHECK_EQ_INT(ll_call_soon_threadsafe(old, alt_cb, NULL), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(old), 0);
    CHECK_EQ_INT(ll_call_soon_threadsafe(old, alt_cb, NULL), LL_EBADHANDLE);
    /* The next loop takes the freed record (the registry's slot of its id
     * may differ: either way the old id must stay refused). */
    CHECK_EQ_INT(ll_loop_new(&alt_loops[0]), 0);
    alt_next[0] = 0;
    CHECK_EQ_INT(ll_call_soon_threadsafe(old, alt_cb, NULL), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_call_soon_threadsafe(alt_loops[0], alt_cb, (void *)(uintptr_t)0), 0);
    CHECK_EQ_INT(ll_call_soon_threadsafe(old, alt_cb, NULL), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_run_once(alt_loops[0], LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(alt_next[0], 1);
    CHECK_EQ_INT(alt_bad, 0);
    for (int w = 0; w < 2; w++)
        CHECK_EQ_INT(ll_release(alt_loops[w]), 0);
}

int main(void) {
    alarm(240); /* a lost wakeup fails the test instead of hanging CI */
    RUN_TEST(test_chunk_boundaries);
    RUN_TEST(test_close_with_queued_posts);
    RUN_TEST(test_tight_posters_exactly_once_fifo);
    RUN_TEST(test_one_poster_then_two);
    RUN_TEST(test_order_across_threads);
    RUN_TEST(test_post_from_loop_thread);
    RUN_TEST(test_one_thread_several_loops);
    return CHECK_REPORT();
}
