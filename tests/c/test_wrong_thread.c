/* SPDX-License-Identifier: MIT */
/* Wrong-thread calls, debug mode off: while the loop runs callbacks and
 * timers on the main thread, 4 threads hammer the calls a host is likely to
 * make from a worker thread by mistake, with live ids, for about a second.
 * The process must not crash (it used to end in a Go panic), every such
 * call is refused with LL_EWRONGTHREAD and changes nothing, and the loop
 * still works afterwards. While the loop is not running, any thread may
 * make the same calls. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

#define NTHREADS 4
#define HAMMER_SECONDS 1.0

static struct {
    ll_loop loop;
    ll_future fut;    /* pending; only the loop thread may finish it */
    ll_handle timer;  /* a far timer; only the loop thread may cancel it */
    int rfd, wfd;     /* a pipe; only the loop thread may watch it */
    pthread_t threads[NTHREADS];
    atomic_int go, stop;
    atomic_long refused, accepted, other; /* calls by outcome */
    long chain, ticks;                    /* loop-thread work done meanwhile */
    int forbidden_ran;
} w;

/* A callback scheduled by a refused call: must never run. */
static void forbidden_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    w.forbidden_ran++;
}

static void forbidden_io(ll_loop loop, int fd, void *arg) {
    (void)loop;
    (void)fd;
    (void)arg;
    w.forbidden_ran++;
}

static void tally(int rc) {
    if (rc == LL_EWRONGTHREAD)
        atomic_fetch_add(&w.refused, 1);
    else if (rc == 0)
        atomic_fetch_add(&w.accepted, 1);
    else
        atomic_fetch_add(&w.other, 1);
}

static void *hammer(void *arg) {
    (void)arg;
    while (!atomic_load(&w.go))
        usleep(100);
    ll_handle h = 0;
    struct ll_loop_stats st = {.size = sizeof st};
    for (int i = 0; !atomic_load(&w.stop); i++) {
        switch (i % 18) {
        case 0: tally(ll_call_soon(w.loop, forbidden_cb, NULL, NULL)); break;
        case 1: tally(ll_call_soon(w.loop, forbidden_cb, NULL, &h)); break;
        case 2: tally(ll_call_later(w.loop, 0, forbidden_cb, NULL, NULL)); break;
        case 3: tally(ll_call_at(w.loop, 0, forbidden_cb, NULL, &h)); break;
        case 4: tally(ll_future_set_result(w.fut, 1, NULL)); break;
        case 5: tally(ll_future_set_exception(w.fut, -5, "x", 0, NULL)); break;
        case 6: tally(ll_future_cancel(w.fut, NULL)); break;
        case 7: tally(ll_add_reader(w.loop, w.rfd, forbidden_io, NULL)); break;
        case 8: tally(ll_add_writer(w.loop, w.wfd, forbidden_io, NULL)); break;
        case 9: tally(ll_remove_reader(w.loop, w.rfd)); break;
        case 10: tally(ll_remove_writer(w.loop, w.wfd)); break;
        case 11: tally(ll_handle_cancel(w.timer)); break;
        case 12: tally(ll_release(w.timer)); break;
        case 13: tally(ll_release(w.fut)); break;
        case 14: tally(ll_release(w.loop)); break;
        case 15: tally(ll_loop_stop(w.loop)); break;
        case 16: tally(ll_loop_close(w.loop)); break;
        case 17: tally(ll_loop_stats(w.loop, &st)); break;
        }
    }
    return NULL;
}

/* Loop-thread work while the threads hammer: a callback chain (the C fast
 * path), a call with a handle (through Go), and a 1 ms timer. */
static void chain_cb(ll_loop loop, void *arg) {
    (void)arg;
    w.chain++;
    if (w.chain % 64 == 0) {
        ll_handle h;
        CHECK_EQ_INT(ll_call_soon(loop, chain_cb, NULL, &h), 0);
        CHECK_EQ_INT(ll_release(h), 0);
    } else {
        CHECK_EQ_INT(ll_call_soon(loop, chain_cb, NULL, NULL), 0);
    }
}

