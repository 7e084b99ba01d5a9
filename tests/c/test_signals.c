/* SPDX-License-Identifier: MIT */
/* Signals: ll_add_signal_handler runs its callback once per delivery, on
 * the loop thread, in a later iteration; two loops both get a signal;
 * replacing and removing handlers; the host's previous disposition comes
 * back after the last removal (and when a loop is released); the signals
 * the Go runtime owns are refused; a signal sent from another thread while
 * the loop blocks in its poll (to the process, and to the loop's own
 * thread, whose epoll_wait it interrupts) or while it runs a callback; a
 * burst of 100 real-time signals runs the callback exactly 100 times. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "proc_helpers.h"

struct sig_log {
    int calls;
    ll_loop loop;
    pthread_t thread;
    int tag;
};

static void sig_cb(ll_loop loop, void *arg) {
    struct sig_log *l = arg;
    l->calls++;
    l->loop = loop;
    l->thread = pthread_self();
}

static int calls_at_least(void *arg) {
    struct sig_log *l = arg;
    return l->calls >= l->tag;
}

static volatile sig_atomic_t host_calls;
static void host_handler(int sig) {
    (void)sig;
    host_calls++;
}

static void install_host_handler(int sig) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = host_handler;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ_INT(sigaction(sig, &sa, NULL), 0);
}

static int host_handler_installed(int sig) {
    struct sigaction cur;
    CHECK_EQ_INT(sigaction(sig, NULL, &cur), 0);
    return (cur.sa_flags & SA_SIGINFO) == 0 && cur.sa_handler == host_handler;
}

static void test_once_per_delivery(void) {
    ll_loop loop = new_loop();
    struct sig_log l = {0};
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR1, sig_cb, &l), 0);
    CHECK_EQ_INT(raise(SIGUSR1), 0);
    CHECK_EQ_INT(l.calls, 0); /* never inside the signal handler */
    l.tag = 1;
    RUN_UNTIL(loop, calls_at_least, &l, 5);
    CHECK_EQ_INT(l.calls, 1);
    CHECK_EQ_INT(l.loop, loop);
    CHECK(pthread_equal(l.thread, pthread_self()));
    /* Nothing more without another delivery. */
    for (int i = 0; i < 3; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.calls, 1);

    /* Three deliveries (kill from the process, each one handled before
     * the next is sent, so none merges with a pending one): three calls. */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(kill(getpid(), SIGUSR1), 0);
        l.tag = 2 + i;
        RUN_UNTIL(loop, calls_at_least, &l, 5);
    }
    CHECK_EQ_INT(l.calls, 4);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR1), 1);
    ll_release(loop);
}

static void test_two_loops(void) {
    ll_loop a = new_loop(), b = new_loop();
    struct sig_log la = {0}, lb = {0};
    CHECK_EQ_INT(ll_add_signal_handler(a, SIGUSR2, sig_cb, &la), 0);
    CHECK_EQ_INT(ll_add_signal_handler(b, SIGUSR2, sig_cb, &lb), 0);
    CHECK_EQ_INT(raise(SIGUSR2), 0);
    la.tag = lb.tag = 1;
    RUN_UNTIL(a, calls_at_least, &la, 5);
    RUN_UNTIL(b, calls_at_least, &lb, 5);
    CHECK_EQ_INT(la.loop, a);
    CHECK_EQ_INT(lb.loop, b);
    /* One loop stops watching; the other still gets the signal. */
    CHECK_EQ_INT(ll_remove_signal_handler(a, SIGUSR2), 1);
    CHECK_EQ_INT(raise(SIGUSR2), 0);
    lb.tag = 2;
    RUN_UNTIL(b, calls_at_least, &lb, 5);
    for (int i = 0; i < 3; i++)
        ll_loop_run_once(a, LL_RUN_NOWAIT);
    CHECK_EQ_INT(la.calls, 1);
    CHECK_EQ_INT(lb.calls, 2);
    CHECK_EQ_INT(ll_remove_signal_handler(b, SIGUSR2), 1);
    ll_release(a);
    ll_release(b);
}

