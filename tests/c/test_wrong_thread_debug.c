/* SPDX-License-Identifier: MIT */
/* Wrong-thread calls, debug mode on (ll_loop_set_debug): from a thread other
 * than the one running the loop, every call taking the loop or its ids is
 * refused with LL_EWRONGTHREAD and changes nothing, not only the calls
 * refused in every mode (test_wrong_thread.c); the thread-safe calls are
 * still allowed. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

static void io_cb(ll_loop loop, int fd, void *arg) {
    (void)loop;
    (void)fd;
    *(int *)arg += 1;
}

struct wrong_thread {
    ll_loop loop;
    ll_handle h;
    int fd;
    int soon, later, at, cancel, cancelled, release_h, add_reader, remove_reader, stop, close,
        set_debug;
    int threadsafe, wakeup;
    int ran;     /* callbacks that ran: only the thread-safe one may */
    int ts_ran;
};

static void ts_cb(ll_loop loop, void *arg) {
    (void)loop;
    ((struct wrong_thread *)arg)->ts_ran++;
}

static void wrong_count_cb(ll_loop loop, void *arg) {
    (void)loop;
    ((struct wrong_thread *)arg)->ran++;
}

static void wrong_io_cb(ll_loop loop, int fd, void *arg) {
    (void)fd;
    wrong_count_cb(loop, arg);
}

static void *wrong_thread_main(void *arg) {
    struct wrong_thread *w = arg;
    ll_handle h = 0;
    w->soon = ll_call_soon(w->loop, wrong_count_cb, w, NULL);
    w->later = ll_call_later(w->loop, 0.0, wrong_count_cb, w, &h);
    w->at = ll_call_at(w->loop, 0.0, wrong_count_cb, w, &h);
    w->cancel = ll_handle_cancel(w->h);
    w->cancelled = ll_handle_cancelled(w->h);
    w->add_reader = ll_add_reader(w->loop, w->fd, wrong_io_cb, w);
    w->remove_reader = ll_remove_reader(w->loop, w->fd);
    w->stop = ll_loop_stop(w->loop);
    w->close = ll_loop_close(w->loop);
    w->release_h = ll_release(w->h);
    w->set_debug = ll_loop_set_debug(w->loop, 0);
    /* The thread-safe calls are allowed. */
    w->threadsafe = ll_call_soon_threadsafe(w->loop, ts_cb, w);
    w->wakeup = ll_loop_wakeup(w->loop);
    if (h != 0)
        w->later = -1; /* a handle escaped a failed call */
    return NULL;
}

static void spawn_wrong_thread_cb(ll_loop loop, void *arg) {
    (void)loop;
    pthread_t th;
    /* The loop is running (this callback is on its thread) while the other
     * thread makes its calls. */
    if (pthread_create(&th, NULL, wrong_thread_main, arg) == 0)
        pthread_join(th, NULL);
}

static void test_wrong_thread_debug(void) {
    ll_loop l;
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(ll_loop_new(&l), 0);
    CHECK_EQ_INT(ll_loop_set_debug(l, 1), 0);
    struct wrong_thread w;
    memset(&w, 0, sizeof w);
    w.loop = l;
    w.fd = p[0];
    int victim_ran = 0;
    CHECK_EQ_INT(ll_call_later(l, 0.05, count_cb, &victim_ran, &w.h), 0);
    CHECK_EQ_INT(ll_add_reader(l, p[0], io_cb, &victim_ran), 0);
    CHECK_EQ_INT(ll_call_soon(l, spawn_wrong_thread_cb, &w, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_NOWAIT), 0);

    CHECK_EQ_INT(w.soon, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.later, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.at, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.cancel, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.cancelled, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.add_reader, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.remove_reader, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.stop, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.close, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.release_h, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.set_debug, LL_EWRONGTHREAD);
    CHECK_EQ_INT(w.threadsafe, 0);
    CHECK_EQ_INT(w.wakeup, 0);

    /* Nothing the wrong thread asked for happened; the thread-safe post
     * runs, the timer still runs, the reader is still registered. */
    CHECK_EQ_INT(ll_loop_get_debug(l), 1);
    CHECK_EQ_INT(ll_loop_is_closed(l), 0);
    CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(w.ts_ran, 1);
    CHECK_EQ_INT(w.ran, 0);
    CHECK_EQ_INT(ll_handle_cancelled(w.h), 0);
    for (int k = 0; k < 5 && victim_ran == 0; k++)
        CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_ONCE), 0); /* the 50 ms timer */
    CHECK_EQ_INT(victim_ran, 1);
    CHECK_EQ_INT(write(p[1], "r", 1), 1);
    CHECK_EQ_INT(ll_loop_run_once(l, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(victim_ran, 2);
    CHECK_EQ_INT(ll_remove_reader(l, p[0]), 1);
    CHECK_EQ_INT(w.ran, 0);
    STILL_RUNS(l);
    /* The host reference to the handle is still there. */
    CHECK_EQ_INT(ll_release(w.h), 0);
    CHECK_EQ_INT(ll_release(l), 0);
    close(p[0]);
    close(p[1]);
}

int main(void) {
    RUN_TEST(test_wrong_thread_debug);
    return CHECK_REPORT();
}
