/* SPDX-License-Identifier: MIT */
/*
 * bench_ll.c — libloop, driven from C through include/libloop.h, for
 * workloads W1, W1-fd, W2, W2-inloop, W3, W3c, W7, W7-4, T-sleep, T-yield.
 * Usage: bench_ll WORKLOAD [N]   (N defaults to 1,000,000, W7 100,000 jobs,
 *        T-* 10,000 tasks; one workload per process; `bench_ll version`
 *        prints the library version)
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
 * W7 executor: N ll_run_in_executor(loop, work, (void *)i, &fut[i]) from
 *    outside the loop (the work function returns arg + 1), one
 *    ll_gather(loop, N, futs, 0, &all), ll_loop_run_until_complete(loop, all),
 *    then every ll_future_result read and checked (= i + 1) — all inside the
 *    measured region, as libuv's after_work reads its result. Default pool
 *    (min(32, ncpu + 4) workers). Jobs per second. The N + 1 futures are
 *    ll_release'd after the region.
 * W7-4: W7 after ll_loop_set_executor_workers(loop, 4).
 * W7q, W7q-4: the same N jobs through ll_queue_work(loop, work, after, &job[i])
 *    — libuv's uv_queue_work shape: no future, the result kept in the job
 *    struct, after(loop, &job) on the loop thread checks it and counts; the
 *    last one stops the loop. The fair counterpart of bench_uv's W7.
 * T-sleep task steps: N tasks (ll_task_new from outside the loop), each a
 *    step function that awaits a zero-delay sleep BENCH_T_AWAITS (100) times —
 *    ll_sleep(loop, 0, &f); ll_task_await(task, f); ll_release(f) — and
 *    returns (ll_task_return) in its 101st step; the last task to return calls
 *    ll_loop_stop; ll_loop_run_forever. ns per task step (wall / (N * 101)),
 *    task creation included. Tasks are ll_release'd after the region.
 * T-yield: T-sleep with ll_task_yield(task) instead of sleep + await +
 *    release (the cheapest suspension).
 * libuv and libev have no tasks; libev has no thread pool (no W7).
 */
#include "common.h"
#include <libloop.h>
#include <pthread.h>
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

static uintptr_t w7_work(void *arg, int *err) {
    (void)err;
    return (uintptr_t)arg + 1;
}

/* W7q: one job struct per request, as libuv's uv_work_t. */
typedef struct w7q_job {
    uintptr_t arg;
    uintptr_t result;
} w7q_job;
static long w7q_bad;

static void w7q_work(void *arg) {
    w7q_job *j = arg;
    j->result = j->arg + 1;
}

static void w7q_after(ll_loop loop, void *arg) {
    w7q_job *j = arg;
    if (j->result != j->arg + 1)
        w7q_bad++;
    if (++n_cb == n_target)
        ll_loop_stop(loop);
}

/* T-*: one counter per task (its arg) of suspensions done so far. */
static ll_loop t_loop;
static long t_tasks_done;
static long t_steps;

static void t_finish(ll_task task, const char *w) {
    int rc = ll_task_return(task, 0, NULL);
    if (rc != 0)
        die_rc(w, "ll_task_return", rc);
    if (++t_tasks_done == n_target)
        ll_loop_stop(t_loop);
}

static void t_sleep_step(ll_task task, void *arg) {
    long *awaited = arg;
    t_steps++;
    if (*awaited == BENCH_T_AWAITS) {
        t_finish(task, "T-sleep");
        return;
    }
    ++*awaited;
    ll_future f;
    int rc = ll_sleep(t_loop, 0, &f);
    if (rc != 0)
        die_rc("T-sleep", "ll_sleep", rc);
    if ((rc = ll_task_await(task, f)) != 0)
        die_rc("T-sleep", "ll_task_await", rc);
    if ((rc = ll_release(f)) != 0)
        die_rc("T-sleep", "ll_release", rc);
}

static void t_yield_step(ll_task task, void *arg) {
    long *awaited = arg;
    t_steps++;
    if (*awaited == BENCH_T_AWAITS) {
        t_finish(task, "T-yield");
        return;
    }
    ++*awaited;
    int rc = ll_task_yield(task);
    if (rc != 0)
        die_rc("T-yield", "ll_task_yield", rc);
}

/* W6: ll_call_soon_threadsafe from the poster thread. */
static ll_loop w6_loop;