static void tick_cb(ll_loop loop, void *arg) {
    (void)arg;
    w.ticks++;
    CHECK_EQ_INT(ll_call_later(loop, 0.001, tick_cb, NULL, NULL), 0);
}

static void start_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    atomic_store(&w.go, 1);
}

/* Joins the threads from inside a callback, so the loop runs (and every
 * wrong-thread call is refused) until the last one has returned. */
static void end_cb(ll_loop loop, void *arg) {
    (void)arg;
    /* On a loaded machine the 8 hammering threads can starve the loop's
     * thread: keep hammering (up to 30 s more) until the loop has shown
     * both kinds of work, rather than asserting a rate. */
    static int extra;
    if ((w.ticks <= 10 || w.chain <= 1000) && extra++ < 300) {
        CHECK_EQ_INT(ll_call_later(loop, 0.1, end_cb, NULL, NULL), 0);
        return;
    }
    atomic_store(&w.stop, 1);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(w.threads[t], NULL);
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
}

static void test_refused_while_running(void) {
    int fds[2];
    CHECK_EQ_INT(pipe(fds), 0);
    w.rfd = fds[0];
    w.wfd = fds[1];
    CHECK_EQ_INT(ll_loop_new(&w.loop), 0);
    CHECK_EQ_INT(ll_future_new(w.loop, &w.fut), 0);
    CHECK_EQ_INT(ll_call_later(w.loop, 1000.0, forbidden_cb, NULL, &w.timer), 0);
    for (int t = 0; t < NTHREADS; t++)
        CHECK_EQ_INT(pthread_create(&w.threads[t], NULL, hammer, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(w.loop, start_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(w.loop, chain_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_call_later(w.loop, 0.001, tick_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_call_later(w.loop, HAMMER_SECONDS, end_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);

    CHECK(atomic_load(&w.refused) > 1000);
    CHECK_EQ_INT(atomic_load(&w.accepted), 0);
    CHECK_EQ_INT(atomic_load(&w.other), 0);
    CHECK(w.chain > 1000); /* the loop thread kept working meanwhile */
    CHECK(w.ticks > 10);

    /* Nothing the refused calls asked for happened. */
    CHECK_EQ_INT(ll_future_state(w.fut), LL_PENDING);
    CHECK_EQ_INT(ll_handle_cancelled(w.timer), 0);
    CHECK_EQ_INT(ll_loop_is_closed(w.loop), 0);
    CHECK_EQ_INT(write(w.wfd, "x", 1), 1); /* a reader, had one been added, would run */
    STILL_RUNS(w.loop);
    CHECK_EQ_INT(w.forbidden_ran, 0);
}

/* While the loop is not running another thread may make the same calls. */
static int idle_ran;
static int idle_rc[4];
static struct ll_loop_stats idle_stats = {.size = sizeof idle_stats};
static void *idle_caller(void *arg) {
    (void)arg;
    idle_rc[0] = ll_call_soon(w.loop, count_cb, &idle_ran, NULL);
    idle_rc[1] = ll_future_set_result(w.fut, 7, NULL);
    idle_rc[2] = ll_handle_cancel(w.timer);
    idle_rc[3] = ll_loop_stats(w.loop, &idle_stats);
    return NULL;
}

static void test_allowed_while_idle(void) {
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, idle_caller, NULL), 0);
    pthread_join(th, NULL);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(idle_rc[i], 0);
    CHECK_EQ_INT(idle_stats.size, sizeof idle_stats);
    CHECK(idle_stats.ready >= 1); /* the call_soon just made */
    CHECK_EQ_INT(ll_loop_run_once(w.loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(idle_ran, 1);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(w.fut, &v), 0);
    CHECK_EQ_INT(v, 7);
    CHECK_EQ_INT(ll_handle_cancelled(w.timer), 1);
    CHECK_EQ_INT(ll_release(w.timer), 0);
    CHECK_EQ_INT(ll_release(w.fut), 0);
    CHECK_EQ_INT(ll_release(w.loop), 0);
    close(w.rfd);
    close(w.wfd);
}

int main(void) {
    alarm(60); /* a hang fails the test instead of blocking CI */
    RUN_TEST(test_refused_while_running);
    RUN_TEST(test_allowed_while_idle);
    return CHECK_REPORT();
}