static void test_replace(void) {
    ll_loop loop = new_loop();
    struct sig_log first = {0}, second = {0};
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR1, sig_cb, &first), 0);
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR1, sig_cb, &second), 0);
    CHECK_EQ_INT(raise(SIGUSR1), 0);
    second.tag = 1;
    RUN_UNTIL(loop, calls_at_least, &second, 5);
    CHECK_EQ_INT(first.calls, 0);
    CHECK_EQ_INT(second.calls, 1);
    /* One removal removes it: the replacement counted once. */
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR1), 1);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR1), 0);
    ll_release(loop);
}

/* A delivery queued before the removal is not run after it. */
static void test_remove_between_delivery_and_run(void) {
    ll_loop loop = new_loop();
    struct sig_log l = {0};
    install_host_handler(SIGUSR1);
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR1, sig_cb, &l), 0);
    CHECK_EQ_INT(raise(SIGUSR1), 0);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR1), 1);
    for (int i = 0; i < 3; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.calls, 0);
    CHECK_EQ_INT(host_calls, 0); /* the signal came while the library's handler was in place */
    signal(SIGUSR1, SIG_DFL);
    ll_release(loop);
}

static void test_previous_disposition_restored(void) {
    host_calls = 0;
    install_host_handler(SIGUSR2);
    ll_loop a = new_loop(), b = new_loop();
    struct sig_log la = {0}, lb = {0};
    CHECK_EQ_INT(ll_add_signal_handler(a, SIGUSR2, sig_cb, &la), 0);
    CHECK_EQ_INT(ll_add_signal_handler(b, SIGUSR2, sig_cb, &lb), 0);
    CHECK(!host_handler_installed(SIGUSR2));
    struct sigaction lib;
    CHECK_EQ_INT(sigaction(SIGUSR2, NULL, &lib), 0);
    CHECK(lib.sa_flags & SA_ONSTACK); /* the Go runtime requires it */
    CHECK(lib.sa_flags & SA_RESTART);
    CHECK_EQ_INT(raise(SIGUSR2), 0);
    CHECK_EQ_INT(host_calls, 0);

    /* Not the last watcher: the library's handler stays. */
    CHECK_EQ_INT(ll_remove_signal_handler(a, SIGUSR2), 1);
    CHECK(!host_handler_installed(SIGUSR2));
    CHECK_EQ_INT(ll_remove_signal_handler(a, SIGUSR2), 0);
    /* The last one: the host's handler is back, and runs. */
    CHECK_EQ_INT(ll_remove_signal_handler(b, SIGUSR2), 1);
    CHECK(host_handler_installed(SIGUSR2));
    CHECK_EQ_INT(raise(SIGUSR2), 0);
    CHECK_EQ_INT(host_calls, 1);

    /* Releasing (or closing) a loop removes its handlers. */
    CHECK_EQ_INT(ll_add_signal_handler(a, SIGUSR2, sig_cb, &la), 0);
    CHECK(!host_handler_installed(SIGUSR2));
    CHECK_EQ_INT(ll_release(a), 0);
    CHECK(host_handler_installed(SIGUSR2));
    CHECK_EQ_INT(ll_add_signal_handler(b, SIGUSR2, sig_cb, &lb), 0);
    CHECK_EQ_INT(ll_loop_close(b), 0);
    CHECK(host_handler_installed(SIGUSR2));
    CHECK_EQ_INT(ll_add_signal_handler(b, SIGUSR2, sig_cb, &lb), LL_ECLOSED);
    CHECK_EQ_INT(raise(SIGUSR2), 0);
    CHECK_EQ_INT(host_calls, 2);
    ll_release(b);
    signal(SIGUSR2, SIG_DFL);
}

/* A signal the host never named keeps the host's handler. */
static void test_untouched_signal(void) {
    host_calls = 0;
    install_host_handler(SIGHUP);
    ll_loop loop = new_loop();
    struct sig_log l = {0};
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR1, sig_cb, &l), 0);
    CHECK(host_handler_installed(SIGHUP));
    CHECK_EQ_INT(raise(SIGHUP), 0);
    CHECK_EQ_INT(host_calls, 1);
    ll_release(loop);
    signal(SIGHUP, SIG_DFL);
}

/* Refused alike, with LL_EINVAL: uncatchable signals, the Go runtime's, the
 * C library's own (32 and 33 under glibc: thread cancellation and setxid,
 * below SIGRTMIN, which sigaction refuses), and numbers out of range. */