static int w6_post(long i) {
    (void)i;
    return ll_call_soon_threadsafe(w6_loop, counting_cb, NULL);
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
    } else if (strcmp(w, "W6") == 0) {
        w6_loop = loop;
        n_target = n;
        bench_poster poster = {n, w6_post, 0, 0, 0};
        pthread_t tid;
        t0 = bench_mark_now();
        bench_check(pthread_create(&tid, NULL, bench_poster_main, &poster) == 0, IMPL, w, "pthread_create");
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc(w, "ll_loop_run_forever", rc);
        t1 = bench_mark_now();
        pthread_join(tid, NULL);
        bench_sched_end = poster.end;
        bench_check(!poster.failed && n_cb == n, IMPL, w, "callback count");
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
    } else if (strcmp(w, "W7") == 0 || strcmp(w, "W7-4") == 0) {
        if (w[2] == '-' && (rc = ll_loop_set_executor_workers(loop, 4)) != 0)
            die_rc(w, "ll_loop_set_executor_workers", rc);
        ll_future all;
        t0 = bench_mark_now();
        ll_future *futs = malloc((size_t)n * sizeof *futs);
        bench_check(futs != NULL, IMPL, w, "malloc");
        for (long i = 0; i < n; i++)
            if ((rc = ll_run_in_executor(loop, w7_work, (void *)(intptr_t)i, &futs[i])) != 0)
                die_rc(w, "ll_run_in_executor", rc);
        if ((rc = ll_gather(loop, (size_t)n, futs, 0, &all)) != 0)
            die_rc(w, "ll_gather", rc);
        bench_sched_end = bench_now();
        if ((rc = ll_loop_run_until_complete(loop, all)) != 0)
            die_rc(w, "ll_loop_run_until_complete", rc);
        uintptr_t v = 0;
        if ((rc = ll_future_result(all, &v)) != 0)
            die_rc(w, "ll_future_result(gather)", rc);
        bench_check(v == (uintptr_t)n, IMPL, w, "gather result");
        for (long i = 0; i < n; i++) {
            if ((rc = ll_future_result(futs[i], &v)) != 0)
                die_rc(w, "ll_future_result", rc);
            bench_check(v == (uintptr_t)i + 1, IMPL, w, "job result");
        }
        t1 = bench_mark_now();
        for (long i = 0; i < n; i++)
            if ((rc = ll_release(futs[i])) != 0)
                die_rc(w, "ll_release", rc);
        if ((rc = ll_release(all)) != 0)
            die_rc(w, "ll_release(gather)", rc);
        free(futs);
    } else if (strcmp(w, "W7q") == 0 || strcmp(w, "W7q-4") == 0) {
        if (w[3] == '-' && (rc = ll_loop_set_executor_workers(loop, 4)) != 0)
            die_rc(w, "ll_loop_set_executor_workers", rc);
        w7q_job *jobs = calloc((size_t)n, sizeof *jobs);
        bench_check(jobs != NULL, IMPL, w, "malloc");
        n_target = n;
        t0 = bench_mark_now();
        for (long i = 0; i < n; i++) {
            jobs[i].arg = (uintptr_t)i;
            if ((rc = ll_queue_work(loop, w7q_work, w7q_after, &jobs[i])) != 0)
                die_rc(w, "ll_queue_work", rc);
        }
        bench_sched_end = bench_now();
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc(w, "ll_loop_run_forever", rc);
        t1 = bench_mark_now();
        bench_check(n_cb == n && w7q_bad == 0, IMPL, w, "every job's after ran with its result");
        free(jobs);
    } else if (strcmp(w, "T-sleep") == 0 || strcmp(w, "T-yield") == 0) {
        ll_step_fn step = w[2] == 's' ? t_sleep_step : t_yield_step;
        long ntasks = n;
        t_loop = loop;
        n_target = ntasks;
        long *awaited = calloc((size_t)ntasks, sizeof *awaited);
        ll_task *tasks = malloc((size_t)ntasks * sizeof *tasks);
        bench_check(awaited != NULL && tasks != NULL, IMPL, w, "malloc");
        t0 = bench_mark_now();
        for (long i = 0; i < ntasks; i++)
            if ((rc = ll_task_new(loop, step, &awaited[i], &tasks[i])) != 0)
                die_rc(w, "ll_task_new", rc);
        bench_sched_end = bench_now();
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc(w, "ll_loop_run_forever", rc);
        t1 = bench_mark_now();
        n = ntasks * (BENCH_T_AWAITS + 1); /* reported per task step */
        bench_check(t_tasks_done == ntasks, IMPL, w, "tasks done");
        bench_check(t_steps == n, IMPL, w, "step count");
        for (long i = 0; i < ntasks; i++) {
            bench_check(awaited[i] == BENCH_T_AWAITS, IMPL, w, "suspensions per task");
            bench_check(ll_future_state(tasks[i]) == LL_FINISHED, IMPL, w, "task finished");
            if ((rc = ll_release(tasks[i])) != 0)
                die_rc(w, "ll_release(task)", rc);
        }
        free(tasks);
        free(awaited);
    } else {
        bench_usage(argv[0]);
        return 2;
    }
    bench_report(IMPL, w, n, t0, t1);
    if ((rc = ll_release(loop)) != 0)
        die_rc(w, "ll_release(loop)", rc);
    return 0;
}
