/* SPDX-License-Identifier: MIT */
/* Iterations run in the host's batch (libloop/chain.go): while a chain of
 * ll_call_soon callbacks is all the loop has, the C side runs the next
 * iterations itself. These tests pin what a user sees to asyncio's
 * iteration rules, the same whichever side runs the iteration: an fd that
 * becomes ready, a timer, a handle, a post from another thread, a stop,
 * debug mode and ll_loop_run_once each land in exactly the iteration where
 * asyncio puts them. Each case is also run under ll_loop_run_once (where
 * no chain is allowed) and both orders must match. */
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "libloop/stats.h"
#include "check.h"

/* One log of what ran, in order: step numbers (>= 0) and markers. */
#define LOG_MAX 4096
enum { M_READER = -1, M_TIMER = -2, M_HANDLE = -3, M_AFTER = -4 };

struct chain {
    int step, last;
    int log[LOG_MAX];
    int nlog;
    int pipe_fd[2];
    int write_at, timer_at, handle_at, stop_at, debug_at, sleep_at;
    int reader_runs;
    int drain;      /* the reader drains the pipe (else it stays readable) */
    int slow_seen;  /* slow-callback reports (debug mode) */
};

static void logit(struct chain *c, int v) {
    if (c->nlog < LOG_MAX)
        c->log[c->nlog++] = v;
}

static void on_reader(ll_loop loop, int fd, void *arg) {
    (void)loop;
    struct chain *c = arg;
    c->reader_runs++;
    logit(c, M_READER);
    if (c->drain) {
        char buf[64];
        CHECK(read(fd, buf, sizeof buf) > 0);
    }
}

static void on_timer(ll_loop loop, void *arg) {
    (void)loop;
    logit(arg, M_TIMER);
}

static void on_handle(ll_loop loop, void *arg) {
    (void)loop;
    logit(arg, M_HANDLE);
}

static void after_cb(ll_loop loop, void *arg) {
    (void)loop;
    logit(arg, M_AFTER);
}

/* Step k: log it, act as the case says, schedule step k+1 (and, at
 * handle_at, a handle then a plain call: FIFO across both paths). */
static void step_cb(ll_loop loop, void *arg) {
    struct chain *c = arg;
    int k = c->step++;
    logit(c, k);
    if (k == c->write_at)
        CHECK_EQ_INT(write(c->pipe_fd[1], "x", 1), 1);
    if (k == c->timer_at)
        CHECK_EQ_INT(ll_call_later(loop, 0, on_timer, c, NULL), 0);
    if (k == c->debug_at)
        CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    if (k == c->sleep_at) {
        struct timespec ts = {0, 150 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (k == c->stop_at)
        CHECK_EQ_INT(ll_loop_stop(loop), 0);
    if (k + 1 < c->last) {
        if (k == c->handle_at) {
            ll_handle h = 0;
            CHECK_EQ_INT(ll_call_soon(loop, on_handle, c, &h), 0);
            CHECK_EQ_INT(ll_call_soon(loop, step_cb, c, NULL), 0);
            ll_release(h);
        } else {
            CHECK_EQ_INT(ll_call_soon(loop, step_cb, c, NULL), 0);
        }
    }
}

static void on_exception(ll_loop loop, const ll_error_context *ctx, void *arg) {
    (void)loop;
    (void)ctx;
    ((struct chain *)arg)->slow_seen++;
}

static void init(struct chain *c, int last) {
    memset(c, 0, sizeof *c);
    c->last = last;
    c->write_at = c->timer_at = c->handle_at = c->stop_at = c->debug_at = c->sleep_at = -1;
    c->pipe_fd[0] = c->pipe_fd[1] = -1;
}

/* Run the case to its end: forever (chains allowed) or one iteration at a
 * time (none). The last step stops the loop. */
static void run_case(struct chain *c, int once) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_loop_set_exception_handler(loop, on_exception, c), 0);
    if (c->write_at >= 0) {
        CHECK_EQ_INT(pipe(c->pipe_fd), 0);
        CHECK_EQ_INT(ll_add_reader(loop, c->pipe_fd[0], on_reader, c), 0);
    }
    c->stop_at = c->stop_at >= 0 ? c->stop_at : c->last - 1;
    CHECK_EQ_INT(ll_call_soon(loop, step_cb, c, NULL), 0);
    if (once) {
        for (int i = 0; i < 10 * c->last && c->step < c->last; i++)
            CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    } else {
        CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    }
    if (c->pipe_fd[0] >= 0) {
        ll_remove_reader(loop, c->pipe_fd[0]);
        close(c->pipe_fd[0]);
        close(c->pipe_fd[1]);
    }
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
}