static void test_refused(void) {
    ll_loop loop = new_loop();
    struct sig_log l = {0};
    const int bad[] = {SIGKILL, SIGSTOP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGURG, SIGPIPE, 0, -1, 65, 1000,
                       32, 33, SIGRTMIN - 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sigaction before, after;
        int in_range = bad[i] > 0 && bad[i] < 65;
        if (in_range)
            sigaction(bad[i], NULL, &before);
        CHECK_EQ_INT(ll_add_signal_handler(loop, bad[i], sig_cb, &l), LL_EINVAL);
        if (in_range) {
            sigaction(bad[i], NULL, &after);
            CHECK(before.sa_sigaction == after.sa_sigaction);
        }
    }
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR1, NULL, &l), LL_EINVAL);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, 65), LL_EINVAL);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR1), 0);
    CHECK_EQ_INT(ll_add_signal_handler(0, SIGUSR1, sig_cb, &l), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_remove_signal_handler(0, SIGUSR1), LL_EBADHANDLE);
    ll_future f = 0;
    CHECK_EQ_INT(ll_future_new(loop, &f), 0);
    CHECK_EQ_INT(ll_add_signal_handler(f, SIGUSR1, sig_cb, &l), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_remove_signal_handler(f, SIGUSR1), LL_EBADHANDLE);
    ll_release(f);
    check_still_runs(loop);
    ll_loop stale = new_loop();
    ll_release(stale);
    CHECK_EQ_INT(ll_add_signal_handler(stale, SIGUSR1, sig_cb, &l), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_remove_signal_handler(stale, SIGUSR1), LL_EBADHANDLE);
    ll_release(loop);
}

/* A realtime signal works as well (the top of the range). */
static void test_realtime_signal(void) {
    ll_loop loop = new_loop();
    struct sig_log l = {0};
    int sig = SIGRTMAX;
    CHECK_EQ_INT(ll_add_signal_handler(loop, sig, sig_cb, &l), 0);
    CHECK_EQ_INT(raise(sig), 0);
    l.tag = 1;
    RUN_UNTIL(loop, calls_at_least, &l, 5);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, sig), 1);
    ll_release(loop);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* A thread that sends sig `count` times after `delay` seconds: to the
 * process (kill/sigqueue) or, with `to` set, to that thread. */
struct sender {
    int sig, count;
    double delay;
    int to_thread;
    pthread_t to;
    int failures;
    double sent_at; /* when the first one was sent */
};

static void *sender_main(void *arg) {
    struct sender *s = arg;
    sleep_s(s->delay);
    s->sent_at = now();
    for (int i = 0; i < s->count; i++) {
        int rc;
        if (s->to_thread) {
            rc = pthread_kill(s->to, s->sig);
        } else {
            union sigval v = {.sival_int = i};
            rc = sigqueue(getpid(), s->sig, v) == 0 ? 0 : errno;
        }
        if (rc != 0)
            s->failures++;
    }
    return NULL;
}

/* The loop blocks in its poll (nothing ready, only a far timer); the
 * signal arrives 100 ms later from another thread and wakes it. Twice:
 * sent to the process (any thread may take it), then to the loop's own
 * thread (its epoll_wait returns EINTR, which must not end or break the
 * iteration). */
static void test_signal_while_blocked_in_poll(void) {
    for (int to_thread = 0; to_thread < 2; to_thread++) {
        ll_loop loop = new_loop();
        struct sig_log l = {0};
        CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR1, sig_cb, &l), 0);
        int far = 0;
        ll_handle far_timer = 0;
        CHECK_EQ_INT(ll_call_later(loop, 5.0, count_cb, &far, &far_timer), 0); /* the watchdog */
        struct sender s = {.sig = SIGUSR1, .count = 1, .delay = 0.1, .to_thread = to_thread, .to = pthread_self()};
        pthread_t th;
        CHECK_EQ_INT(pthread_create(&th, NULL, sender_main, &s), 0);
        double t0 = now();
        /* Iterations block until something happens: the signal or the timer. */
        int iterations = 0;
        while (l.calls == 0 && !far && iterations < 100) {
            CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
            iterations++;
        }
        double took = now() - t0;
        pthread_join(th, NULL);
        CHECK_EQ_INT(s.failures, 0);
        CHECK_EQ_INT(l.calls, 1);
        CHECK_EQ_INT(far, 0);
        CHECK(pthread_equal(l.thread, pthread_self()));
        CHECK(took >= 0.09);                 /* it did wait for the signal */
        CHECK(now() - s.sent_at < 2.0);      /* and woke for it, not for the timer */
        CHECK(iterations <= 3);              /* blocked, not spinning */
        ll_handle_cancel(far_timer);
        ll_release(far_timer);
        CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR1), 1);
        ll_release(loop);
    }
}

