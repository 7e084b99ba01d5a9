/* SPDX-License-Identifier: MIT */
/* ll_loop_next_timeout (libuv's uv_backend_timeout): -1 with nothing
 * scheduled, 0 with a callback ready, else the milliseconds to the first
 * live timer, rounded up; timers and calls made from C while the loop is
 * idle count; bad ids and closed loops get codes. And the loop it serves:
 * a host's own poll() on ll_loop_backend_fd for that long, then one
 * LL_RUN_NOWAIT iteration, runs timers on time, I/O and posts from other
 * threads. */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static void on_call(ll_loop loop, void *arg) {
    (void)loop;
    ++*(int *)arg;
}

static void test_values(void) {
    ll_loop loop = 0;
    ll_handle t1 = 0, t2 = 0;
    int n = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), -1);
    CHECK_EQ_INT(ll_call_later(loop, 0.25, on_call, &n, &t1), 0);
    int ms = ll_loop_next_timeout(loop);
    CHECK(ms > 200 && ms <= 250);
    CHECK_EQ_INT(ll_call_later(loop, 0.0001, on_call, &n, NULL), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), 1); /* 100 us rounds up */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(ll_call_later(loop, 30, on_call, &n, &t2), 0);
    CHECK_EQ_INT(ll_handle_cancel(t1), 0); /* a cancelled first timer no longer counts */
    ms = ll_loop_next_timeout(loop);
    CHECK(ms > 29000 && ms <= 30000);
    CHECK_EQ_INT(ll_call_soon(loop, on_call, &n, NULL), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(ll_call_at(loop, ll_loop_time(loop) - 1, on_call, &n, NULL), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), 0); /* due already */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(ll_loop_stop(loop), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), 0); /* stopping */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(ll_handle_cancel(t2), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), -1);
    CHECK_EQ_INT(ll_release(t1), 0);
    CHECK_EQ_INT(ll_release(t2), 0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(ll_loop_next_timeout(loop), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_next_timeout(0), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_next_timeout(t1), LL_EBADHANDLE);
}

/* The embedding: the host's loop owns the thread and polls the backend fd
 * beside an fd of its own; libloop runs one iteration per wakeup. */
static ll_loop host_loop;
static int timer_fired, io_reads, posts;
static double fired_late;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double due;
static void on_timer(ll_loop loop, void *arg) {
    (void)arg;
    fired_late = ll_loop_time(loop) - due;
    timer_fired++;
}

static void on_read(ll_loop loop, int fd, void *arg) {
    (void)loop, (void)arg;
    char c;
    CHECK_EQ_INT(read(fd, &c, 1), 1);
    io_reads++;
}

static void on_post(ll_loop loop, void *arg) {
    (void)loop, (void)arg;
    posts++;
}

/* Two posts while the host sleeps: after the first has woken the loop,
 * the second must wake it too (ll_loop_next_timeout re-arms the post
 * queue's wakeup, as a blocking poll does). */
static void *poster(void *arg) {
    (void)arg;
    usleep(50000);
    CHECK_EQ_INT(ll_call_soon_threadsafe(host_loop, on_post, NULL), 0);
    usleep(100000);
    CHECK_EQ_INT(ll_call_soon_threadsafe(host_loop, on_post, NULL), 0);
    return NULL;
}

static void test_embedded_in_poll(void) {
    CHECK_EQ_INT(ll_loop_new(&host_loop), 0);
    int bfd = ll_loop_backend_fd(host_loop);
    CHECK(bfd >= 0);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    CHECK_EQ_INT(ll_add_reader(host_loop, p[0], on_read, NULL), 0);
    due = ll_loop_time(host_loop) + 0.03;
    CHECK_EQ_INT(ll_call_at(host_loop, due, on_timer, NULL, NULL), 0);
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, poster, NULL), 0);
    double t0 = now_s();
    int wrote = 0;
    while ((timer_fired == 0 || posts < 2 || io_reads == 0) && now_s() - t0 < 5) {
        int timeout = ll_loop_next_timeout(host_loop);
        CHECK(timeout >= -1);
        if (timeout < 0 || timeout > 1000)
            timeout = 1000; /* the host's own bound */
        struct pollfd pfd = {.fd = bfd, .events = POLLIN};
        CHECK(poll(&pfd, 1, timeout) >= 0);
        CHECK_EQ_INT(ll_loop_run_once(host_loop, LL_RUN_NOWAIT), 0);
        if (timer_fired && !wrote) { /* then I/O, once the timer has run */
            CHECK_EQ_INT(write(p[1], "x", 1), 1);
            wrote = 1;
        }
    }
    CHECK_EQ_INT(pthread_join(th, NULL), 0);
    CHECK_EQ_INT(timer_fired, 1);
    CHECK(fired_late >= 0 && fired_late < 0.5); /* never early */
    CHECK_EQ_INT(io_reads, 1);
    CHECK_EQ_INT(posts, 2);
    CHECK(now_s() - t0 < 0.9); /* each post woke the host's poll: no 1 s wait */
    CHECK_EQ_INT(ll_loop_next_timeout(host_loop), -1);
    CHECK_EQ_INT(ll_release(host_loop), 0);
    close(p[0]);
    close(p[1]);
}

int main(void) {
    RUN_TEST(test_values);
    RUN_TEST(test_embedded_in_poll);
    return CHECK_REPORT();
}
