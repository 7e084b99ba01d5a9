/* SPDX-License-Identifier: MIT */
/* Loop lifecycle: new/close/release, run_once modes, stop semantics, the
 * clock, debug mode and the exception handler. */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

/* A log of small integers the callbacks append to, to check order. */
static int order[64];
static int norder;

static void log_cb(ll_loop loop, void *arg) {
    (void)loop;
    if (norder < 64)
        order[norder++] = (int)(intptr_t)arg;
}

static void reset_log(void) { norder = 0; }

/* How many epoll and eventfd fds (what a loop opens) this process has open,
 * or -1 where /proc/self/fd does not exist. Other fds are not counted: the
 * Go runtime opens and closes files of its own in the background. */
static int count_loop_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (strstr(target, "eventpoll") != NULL || strstr(target, "eventfd") != NULL)
            n++;
    }
    closedir(d);
    return n;
}

static void test_new_close_release(void) {
    ll_loop a = 0, b = 0;
    CHECK_EQ_INT(ll_loop_new(&a), 0);
    CHECK_EQ_INT(ll_loop_new(&b), 0);
    CHECK(a != 0);
    CHECK(b != 0);
    CHECK(a != b);
    CHECK_EQ_INT(ll_loop_is_closed(a), 0);
    CHECK_EQ_INT(ll_loop_is_running(a), 0);

    /* Close is idempotent and keeps the id valid until released. */
    CHECK_EQ_INT(ll_loop_close(a), 0);
    CHECK_EQ_INT(ll_loop_is_closed(a), 1);
    CHECK_EQ_INT(ll_loop_close(a), 0);
    CHECK_EQ_INT(ll_loop_is_closed(a), 1);
    CHECK_EQ_INT(ll_release(a), 0);
    CHECK_EQ_INT(ll_loop_is_closed(a), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(a), LL_EBADHANDLE);

    /* Closing one loop leaves the other working. */
    reset_log();
    CHECK_EQ_INT(ll_call_soon(b, log_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(b, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 1);

    /* Release without close closes too; pending callbacks are dropped. */
    CHECK_EQ_INT(ll_call_soon(b, log_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_release(b), 0);
    CHECK_EQ_INT(ll_loop_is_closed(b), LL_EBADHANDLE);
    CHECK_EQ_INT(norder, 1);

    /* Many loops can be made and released: a released loop gives back its
     * fds (selector, wakeup fd). The Go runtime may open its own epoll and
     * eventfd once, lazily, so allow for that, not for one pair per loop. */
    int fds_before = count_loop_fds();
    for (int i = 0; i < 2000; i++) {
        ll_loop l = 0;
        int rc = ll_loop_new(&l);
        if (rc != 0) {
            CHECK_EQ_INT(rc, 0);
            break;
        }
        ll_call_soon(l, log_cb, (void *)3, NULL);
        ll_release(l);
    }
    CHECK_EQ_INT(norder, 1);
    if (fds_before >= 0) {
        int grew = count_loop_fds() - fds_before;
        CHECK(grew <= 2);
        if (grew > 2)
            fprintf(stderr, "  %d epoll/eventfd fds leaked by 2000 loops\n", grew);
    }
}

static void test_run_once_nowait(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);

    /* Nothing scheduled: NOWAIT returns at once. */
    double t0 = ll_loop_time(loop);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK(ll_loop_time(loop) - t0 < 0.5);

    /* A timer in the future does not make NOWAIT block, nor run early. */
    reset_log();
    ll_handle far = 0;
    CHECK_EQ_INT(ll_call_later(loop, 10.0, log_cb, (void *)8, &far), 0);
    t0 = ll_loop_time(loop);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK(ll_loop_time(loop) - t0 < 5.0);
    CHECK_EQ_INT(norder, 0);

    /* A ready callback runs in the NOWAIT iteration, and nothing else. */
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(norder, 1);
    CHECK_EQ_INT(order[0], 1);

    /* LL_RUN_ONCE blocks until the earliest timer is due and runs it. */
    double t_sched = ll_loop_time(loop);
    CHECK_EQ_INT(ll_call_later(loop, 0.05, log_cb, (void *)9, NULL), 0);
    for (int k = 0; k < 5 && norder < 2; k++) /* an early poll return may take a second pass */
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(norder, 2);
    CHECK_EQ_INT(order[1], 9);
    CHECK(ll_loop_time(loop) - t_sched >= 0.05);
    CHECK_EQ_INT(ll_loop_is_running(loop), 0);

    /* Releasing the loop drops the far timer; its handle stays ours. */
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(ll_release(far), 0);
    CHECK_EQ_INT(norder, 2);
}

static void check_running_cb(ll_loop loop, void *arg) {
    *(int *)arg = ll_loop_is_running(loop);
}

static void test_is_running(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    int seen = -1;
    CHECK_EQ_INT(ll_call_soon(loop, check_running_cb, &seen, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(seen, 1);
    CHECK_EQ_INT(ll_loop_is_running(loop), 0);
    ll_release(loop);
}

/* stop() lets the current iteration finish: callbacks already ready still
 * run, callbacks scheduled during it wait for the next run. */
static void stop_and_schedule_cb(ll_loop loop, void *arg) {
    log_cb(loop, arg);
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)100, NULL), 0);
}

static void stop_cb(ll_loop loop, void *arg) {
    log_cb(loop, arg);
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
}

static void test_stop_finishes_iteration(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    reset_log();
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, stop_and_schedule_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)3, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(norder, 3);
    CHECK_EQ_INT(order[0], 1);
    CHECK_EQ_INT(order[1], 2);
    CHECK_EQ_INT(order[2], 3);
    CHECK_EQ_INT(ll_loop_is_running(loop), 0);

    /* The callback scheduled during the stopped iteration runs next time,
     * and the stop flag was consumed: this run lasts until its own stop. */
    double t0 = ll_loop_time(loop);
    CHECK_EQ_INT(ll_call_later(loop, 0.05, stop_cb, (void *)4, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK(ll_loop_time(loop) - t0 >= 0.05 - 1e-6);
    CHECK_EQ_INT(norder, 5);
    CHECK_EQ_INT(order[3], 100);
    CHECK_EQ_INT(order[4], 4);
    ll_release(loop);
}

static void test_stop_before_run(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    reset_log();
    /* stop() before run_forever: exactly one iteration runs. The first
     * callback schedules another, which must wait for the next run. */
    CHECK_EQ_INT(ll_call_soon(loop, stop_and_schedule_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(norder, 1);
    CHECK_EQ_INT(order[0], 1);
    /* The stop request is consumed when run_forever returns; the callback
     * scheduled meanwhile runs in the next (again single) iteration. */
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(norder, 2);
    CHECK_EQ_INT(order[1], 100);

    /* stop() on an idle loop with nothing scheduled: run_forever returns
     * promptly instead of blocking forever. */
    double t0 = ll_loop_time(loop);
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK(ll_loop_time(loop) - t0 < 1.0);

    /* A timer not yet due is not run by that single iteration. */
    CHECK_EQ_INT(ll_call_later(loop, 5.0, log_cb, (void *)7, NULL), 0);
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(norder, 2);
    ll_release(loop);
}

static void test_stop_from_timer(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    reset_log();
    double t0 = ll_loop_time(loop);
    CHECK_EQ_INT(ll_call_later(loop, 0.03, stop_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.01, log_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    double elapsed = ll_loop_time(loop) - t0;
    CHECK(elapsed >= 0.03 - 1e-6);
    CHECK(elapsed < 2.0);
    CHECK_EQ_INT(norder, 2);
    CHECK_EQ_INT(order[0], 2);
    CHECK_EQ_INT(order[1], 1);
    ll_release(loop);
}

static void test_time(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    double t1 = ll_loop_time(loop);
    CHECK(t1 >= 0);
    double t2 = ll_loop_time(loop);
    CHECK(t2 >= t1);
    usleep(20000);
    double t3 = ll_loop_time(loop);
    CHECK(t3 - t2 >= 0.019);
    CHECK(t3 - t2 < 5.0);
    /* A closed (not yet released) loop still tells the time. */
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK(ll_loop_time(loop) >= t3);
    ll_release(loop);
    CHECK(ll_loop_time(loop) < 0);
}

/* Debug mode reports a slow callback to the exception handler. */
struct handler_log {
    int calls;
    int had_message;
    ll_loop loop;
};

static void handler(ll_loop loop, const ll_error_context *ctx, void *arg) {
    struct handler_log *h = arg;
    h->calls++;
    h->loop = loop;
    if (ctx != NULL && ctx->message != NULL && ctx->message[0] != '\0')
        h->had_message = 1;
}

/* Sleeps arg microseconds. */
/* Busy for at least arg microseconds of the monotonic clock: usleep alone
 * may return early when a signal lands on this thread. */
static void slow_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long want_us = (long)(uintptr_t)arg, spent_us = 0;
    while (spent_us < want_us) {
        usleep((useconds_t)(want_us - spent_us));
        clock_gettime(CLOCK_MONOTONIC, &now);
        spent_us = (now.tv_sec - t0.tv_sec) * 1000000L + (now.tv_nsec - t0.tv_nsec) / 1000;
    }
}

static void test_debug_slow_callback(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_get_debug(loop), 0);
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    CHECK_EQ_INT(ll_loop_get_debug(loop), 1);
    CHECK_EQ_INT(ll_loop_set_slow_callback_duration(loop, 0.1), 0);

    struct handler_log h = {0, 0, 0};
    CHECK_EQ_INT(ll_loop_set_exception_handler(loop, handler, &h), 0);
    reset_log();
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, NULL), 0); /* fast: not reported */
    CHECK_EQ_INT(ll_call_soon(loop, slow_cb, (void *)150000, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(h.calls, 1);
    CHECK_EQ_INT(h.had_message, 1);
    CHECK_EQ_INT(h.loop, loop);

    /* Debug off: not reported. */
    CHECK_EQ_INT(ll_loop_set_debug(loop, 0), 0);
    CHECK_EQ_INT(ll_loop_get_debug(loop), 0);
    CHECK_EQ_INT(ll_call_soon(loop, slow_cb, (void *)150000, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(h.calls, 1);

    /* A NULL handler restores the default, which writes one line to
     * stderr; ours is no longer called. stderr goes to a file meanwhile. */
    CHECK_EQ_INT(ll_loop_set_exception_handler(loop, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    CHECK_EQ_INT(ll_call_soon(loop, slow_cb, (void *)150000, NULL), 0);
    FILE *capture = tmpfile();
    CHECK(capture != NULL);
    if (capture != NULL) {
        fflush(stderr);
        int saved = dup(2);
        dup2(fileno(capture), 2);
        int rc = ll_loop_run_once(loop, LL_RUN_NOWAIT);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        CHECK_EQ_INT(rc, 0);
        char text[512] = {0};
        rewind(capture);
        size_t n = fread(text, 1, sizeof text - 1, capture);
        fclose(capture);
        int lines = 0;
        for (size_t i = 0; i < n; i++)
            lines += text[i] == '\n';
        CHECK(n > 1);
        CHECK_EQ_INT(lines, 1);
    }
    CHECK_EQ_INT(h.calls, 1);
    ll_release(loop);
}

/* Regression: debug mode switched on from inside a callback while the loop
 * runs. The loop's own thread must keep working (it used to be refused as a
 * wrong thread, since the running thread was only recorded when a run began
 * in debug mode), other threads must now be refused, and the batch that
 * switched it must not report a bogus slow callback (it used to time the
 * batch from a zero start). */
struct debug_mid {
    ll_loop loop;
    int later_rc, soon_rc, stop_rc, thread_rc, ticks;
};

static void debug_tick_cb(ll_loop loop, void *arg) {
    (void)loop;
    ((struct debug_mid *)arg)->ticks++;
}

static void *debug_other_thread(void *arg) {
    struct debug_mid *d = arg;
    d->thread_rc = ll_call_later(d->loop, 0.0, debug_tick_cb, d, NULL);
    return NULL;
}

static void enable_debug_cb(ll_loop loop, void *arg) {
    struct debug_mid *d = arg;
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    d->later_rc = ll_call_later(loop, 0.001, debug_tick_cb, d, NULL);
    ll_handle h = 0;
    d->soon_rc = ll_call_soon(loop, debug_tick_cb, d, &h);
    if (h != 0)
        ll_release(h);
    pthread_t th;
    if (pthread_create(&th, NULL, debug_other_thread, d) == 0)
        pthread_join(th, NULL);
}

static void debug_stop_cb(ll_loop loop, void *arg) {
    ((struct debug_mid *)arg)->stop_rc = ll_loop_stop(loop);
}

/* With the bug, even ll_loop_stop was refused and run_forever never
 * returned: fail instead of hanging. */
static void debug_watchdog(int sig) {
    (void)sig;
    static const char msg[] = "test_debug_enabled_mid_run: the loop could not be stopped\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(2);
    _exit(1);
}

static void test_debug_enabled_mid_run(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    struct handler_log h = {0, 0, 0};
    struct debug_mid d = {.loop = loop, .later_rc = 1, .soon_rc = 1, .stop_rc = 1, .thread_rc = 1};
    CHECK_EQ_INT(ll_loop_set_exception_handler(loop, handler, &h), 0);
    CHECK_EQ_INT(ll_loop_set_slow_callback_duration(loop, 0.5), 0);
    reset_log();
    /* Callbacks after the switch share its batch. */
    CHECK_EQ_INT(ll_call_soon(loop, enable_debug_cb, &d, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)1, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, log_cb, (void *)2, NULL), 0);
    CHECK_EQ_INT(ll_call_later(loop, 0.02, debug_stop_cb, &d, NULL), 0);
    signal(SIGALRM, debug_watchdog);
    alarm(10);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    alarm(0);
    CHECK_EQ_INT(ll_loop_get_debug(loop), 1);
    CHECK_EQ_INT(d.later_rc, 0);
    CHECK_EQ_INT(d.soon_rc, 0);
    CHECK_EQ_INT(d.stop_rc, 0);
    CHECK_EQ_INT(d.thread_rc, LL_EWRONGTHREAD);
    CHECK_EQ_INT(d.ticks, 2);
    CHECK_EQ_INT(norder, 2);
    CHECK_EQ_INT(h.calls, 0); /* nothing was slow */
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_new_close_release);
    RUN_TEST(test_run_once_nowait);
    RUN_TEST(test_is_running);
    RUN_TEST(test_stop_finishes_iteration);
    RUN_TEST(test_stop_before_run);
    RUN_TEST(test_stop_from_timer);
    RUN_TEST(test_time);
    RUN_TEST(test_debug_slow_callback);
    RUN_TEST(test_debug_enabled_mid_run);
    return CHECK_REPORT();
}
