/* SPDX-License-Identifier: MIT */
/* Loop metrics (ll_loop_stats): the totals rise by what the loop did, the
 * current counts match what was registered, idle time grows while the loop
 * is blocked and not while it is busy, and the struct can grow. */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static struct ll_loop_stats stats_of(ll_loop loop) {
    struct ll_loop_stats st = {.size = sizeof st};
    CHECK_EQ_INT(ll_loop_stats(loop, &st), 0);
    return st;
}

static void noop_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

static void noop_io(ll_loop loop, int fd, void *arg) {
    (void)loop;
    (void)fd;
    (void)arg;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

/* A chain: each callback schedules the next (the C-side fast path) until
 * *left reaches 0, then stops the loop. */
static void chain_cb(ll_loop loop, void *arg) {
    long *left = arg;
    if (--*left > 0)
        ll_call_soon(loop, chain_cb, left, NULL);
    else
        ll_loop_stop(loop);
}

static void test_callbacks_and_iterations(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    struct ll_loop_stats a = stats_of(loop);
    CHECK_EQ_INT(a.size, sizeof a);
    CHECK_EQ_INT(a.iterations, 0);
    CHECK_EQ_INT(a.callbacks, 0);

    long left = 1000;
    CHECK_EQ_INT(ll_call_soon(loop, chain_cb, &left, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    struct ll_loop_stats b = stats_of(loop);
    CHECK_EQ_INT(b.callbacks - a.callbacks, 1000);
    CHECK_EQ_INT(b.iterations - a.iterations, 1000); /* one callback per iteration */
    CHECK_EQ_INT(b.ready, 0);

    /* Fan-out: 500 ready before the run, all run in one iteration. */
    for (int i = 0; i < 500; i++)
        CHECK_EQ_INT(ll_call_soon(loop, noop_cb, NULL, NULL), 0);
    ll_handle h;
    CHECK_EQ_INT(ll_call_soon(loop, noop_cb, NULL, &h), 0);
    CHECK_EQ_INT(ll_handle_cancel(h), 0); /* cancelled: never runs, not counted */
    CHECK_EQ_INT(stats_of(loop).ready, 501);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    struct ll_loop_stats c = stats_of(loop);
    CHECK_EQ_INT(c.callbacks - b.callbacks, 500);
    CHECK_EQ_INT(c.iterations - b.iterations, 1);
    CHECK_EQ_INT(c.ready, 0);
    CHECK_EQ_INT(ll_release(h), 0);

    /* Thread-safe posts are callbacks too, counted when they run. */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_call_soon_threadsafe(loop, noop_cb, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    struct ll_loop_stats d = stats_of(loop);
    CHECK_EQ_INT(d.callbacks - c.callbacks, 3);
    CHECK_EQ_INT(d.ready, 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* From a callback: call_soon requests still held on the C side count as ready. */
static void probe_cb(ll_loop loop, void *arg) {
    for (int i = 0; i < 3; i++)
        ll_call_soon(loop, noop_cb, NULL, NULL);
    *(struct ll_loop_stats *)arg = stats_of(loop);
}

static void test_from_a_callback(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    struct ll_loop_stats in = {0};
    CHECK_EQ_INT(ll_call_soon(loop, probe_cb, &in, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(in.size, sizeof in);
    CHECK_EQ_INT(in.ready, 3);
    CHECK_EQ_INT(in.iterations, 1);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static void test_timer_fd_task_counts(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    ll_handle t[5];
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(ll_call_later(loop, 10.0 + i, noop_cb, NULL, &t[i]), 0);
    CHECK_EQ_INT(ll_handle_cancel(t[1]), 0);
    CHECK_EQ_INT(ll_handle_cancel(t[3]), 0);
    CHECK_EQ_INT(stats_of(loop).timers, 3);
    /* Timers with no handle are kept apart by the loop; they count too. */
    CHECK_EQ_INT(ll_call_later(loop, 20.0, noop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_call_at(loop, ll_loop_time(loop) + 20.0, noop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(stats_of(loop).timers, 5);

    int p[2], q[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(pipe(q), 0);
    CHECK_EQ_INT(stats_of(loop).fds, 0);
    CHECK_EQ_INT(ll_add_reader(loop, p[0], noop_io, NULL), 0);
    CHECK_EQ_INT(ll_add_writer(loop, q[1], noop_io, NULL), 0);
    CHECK_EQ_INT(ll_add_reader(loop, q[1], noop_io, NULL), 0); /* same fd: still one */
    CHECK_EQ_INT(stats_of(loop).fds, 2);
    CHECK_EQ_INT(ll_remove_writer(loop, q[1]), 1);
    CHECK_EQ_INT(stats_of(loop).fds, 2); /* its reader remains */
    CHECK_EQ_INT(ll_remove_reader(loop, q[1]), 1);
    CHECK_EQ_INT(stats_of(loop).fds, 1);

    /* Events: the pipe made readable is reported once per poll. */
    struct ll_loop_stats a = stats_of(loop);
    CHECK_EQ_INT(write(p[1], "x", 1), 1);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    struct ll_loop_stats b = stats_of(loop);
    CHECK_EQ_INT(b.events - a.events, 1);
    CHECK_EQ_INT(b.callbacks - a.callbacks, 1); /* the reader ran */
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 1);
    CHECK_EQ_INT(stats_of(loop).fds, 0);

    ll_future f;
    CHECK_EQ_INT(ll_future_new(loop, &f), 0);
    CHECK_EQ_INT(stats_of(loop).tasks, 0);
    CHECK_EQ_INT(ll_release(f), 0);

    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(ll_release(t[i]), 0);
    close(p[0]);
    close(p[1]);
    close(q[0]);
    close(q[1]);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A task that awaits a sleep of *arg seconds once, then returns. */
static void sleeper_step(ll_task task, void *arg) {
    ll_future woke = 0;
    ll_task_awaited(task, &woke);
    if (woke != 0) {
        ll_task_return(task, 0, NULL);
        return;
    }
    ll_loop loop;
    ll_future_get_loop(task, &loop);
    ll_future s;
    ll_sleep(loop, *(double *)arg, &s);
    ll_task_await(task, s);
    ll_release(s);
}

static void test_tasks(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    double delay = 0.001;
    ll_task t[3];
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_task_new(loop, sleeper_step, &delay, &t[i]), 0);
    CHECK_EQ_INT(stats_of(loop).tasks, 3);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0); /* first steps: each now sleeps */
    struct ll_loop_stats mid = stats_of(loop);
    CHECK_EQ_INT(mid.tasks, 3);
    CHECK_EQ_INT(mid.timers, 3);
    ll_future all;
    CHECK_EQ_INT(ll_gather(loop, 3, t, 0, &all), 0);
    CHECK_EQ_INT(ll_loop_run_until_complete(loop, all), 0);
    struct ll_loop_stats end = stats_of(loop);
    CHECK_EQ_INT(end.tasks, 0);
    CHECK_EQ_INT(end.timers, 0);
    CHECK(end.callbacks >= mid.callbacks + 3); /* at least the second steps */
    CHECK_EQ_INT(ll_release(all), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_release(t[i]), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_cb(ll_loop loop, void *arg) {
    (void)loop;
    uint64_t until = now_ns() + *(uint64_t *)arg;
    while (now_ns() < until) {
    }
}

static void test_idle_and_busy_time(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    /* Blocked 50 ms in poll, waiting for a timer: idle grows by about that. */
    struct ll_loop_stats a = stats_of(loop);
    CHECK_EQ_INT(ll_call_later(loop, 0.05, stop_cb, NULL, NULL), 0);
    uint64_t t0 = now_ns();
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    uint64_t wall = now_ns() - t0;
    struct ll_loop_stats b = stats_of(loop);
    uint64_t idle = b.idle_ns - a.idle_ns, run = b.running_ns - a.running_ns;
    CHECK(idle >= 45000000u);
    CHECK(run >= idle);
    CHECK(run <= wall);
    CHECK(run - idle < 20000000u); /* busy: well under the 50 ms */

    /* Busy 50 ms in a callback: running grows, idle hardly. */
    uint64_t spin = 50000000u;
    CHECK_EQ_INT(ll_call_soon(loop, spin_cb, &spin, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, stop_cb, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    struct ll_loop_stats c = stats_of(loop);
    CHECK(c.running_ns - b.running_ns >= spin);
    CHECK(c.idle_ns - b.idle_ns < 5000000u);

    /* A non-blocking iteration is not timed; a blocking one is. */
    CHECK_EQ_INT(ll_call_soon(loop, spin_cb, &spin, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    struct ll_loop_stats d = stats_of(loop);
    CHECK_EQ_INT(d.running_ns, c.running_ns);
    CHECK_EQ_INT(ll_call_soon(loop, spin_cb, &spin, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK(stats_of(loop).running_ns - d.running_ns >= spin);

    /* A closed loop still reports its totals. */
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    struct ll_loop_stats e = stats_of(loop);
    CHECK(e.iterations >= d.iterations + 1);
    CHECK_EQ_INT(e.timers, 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

/* A caller built against a bigger (newer) struct gets the fields this
 * library knows and the size it filled; the rest is left alone. */
struct stats_v9 {
    struct ll_loop_stats v1;
    uint64_t future_field;
};

static void test_struct_sizes(void) {
    ll_loop loop;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_call_soon(loop, noop_cb, NULL, NULL), 0);
    struct stats_v9 big = {.v1 = {.size = sizeof big}, .future_field = 42};
    CHECK_EQ_INT(ll_loop_stats(loop, &big.v1), 0);
    CHECK_EQ_INT(big.v1.size, sizeof(struct ll_loop_stats));
    CHECK_EQ_INT(big.v1.ready, 1);
    CHECK_EQ_INT(big.future_field, 42);
    struct ll_loop_stats exact = {.size = LL_LOOP_STATS_V1_SIZE};
    CHECK_EQ_INT(ll_loop_stats(loop, &exact), 0);
    CHECK_EQ_INT(exact.ready, 1);
    CHECK_EQ_INT(ll_release(loop), 0);
}

int main(void) {
    RUN_TEST(test_callbacks_and_iterations);
    RUN_TEST(test_from_a_callback);
    RUN_TEST(test_timer_fd_task_counts);
    RUN_TEST(test_tasks);
    RUN_TEST(test_idle_and_busy_time);
    RUN_TEST(test_struct_sizes);
    return CHECK_REPORT();
}
