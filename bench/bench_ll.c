/*
 * bench_ll.c — libloop, driven from C through include/libloop.h, for
 * workloads W1, W1-fd, W2, W2-inloop, W3, W3c.
 * Usage: bench_ll WORKLOAD [N]   (N defaults to 1,000,000; one workload per process;
 *        `bench_ll version` prints the library version)
 *
 * W1 callback chain: a callback counts and schedules the next with
 *    ll_call_soon(loop, cb, arg, NULL) (the C-side fast path); the Nth calls
 *    ll_loop_stop. Run with ll_loop_run_forever. Each callback is one loop
 *    iteration (a callback added while the loop runs waits for the next
 *    iteration, as in asyncio). ns per callback.
 * W1-fd: W1 with the read end of an idle pipe watched (ll_add_reader), as
 *    any loop serving a socket would; libloop then polls every iteration
 *    (with no fd watched it skips the non-blocking poll). Nothing arrives.
 * W2 fan-out: N ll_call_soon(..., NULL) from outside the loop (each one
 *    enters Go), then ll_loop_run_forever; the Nth callback calls
 *    ll_loop_stop. ns per callback, scheduling included.
 * W2-inloop: one callback scheduled from outside schedules the N from inside
 *    the loop (libloop's C-side queue, no Go crossing per call).
 * W3 timers: N ll_call_later(loop, i/1e6 s, noop, i, NULL); the loop is
 *    stopped by the last timer to fire. CPU s, wall s, peak RSS.
 * W3c: as W3 but every call asks for a handle; every other one (odd i) is
 *    cancelled with ll_handle_cancel before the loop runs. All handles are
 *    ll_release'd after the measured region (as bench_uv's uv_close teardown).
 */
#include "common.h"
#include <libloop.h>
#include <unistd.h>

static const char *IMPL = "libloop";
static long n_cb;
static long n_target;
static long n_odd_fired;
static long n_total;

static void die_rc(const char *w, const char *what, int rc) {
    fprintf(stderr, "%s %s: %s failed: %s (%d)\n", IMPL, w, what, ll_err_name(rc), rc);
    exit(2);
}

static void w1_cb(ll_loop loop, void *arg) {
    if (++n_cb == n_target) {
        ll_loop_stop(loop);
        return;
    }
    int rc = ll_call_soon(loop, w1_cb, arg, NULL);
    if (rc != 0)
        die_rc("W1", "ll_call_soon", rc);
}

static void reader_cb(ll_loop loop, int fd, void *arg) {
    (void)loop;
    (void)fd;
    (void)arg;
    fprintf(stderr, "libloop W1-fd: the idle pipe became readable\n");
    exit(2);
}

static void counting_cb(ll_loop loop, void *arg) {
    (void)arg;
    if (++n_cb == n_target)
        ll_loop_stop(loop);
}

static void w2_first_cb(ll_loop loop, void *arg) {
    (void)arg;
    for (long i = 0; i < n_total; i++) {
        int rc = ll_call_soon(loop, counting_cb, NULL, NULL);
        if (rc != 0)
            die_rc("W2-inloop", "ll_call_soon", rc);
    }
}

static void timer_cb(ll_loop loop, void *arg) {
    if ((long)(intptr_t)arg & 1)
        n_odd_fired++;
    if (++n_cb == n_target)
        ll_loop_stop(loop);
}

int main(int argc, char **argv) {
    if (argc < 2)
        bench_usage(argv[0]);
    const char *w = argv[1];
    if (strcmp(w, "version") == 0) {
        printf("%s\n", ll_version_string());
        return 0;
    }
    long n = bench_n(argc, argv);
    ll_loop loop;
    int rc = ll_loop_new(&loop);
    if (rc != 0)
        die_rc(w, "ll_loop_new", rc);
    bench_mark t0, t1;

    if (strcmp(w, "W1") == 0 || strcmp(w, "W1-fd") == 0) {
        int fds[2] = {-1, -1};
        if (w[2] == '-') {
            bench_check(pipe(fds) == 0, IMPL, w, "pipe");
            if ((rc = ll_add_reader(loop, fds[0], reader_cb, NULL)) != 0)
                die_rc(w, "ll_add_reader", rc);
        }
        n_target = n;
        t0 = bench_mark_now();
        if ((rc = ll_call_soon(loop, w1_cb, NULL, NULL)) != 0)
            die_rc(w, "ll_call_soon", rc);
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc(w, "ll_loop_run_forever", rc);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "callback count");
        if (fds[0] >= 0)
            ll_remove_reader(loop, fds[0]);
    } else if (strcmp(w, "W2") == 0) {
        n_target = n;
        t0 = bench_mark_now();
        for (long i = 0; i < n; i++)
            if ((rc = ll_call_soon(loop, counting_cb, NULL, NULL)) != 0)
                die_rc(w, "ll_call_soon", rc);
        bench_sched_end = bench_now();
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc(w, "ll_loop_run_forever", rc);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "callback count");
    } else if (strcmp(w, "W2-inloop") == 0) {
        n_target = n;
        n_total = n;
        t0 = bench_mark_now();
        if ((rc = ll_call_soon(loop, w2_first_cb, NULL, NULL)) != 0)
            die_rc(w, "ll_call_soon", rc);
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc(w, "ll_loop_run_forever", rc);
        t1 = bench_mark_now();
        bench_check(n_cb == n, IMPL, w, "callback count");
    } else if (strcmp(w, "W3") == 0 || strcmp(w, "W3c") == 0) {
        int cancel = w[2] == 'c';
        ll_handle *handles = NULL;
        n_target = cancel ? n / 2 : n;
        t0 = bench_mark_now();
        if (cancel) {
            handles = malloc((size_t)n * sizeof *handles);
            bench_check(handles != NULL, IMPL, w, "malloc");
        }
        for (long i = 0; i < n; i++) {
            rc = ll_call_later(loop, (double)i / 1e6, timer_cb, (void *)(intptr_t)i,
                               cancel ? &handles[i] : NULL);
            if (rc != 0)
                die_rc(w, "ll_call_later", rc);
        }
        if (cancel)
            for (long i = 1; i < n; i += 2)
                if ((rc = ll_handle_cancel(handles[i])) != 0)
                    die_rc(w, "ll_handle_cancel", rc);
        bench_sched_end = bench_now();
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc(w, "ll_loop_run_forever", rc);
        t1 = bench_mark_now();
        bench_check(n_cb == n_target, IMPL, w, "timer count");
        bench_check(!cancel || n_odd_fired == 0, IMPL, w, "a cancelled timer ran");
        if (cancel) {
            for (long i = 0; i < n; i++)
                if ((rc = ll_release(handles[i])) != 0)
                    die_rc(w, "ll_release", rc);
            free(handles);
        }
    } else {
        bench_usage(argv[0]);
        return 2;
    }
    bench_report(IMPL, w, n, t0, t1);
    if ((rc = ll_release(loop)) != 0)
        die_rc(w, "ll_release(loop)", rc);
    return 0;
}
