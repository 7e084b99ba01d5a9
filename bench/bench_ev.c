/* SPDX-License-Identifier: MIT */
/*
 * bench_ev.c — the libev rival for workloads W1, W1-fd, W2, W2-inloop, W3, W3c.
 * Usage: bench_ev WORKLOAD [N]   (N defaults to 1,000,000; one workload per process;
 *        `bench_ev version` prints the library version)
 *
 * The loop is ev_loop_new(EVBACKEND_EPOLL) (not the default loop, which
 * would also install a SIGCHLD watcher).
 * W1 callback chain: one ev_idle whose callback counts and stops itself after
 *    N calls; each call is one loop iteration (libev polls with timeout 0
 *    while an idle watcher is active). ns per callback.
 * W1-fd: W1 with the read end of an idle pipe watched (ev_io), as any loop
 *    serving a socket would; nothing ever arrives on it.
 * W2 fan-out: N ev_idle (one malloc'd array) initialised and started up
 *    front; each callback stops its own watcher, so each runs exactly once
 *    and all N run in one iteration. ns per callback, scheduling included.
 * W2-inloop: the same N idle watchers, started from inside a first idle
 *    callback (they run in the next iteration).
 * W3 timers: N ev_timer (malloc'd array), timer i with after = i/1e6 s
 *    (= i/1000 ms) and no repeat; no-op callbacks. CPU s, wall s, peak RSS.
 * W3c: as W3, then every other timer (odd i) is stopped with ev_timer_stop
 *    before the loop runs.
 * libev has no thread pool and no tasks: W7 and the T-* workloads are not
 * implemented here (bench/run.sh runs them for libuv/libloop only).
 */
#include "common.h"
#include <ev.h>
#include <unistd.h>
#include "post_queue.h"

static const char *IMPL = "libev";
static long n_cb;
static long n_target;
static long n_odd_fired;
static ev_idle *idles;
static long n_total;

static ev_io w1_io; /* W1-fd: the watched pipe */

static void w1_cb(struct ev_loop *loop, ev_idle *w, int revents) {
    (void)revents;
    if (++n_cb == n_target) {
        ev_idle_stop(loop, w);
        ev_io_stop(loop, &w1_io);
    }
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents) {
    (void)loop;
    (void)w;
    (void)revents;
    fprintf(stderr, "libev W1-fd: the idle pipe became readable\n");
    exit(2);
}

static void w2_cb(struct ev_loop *loop, ev_idle *w, int revents) {
    (void)revents;
    n_cb++;
    ev_idle_stop(loop, w);
}

static void start_all_idles(struct ev_loop *loop) {
    for (long i = 0; i < n_total; i++) {
        ev_idle_init(&idles[i], w2_cb);
        ev_idle_start(loop, &idles[i]);
    }
}

static void w2_first_cb(struct ev_loop *loop, ev_idle *w, int revents) {
    (void)revents;
    ev_idle_stop(loop, w);
    start_all_idles(loop);
}

static void timer_cb(struct ev_loop *loop, ev_timer *t, int revents) {
    (void)loop;
    (void)revents;
    n_cb++;
    if ((long)(intptr_t)t->data & 1)
        n_odd_fired++;
}

/* W6: the host's own queue (post_queue.h) and ev_async_send to wake. */
static post_queue w6_q;
static ev_async w6_async;
static struct ev_loop *w6_loop;

static void w6_cb(void *arg) {
    (void)arg;
    if (++n_cb == n_target)
        ev_break(w6_loop, EVBREAK_ALL);
}

static void w6_async_cb(struct ev_loop *loop, ev_async *a, int revents) {
    (void)loop;
    (void)a;
    (void)revents;
    post_queue_run(&w6_q);
}

static int w6_post(long i) {
    (void)i;
    if (post_queue_push(&w6_q, w6_cb, NULL) != 0)
        return -1;
    ev_async_send(w6_loop, &w6_async);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2)
        bench_usage(argv[0]);
    const char *w = argv[1];
    if (strcmp(w, "version") == 0) {
        printf("%d.%d\n", ev_version_major(), ev_version_minor());
        return 0;
    }
    long n = bench_n(argc, argv);
    struct ev_loop *loop = ev_loop_new(EVBACKEND_EPOLL);
    bench_check(loop != NULL, IMPL, w, "ev_loop_new");
    bench_mark t0, t1;

    if (strcmp(w, "W1") == 0 || strcmp(w, "W1-fd") == 0) {
        ev_idle idle;
        ev_idle_init(&idle, w1_cb);
        ev_io_init(&w1_io, io_cb, -1, EV_READ);
        if (w[2] == '-') {
            int fds[2];
            bench_check(pipe(fds) == 0, IMPL, w, "pipe");
            ev_io_set(&w1_io, fds[0], EV_READ);
            ev_io_start(loop, &w1_io);
        }
        n_target = n;
        t0 = bench_mark_now();
        ev_idle_start(loop, &idle);
        ev_run(loop, 0);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "callback count");
    } else if (strcmp(w, "W2") == 0 || strcmp(w, "W2-inloop") == 0) {
        int inloop = w[2] != '\0';
        ev_idle first;
        n_total = n;
        t0 = bench_mark_now();
        idles = malloc((size_t)n * sizeof *idles);
        bench_check(idles != NULL, IMPL, w, "malloc");
        if (inloop) {
            ev_idle_init(&first, w2_first_cb);
            ev_idle_start(loop, &first);
        } else {
            start_all_idles(loop);
        }
        if (!inloop)
            bench_sched_end = bench_now();
        ev_run(loop, 0);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "callback count");
        free(idles);
    } else if (strcmp(w, "W6") == 0) {
        post_queue_init(&w6_q);
        w6_loop = loop;
        ev_async_init(&w6_async, w6_async_cb);
        ev_async_start(loop, &w6_async);
        n_target = n;
        bench_poster poster = {n, w6_post, 0, 0, 0};
        pthread_t tid;
        t0 = bench_mark_now();
        bench_check(pthread_create(&tid, NULL, bench_poster_main, &poster) == 0, IMPL, w, "pthread_create");
        ev_run(loop, 0);
        t1 = bench_mark_now();
        pthread_join(tid, NULL);
        bench_sched_end = poster.end;
        bench_check(!poster.failed && n_cb == n, IMPL, w, "callback count");
        ev_async_stop(loop, &w6_async);
    } else if (strcmp(w, "W3") == 0 || strcmp(w, "W3c") == 0) {
        int cancel = w[2] == 'c';
        t0 = bench_mark_now();
        ev_timer *timers = malloc((size_t)n * sizeof *timers);
        bench_check(timers != NULL, IMPL, w, "malloc");
        for (long i = 0; i < n; i++) {
            ev_timer_init(&timers[i], timer_cb, (double)i / 1e6, 0.);
            timers[i].data = (void *)(intptr_t)i;
            ev_timer_start(loop, &timers[i]);
        }
        if (cancel)
            for (long i = 1; i < n; i += 2)
                ev_timer_stop(loop, &timers[i]);
        bench_sched_end = bench_now();
        ev_run(loop, 0);
        t1 = bench_mark_now();
        bench_check(n_cb == (cancel ? n / 2 : n), IMPL, w, "timer count");
        bench_check(!cancel || n_odd_fired == 0, IMPL, w, "a cancelled timer ran");
        free(timers);
    } else {
        bench_usage(argv[0]);
        return 2;
    }
    bench_report(IMPL, w, n, t0, t1);
    ev_loop_destroy(loop);
    return 0;
}
