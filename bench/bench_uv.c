/* SPDX-License-Identifier: MIT */
/*
 * bench_uv.c — the libuv rival for workloads W1, W1-fd, W2, W2-inloop, W3, W3c,
 * W7, W7-4.
 * Usage: bench_uv WORKLOAD [N]   (N defaults to 1,000,000, W7 100,000; one workload
 *        per process; `bench_uv version` prints the library version)
 *
 * W1 callback chain: one uv_idle_t whose callback counts and stops itself
 *    after N calls. Each call is one loop iteration (libuv polls with timeout
 *    0 while an idle handle is active). Measures ns per callback.
 * W1-fd: W1 with the read end of an idle pipe watched (uv_poll_t), as any
 *    loop serving a socket would; nothing ever arrives on it.
 * W2 fan-out: N uv_idle_t (one malloc'd array) are initialised and started
 *    up front; each callback stops its own handle, so each runs exactly once
 *    and all N run in one iteration. ns per callback, scheduling included.
 * W2-inloop: the same N idle handles, started from inside a first idle
 *    callback (they run in the next iteration).
 * W3 timers: N uv_timer_t (malloc'd array), timer i started with timeout
 *    i/1000 ms (libuv timeouts are integer ms, so 1000 timers share each
 *    millisecond); no-op callbacks. CPU s, wall s, peak RSS.
 * W3c: as W3, then every other timer (odd i) is stopped with uv_timer_stop
 *    before the loop runs.
 * W7 executor: N uv_queue_work requests (one malloc'd array of jobs) queued
 *    from outside the loop, then uv_run; the work callback (on a pool thread)
 *    stores its arg + 1, the after_work callback (on the loop thread) checks
 *    that value and counts; uv_run returns once all N have come back. libuv's
 *    default pool (4 threads; UV_THREADPOOL_SIZE is unset for W7 so the
 *    default really applies). Jobs per second.
 * W7q, W7q-4: the same as W7, W7-4 (compared with libloop's ll_queue_work).
 * W7-4: W7 with UV_THREADPOOL_SIZE=4 set (setenv before the pool starts) —
 *    the same size as the default, run so both pools can be compared at 4.
 * Teardown (uv_close of every handle, freeing) happens after the measured region.
 * libuv has no tasks: the T-* workloads are libloop's only.
 */
#include "common.h"
#include <uv.h>
#include <unistd.h>
#include "post_queue.h"

static const char *IMPL = "libuv";
static long n_cb;     /* callbacks that ran */
static long n_target; /* W1: stop after this many */
static long n_odd_fired;
static uv_idle_t *idles;
static long n_total;

static uv_poll_t w1_poll; /* W1-fd: the watched pipe */

static void w1_cb(uv_idle_t *h) {
    if (++n_cb == n_target) {
        uv_idle_stop(h);
        if (uv_is_active((uv_handle_t *)&w1_poll))
            uv_poll_stop(&w1_poll);
    }
}

static void poll_cb(uv_poll_t *p, int status, int events) {
    (void)p;
    (void)status;
    (void)events;
    fprintf(stderr, "libuv W1-fd: the idle pipe became readable\n");
    exit(2);
}

static void w2_cb(uv_idle_t *h) {
    n_cb++;
    uv_idle_stop(h);
}

static void start_all_idles(uv_loop_t *loop) {
    for (long i = 0; i < n_total; i++) {
        uv_idle_init(loop, &idles[i]);
        uv_idle_start(&idles[i], w2_cb);
    }
}

static void w2_first_cb(uv_idle_t *h) {
    uv_idle_stop(h);
    start_all_idles(h->loop);
}

static void timer_cb(uv_timer_t *t) {
    n_cb++;
    if ((long)(intptr_t)t->data & 1)
        n_odd_fired++;
}

static void close_noop(uv_handle_t *h) { (void)h; }

typedef struct w7_job {
    uv_work_t req;
    uintptr_t arg;
    uintptr_t result;
} w7_job;
static long n_bad;

static void w7_work(uv_work_t *req) {
    w7_job *j = (w7_job *)req;
    j->result = j->arg + 1;
}

static void w7_after(uv_work_t *req, int status) {
    w7_job *j = (w7_job *)req;
    if (status != 0 || j->result != j->arg + 1)
        n_bad++;
    n_cb++;
}

static void close_idles(uv_loop_t *loop, long n) {
    for (long i = 0; i < n; i++)
        uv_close((uv_handle_t *)&idles[i], close_noop);
    uv_run(loop, UV_RUN_DEFAULT);
}

/* W6: the host's own queue (post_queue.h) and uv_async_send to wake. */
static post_queue w6_q;
static uv_async_t w6_async;
static uv_loop_t *w6_loop;

static void w6_cb(void *arg) {
    (void)arg;
    if (++n_cb == n_target)
        uv_stop(w6_loop);
}

static void w6_async_cb(uv_async_t *a) {
    (void)a;
    post_queue_run(&w6_q);
}

static int w6_post(long i) {
    (void)i;
    if (post_queue_push(&w6_q, w6_cb, NULL) != 0)
        return -1;
    return uv_async_send(&w6_async);
}