/* Signals that arrive while a callback runs: the callback is never
 * interrupted by the signal's callback; each delivery runs it once, after. */
struct busy {
    struct sig_log *log;
    int calls_seen_inside; /* sig callbacks that ran while busy ran: must be 0 */
    int done;
};

static void busy_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct busy *b = arg;
    int before = b->log->calls;
    /* One delivery from this very callback ... */
    raise(SIGUSR2);
    /* ... and one from the sender thread while this spins for 300 ms. */
    double t0 = now();
    while (now() - t0 < 0.3)
        ;
    b->calls_seen_inside = b->log->calls - before;
    b->done = 1;
}

static void test_signal_while_running_callbacks(void) {
    ll_loop loop = new_loop();
    struct sig_log l = {0};
    struct busy b = {&l, -1, 0};
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGUSR2, sig_cb, &l), 0);
    CHECK_EQ_INT(ll_call_soon(loop, busy_cb, &b, NULL), 0);
    struct sender s = {.sig = SIGUSR2, .count = 1, .delay = 0.1};
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, sender_main, &s), 0);
    l.tag = 2;
    RUN_UNTIL(loop, calls_at_least, &l, 5);
    pthread_join(th, NULL);
    CHECK_EQ_INT(s.failures, 0);
    CHECK_EQ_INT(b.done, 1);
    CHECK_EQ_INT(b.calls_seen_inside, 0);
    /* SIGUSR2 is a standard signal: two deliveries, the second sent while
     * the first may still be pending in the kernel, could merge into one.
     * Here the first was delivered at once (raise runs the handler before
     * it returns) and the second 100 ms later, so there are two. */
    for (int i = 0; i < 3; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.calls, 2);
    CHECK(pthread_equal(l.thread, pthread_self()));
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGUSR2), 1);
    ll_release(loop);
}

/* 100 deliveries of a real-time signal, which the kernel queues (one per
 * sigqueue, none merged, unlike standard signals): exactly 100 callbacks.
 * First while the loop runs (a thread sends them as fast as it can), then
 * 100 before the loop runs at all (all waiting in the signal pipe). */
#define BURST 100

static void test_burst_of_realtime_signals(void) {
    ll_loop loop = new_loop();
    struct sig_log l = {0};
    int sig = SIGRTMIN + 3;
    CHECK_EQ_INT(ll_add_signal_handler(loop, sig, sig_cb, &l), 0);
    struct sender s = {.sig = sig, .count = BURST, .delay = 0.05};
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, sender_main, &s), 0);
    l.tag = BURST;
    RUN_UNTIL(loop, calls_at_least, &l, 5);
    pthread_join(th, NULL);
    CHECK_EQ_INT(s.failures, 0);
    for (int i = 0; i < 3; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.calls, BURST);

    /* 100 more while the loop does not run. */
    l.calls = 0;
    for (int i = 0; i < BURST; i++) {
        union sigval v = {.sival_int = i};
        CHECK_EQ_INT(sigqueue(getpid(), sig, v), 0);
    }
    CHECK_EQ_INT(l.calls, 0);
    RUN_UNTIL(loop, calls_at_least, &l, 5);
    for (int i = 0; i < 3; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(l.calls, BURST);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, sig), 1);
    ll_release(loop);
}

int main(void) {
    alarm(60); /* a hang is a failure, never a stuck suite */
    RUN_TEST(test_once_per_delivery);
    RUN_TEST(test_two_loops);
    RUN_TEST(test_replace);
    RUN_TEST(test_remove_between_delivery_and_run);
    RUN_TEST(test_previous_disposition_restored);
    RUN_TEST(test_untouched_signal);
    RUN_TEST(test_refused);
    RUN_TEST(test_realtime_signal);
    RUN_TEST(test_signal_while_blocked_in_poll);
    RUN_TEST(test_signal_while_running_callbacks);
    RUN_TEST(test_burst_of_realtime_signals);
    return CHECK_REPORT();
}