/* Where marker m sits: the number of steps logged before it. */
static int steps_before(const struct chain *c, int m) {
    int steps = 0;
    for (int i = 0; i < c->nlog; i++) {
        if (c->log[i] == m)
            return steps;
        if (c->log[i] >= 0)
            steps++;
    }
    return -1;
}

static void same_logs(const struct chain *a, const struct chain *b) {
    CHECK_EQ_INT(a->nlog, b->nlog);
    int same = a->nlog == b->nlog;
    for (int i = 0; same && i < a->nlog; i++)
        same = a->log[i] == b->log[i];
    CHECK(same);
}

/* Step 10 makes the watched pipe readable: the poll at the top of
 * iteration 11 sees it, and its reader runs after step 11 (queued first). */
static void test_fd_ready_mid_chain(void) {
    struct chain a = {0}, b = {0}; /* init() fills them; zeroed so cppcheck sees them set */
    for (int once = 0; once < 2; once++) {
        struct chain *c = once ? &b : &a;
        init(c, 200);
        c->write_at = 10;
        c->drain = 1;
        run_case(c, once);
        CHECK_EQ_INT(c->step, 200);
        CHECK_EQ_INT(c->reader_runs, 1);
        CHECK_EQ_INT(steps_before(c, M_READER), 12);
    }
    same_logs(&a, &b);
}

/* A pipe that stays readable: its reader runs once in every iteration,
 * so once per step, the chain never running past an event. */
static void test_level_triggered_every_iteration(void) {
    struct chain c;
    init(&c, 300);
    c.write_at = 0;
    run_case(&c, 0);
    CHECK_EQ_INT(c.step, 300);
    /* Readable from iteration 1 on; the last step stops the loop after
     * iteration 299, whose poll saw it too. */
    CHECK_EQ_INT(c.reader_runs, 299);
}

/* A zero-delay timer made in step 5 is due in iteration 6, after step 6. */
static void test_timer_mid_chain(void) {
    struct chain a = {0}, b = {0}; /* init() fills them; zeroed so cppcheck sees them set */
    for (int once = 0; once < 2; once++) {
        struct chain *c = once ? &b : &a;
        init(c, 100);
        c->timer_at = 5;
        run_case(c, once);
        CHECK_EQ_INT(steps_before(c, M_TIMER), 7);
    }
    same_logs(&a, &b);
}

/* Step 7 schedules a handle, then the next step: FIFO keeps that order. */
static void test_handle_mid_chain(void) {
    struct chain a = {0}, b = {0}; /* init() fills them; zeroed so cppcheck sees them set */
    for (int once = 0; once < 2; once++) {
        struct chain *c = once ? &b : &a;
        init(c, 100);
        c->handle_at = 7;
        run_case(c, once);
        CHECK_EQ_INT(steps_before(c, M_HANDLE), 8);
        CHECK_EQ_INT(c->step, 100);
    }
    same_logs(&a, &b);
}

/* Stop in step 30: the loop returns after that iteration, with step 31
 * queued; the next run goes on from it. */