int main(int argc, char **argv) {
    if (argc < 2)
        bench_usage(argv[0]);
    const char *w = argv[1];
    if (strcmp(w, "version") == 0) {
        printf("%s\n", uv_version_string());
        return 0;
    }
    long n = bench_n(argc, argv);
    uv_loop_t loop;
    bench_check(uv_loop_init(&loop) == 0, IMPL, w, "uv_loop_init");
    bench_mark t0, t1;

    if (strcmp(w, "W1") == 0 || strcmp(w, "W1-fd") == 0) {
        uv_idle_t idle;
        int fds[2] = {-1, -1};
        uv_idle_init(&loop, &idle);
        if (w[2] == '-') {
            bench_check(pipe(fds) == 0, IMPL, w, "pipe");
            uv_poll_init(&loop, &w1_poll, fds[0]);
            uv_poll_start(&w1_poll, UV_READABLE, poll_cb);
        }
        n_target = n;
        t0 = bench_mark_now();
        uv_idle_start(&idle, w1_cb);
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "callback count");
        uv_close((uv_handle_t *)&idle, close_noop);
        if (fds[0] >= 0)
            uv_close((uv_handle_t *)&w1_poll, close_noop);
        uv_run(&loop, UV_RUN_DEFAULT);
    } else if (strcmp(w, "W2") == 0 || strcmp(w, "W2-inloop") == 0) {
        int inloop = w[2] != '\0';
        uv_idle_t first;
        n_total = n;
        t0 = bench_mark_now();
        idles = malloc((size_t)n * sizeof *idles);
        bench_check(idles != NULL, IMPL, w, "malloc");
        if (inloop) {
            uv_idle_init(&loop, &first);
            uv_idle_start(&first, w2_first_cb);
        } else {
            start_all_idles(&loop);
        }
        if (!inloop)
            bench_sched_end = bench_now();
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "callback count");
        if (inloop)
            uv_close((uv_handle_t *)&first, close_noop);
        close_idles(&loop, n);
        free(idles);
    } else if (strcmp(w, "W6") == 0) {
        post_queue_init(&w6_q);
        w6_loop = &loop;
        uv_async_init(&loop, &w6_async, w6_async_cb);
        n_target = n;
        bench_poster poster = {n, w6_post, 0, 0, 0};
        pthread_t tid;
        t0 = bench_mark_now();
        bench_check(pthread_create(&tid, NULL, bench_poster_main, &poster) == 0, IMPL, w, "pthread_create");
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_mark_now();
        pthread_join(tid, NULL);
        bench_sched_end = poster.end;
        bench_check(!poster.failed && n_cb == n, IMPL, w, "callback count");
        uv_close((uv_handle_t *)&w6_async, close_noop);
        uv_run(&loop, UV_RUN_DEFAULT);
    } else if (strcmp(w, "W3") == 0 || strcmp(w, "W3c") == 0) {
        int cancel = w[2] == 'c';
        t0 = bench_mark_now();
        uv_timer_t *timers = malloc((size_t)n * sizeof *timers);
        bench_check(timers != NULL, IMPL, w, "malloc");
        for (long i = 0; i < n; i++) {
            uv_timer_init(&loop, &timers[i]);
            timers[i].data = (void *)(intptr_t)i;
            uv_timer_start(&timers[i], timer_cb, (uint64_t)(i / 1000), 0);
        }
        if (cancel)
            for (long i = 1; i < n; i += 2)
                uv_timer_stop(&timers[i]);
        bench_sched_end = bench_now();
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_mark_now();
        bench_check(n_cb == (cancel ? n / 2 : n), IMPL, w, "timer count");
        bench_check(!cancel || n_odd_fired == 0, IMPL, w, "a cancelled timer ran");
        for (long i = 0; i < n; i++)
            uv_close((uv_handle_t *)&timers[i], close_noop);
        uv_run(&loop, UV_RUN_DEFAULT);
        free(timers);
    } else if (strcmp(w, "W7") == 0 || strcmp(w, "W7-4") == 0 ||
               strcmp(w, "W7q") == 0 || strcmp(w, "W7q-4") == 0) {
        /* W7q is W7: uv_queue_work is already the no-future shape. The pool is
         * created at the first uv_queue_work and reads the env then. */
        if (strchr(w, '-') != NULL)
            setenv("UV_THREADPOOL_SIZE", "4", 1);
        else
            unsetenv("UV_THREADPOOL_SIZE");
        t0 = bench_mark_now();
        w7_job *jobs = malloc((size_t)n * sizeof *jobs);
        bench_check(jobs != NULL, IMPL, w, "malloc");
        for (long i = 0; i < n; i++) {
            jobs[i].arg = (uintptr_t)i;
            jobs[i].result = 0;
            bench_check(uv_queue_work(&loop, &jobs[i].req, w7_work, w7_after) == 0, IMPL, w,
                        "uv_queue_work");
        }
        bench_sched_end = bench_now();
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "job count");
        bench_check(n_bad == 0, IMPL, w, "job results");
        free(jobs);
    } else {
        bench_usage(argv[0]);
        return 2;
    }
    bench_report(IMPL, w, n, t0, t1);
    bench_check(uv_loop_close(&loop) == 0, IMPL, w, "uv_loop_close");
    return 0;
}