static void test_stop_mid_chain(void) {
    struct chain c;
    init(&c, 100);
    c.stop_at = 30;
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_call_soon(loop, step_cb, &c, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(c.step, 31);
    struct ll_loop_stats st = {.size = sizeof st};
    CHECK_EQ_INT(ll_loop_stats(loop, &st), 0);
    CHECK_EQ_INT(st.ready, 1);
    CHECK_EQ_INT(st.iterations, 31);
    CHECK_EQ_INT(st.callbacks, 31);
    c.stop_at = 99;
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(c.step, 100);
    CHECK_EQ_INT(ll_loop_stats(loop, &st), 0);
    CHECK_EQ_INT(st.iterations, 100);
    CHECK_EQ_INT(st.callbacks, 100);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
}

/* ll_loop_run_once runs exactly one iteration, chain work or not. */
static void test_run_once_is_one_iteration(void) {
    struct chain c;
    init(&c, 1000);
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(ll_call_soon(loop, step_cb, &c, NULL), 0);
    for (int i = 1; i <= 50; i++) {
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
        CHECK_EQ_INT(c.step, i);
    }
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
}

/* Debug mode switched on in step 3 applies from the next iteration: the
 * slow step 6 is reported. */
static void test_debug_mid_chain(void) {
    struct chain c;
    init(&c, 10);
    c.debug_at = 3;
    c.sleep_at = 6;
    run_case(&c, 0);
    CHECK_EQ_INT(c.step, 10);
    CHECK(c.slow_seen >= 1);
}

/* A post from another thread runs while a chain would go on forever: the
 * chain yields to it within an iteration of the post being visible. */
struct poster {
    ll_loop loop;
    int post_step;
    struct chain *c;
};

static void post_cb(ll_loop loop, void *arg) {
    struct poster *p = arg;
    p->post_step = p->c->step;
    p->c->stop_at = p->c->step; /* the step already queued is the last */
    p->c->last = p->c->step + 1;
    (void)loop;
}

static void *poster_main(void *arg) {
    struct poster *p = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK_EQ_INT(ll_call_soon_threadsafe(p->loop, post_cb, p), 0);
    return NULL;
}

static void test_post_ends_chain(void) {
    struct chain c;
    init(&c, 1 << 30);
    struct poster p = {.c = &c};
    CHECK_EQ_INT(ll_loop_new(&p.loop), 0);
    CHECK_EQ_INT(ll_call_soon(p.loop, step_cb, &c, NULL), 0);
    pthread_t t;
    CHECK_EQ_INT(pthread_create(&t, NULL, poster_main, &p), 0);
    CHECK_EQ_INT(ll_loop_run_forever(p.loop), 0); /* step == last - 1 stops it */
    pthread_join(t, NULL);
    CHECK(p.post_step > 0); /* the chain ran while the poster slept */
    CHECK_EQ_INT(c.step, p.post_step + 1);
    CHECK_EQ_INT(ll_loop_close(p.loop), 0);
    ll_release(p.loop);
}

/* A callback that an iteration queues behind the chain's own (from
 * outside the chain: a plain call made before the run) keeps its place. */
static void test_outside_call_keeps_place(void) {
    struct chain c;
    init(&c, 20);
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    c.stop_at = 19;
    CHECK_EQ_INT(ll_call_soon(loop, step_cb, &c, NULL), 0);
    CHECK_EQ_INT(ll_call_soon(loop, after_cb, &c, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(steps_before(&c, M_AFTER), 1);
    CHECK_EQ_INT(c.step, 20);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_release(loop);
}

int main(void) {
    alarm(60); /* a chain that never yields would hang: fail instead */
    RUN_TEST(test_fd_ready_mid_chain);
    RUN_TEST(test_level_triggered_every_iteration);
    RUN_TEST(test_timer_mid_chain);
    RUN_TEST(test_handle_mid_chain);
    RUN_TEST(test_stop_mid_chain);
    RUN_TEST(test_run_once_is_one_iteration);
    RUN_TEST(test_debug_mid_chain);
    RUN_TEST(test_post_ends_chain);
    RUN_TEST(test_outside_call_keeps_place);
    return CHECK_REPORT();
}
