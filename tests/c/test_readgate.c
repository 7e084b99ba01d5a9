/* SPDX-License-Identifier: MIT */
/* Ping-pongs between C protocols of one loop, the traffic the read gate
 * runs in C (libloop/readgate.go, capi/cloop/readgate.c): while it does,
 * everything else keeps asyncio's order and libuv's run rules. A timer due
 * fires before more than the I/O of its own iteration; a callback
 * scheduled from data_received runs before the next read; a thread-safe
 * post runs within an iteration and can stop the loop; a stop from a
 * protocol ends the run exactly there; a connection closed from its own
 * callback, closed by its peer or reset ends alone; a paused transport is
 * not read; writes that would block lose nothing; a check hook runs in
 * every iteration; ll_loop_next_timeout answers as outside the gate;
 * ll_loop_run(LL_RUN_DEFAULT) returns after the iteration that unreferenced
 * everything (the peer in another thread: test_readgate_peer.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "libloop.h"
#include "check.h"

#include "readgate_world.h"

/* ---- a timer due fires after its own iteration's I/O at most ---- */

/* Counted in deliveries, not in time: a loaded machine stretches the
 * time an iteration takes, never how many deliveries run between the
 * moment the timer is due and its callback. */

static void timer_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct world *w = arg;
    if (w->late > w->lag)
        w->lag = w->late;
    w->h = 0;
    w->n++;
}

static void timer_server_data(struct world *w) {
    if (w->h != 0 && ll_loop_time(w->loop) > w->deadline)
        w->late++; /* a delivery while the timer is due */
}

static int timer_echo(struct world *w, struct conn *c) {
    timer_server_data(w);
    if (c->got % 100 == 10 && w->h == 0) {
        /* ll_call_at: the loop's deadline is the one the test compares
         * with (to the nanosecond). ll_call_later's reads the clock a
         * moment after the test's read: a thread preempted between the
         * two put the test's deadline before the loop's, and deliveries
         * made in that stretch before the timer was due counted as late
         * (seen under load: 38 us apart, 2 deliveries). */
        w->late = 0;
        w->deadline = ll_loop_time(w->loop) + 0.002;
        if (ll_call_at(w->loop, w->deadline, timer_cb, w, NULL) != 0)
            w->bad++;
        w->h = 1;
    }
    return 0;
}

static void test_timer_due_fires_in_time(void) {
    struct world w = {.on_echo = timer_echo, .on_server_data = timer_server_data};
    world_open(&w, 1, 3000);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 3000);
    CHECK(w.n >= 10);
    /* Go's order: the poll, its I/O, then the timers due: a delivery of
     * that iteration and one of the next (the clock read after its poll
     * saw the timer not yet due) at most. */
    CHECK(w.lag <= 2);
    if (w.lag > 2)
        fprintf(stderr, "deliveries while a timer was due: %ld\n", w.lag);
    world_close(&w);
}

/* ---- call_soon from data_received runs before the next read ---- */

static void soon_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct world *w = arg;
    if (w->deliveries != w->at)
        w->bad++;
    w->n++;
}

static int soon_echo(struct world *w, struct conn *c) {
    if (c->got % 10 == 0) {
        w->at = w->deliveries;
        if (ll_call_soon(w->loop, soon_cb, w, NULL) != 0)
            w->bad++;
        w->m++;
    }
    return 0;
}

static void test_call_soon_runs_before_next_read(void) {
    struct world w = {.on_echo = soon_echo};
    world_open(&w, 1, 2000);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 2000);
    CHECK_EQ_INT(w.n, w.m);
    world_close(&w);
}

/* ---- a thread-safe post runs within an iteration, and can stop ---- */

/* Counted from the post's return: the post is queued and its wake-up
 * given by then. The count the poster read before posting also held the
 * deliveries the loop made while the poster was preempted before its
 * post (seen under load: 9 and 98). Per post, in arrays: a callback may
 * run before its poster has read the count. */
#define POSTS 50
static long posted_at[POSTS]; /* deliveries when ll_call_soon_threadsafe returned */
static long ran_at[POSTS];    /* deliveries when the callback ran */

static void posted_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct world *w = arg;
    int i = __atomic_load_n(&w->n, __ATOMIC_ACQUIRE);
    if (i < POSTS)
        ran_at[i] = w->deliveries;
    __atomic_store_n(&w->n, i + 1, __ATOMIC_RELEASE);
}

static void posted_stop(ll_loop loop, void *arg) {
    ((struct world *)arg)->k = 1;
    ll_loop_stop(loop);
}

static void *poster(void *arg) {
    struct world *w = arg;
    for (int i = 0; i < POSTS; i++) {
        while (__atomic_load_n(&w->n, __ATOMIC_ACQUIRE) != i)
            usleep(100);
        usleep(500);
        if (ll_call_soon_threadsafe(w->loop, posted_cb, w) != 0)
            __atomic_add_fetch(&w->bad, 1, __ATOMIC_RELAXED);
        posted_at[i] = __atomic_load_n(&deliveries_seen, __ATOMIC_ACQUIRE);
    }
    while (__atomic_load_n(&w->n, __ATOMIC_ACQUIRE) != POSTS)
        usleep(100);
    if (ll_call_soon_threadsafe(w->loop, posted_stop, w) != 0)
        __atomic_add_fetch(&w->bad, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void test_threadsafe_post_runs_and_stops(void) {
    struct world w = {0};
    pthread_t th;
    world_open(&w, 1, 1 << 30);
    CHECK_EQ_INT(pthread_create(&th, NULL, poster, &w), 0);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(w.n, POSTS);
    CHECK_EQ_INT(w.k, 1); /* the posted stop ended the run */
    CHECK(w.c[0].got > POSTS);
    /* Seen after the poll that follows it: the delivery running when it
     * was posted, that poll's I/O, then the post. */
    for (int i = 0; i < POSTS; i++)
        if (ran_at[i] - posted_at[i] > w.lag)
            w.lag = ran_at[i] - posted_at[i];
    CHECK(w.lag <= 2);
    if (w.lag > 2)
        fprintf(stderr, "deliveries between a post and its callback: %ld\n", w.lag);
    world_close(&w);
}

/* ---- a stop from a protocol ends the run there ---- */

/* The stop comes with the next message sent: its echo waits for the
 * next run. */
static int stop_echo(struct world *w, struct conn *c) {
    if (c->got == 777) {
        ll_loop_stop(w->loop);
        w->at = w->deliveries;
    }
    return 0;
}

static void test_stop_from_protocol(void) {
    struct world w = {.on_echo = stop_echo};
    world_open(&w, 1, 2000);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 777);
    CHECK_EQ_INT(w.deliveries, w.at);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 2000);
    world_close(&w);
}

/* ---- closes and resets end only their connection ---- */

static int close_echo(struct world *w, struct conn *c) {
    if (c == &w->c[1] && c->got == 300) {
        c->closed = 1;
        if (ll_transport_close(c->t) != 0)
            w->bad++;
        all_done(w);
        return 1;
    }
    return 0;
}

static void test_close_from_callback_ends_only_it(void) {
    struct world w = {.on_echo = close_echo};
    world_open(&w, 2, 3000);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 3000);
    CHECK_EQ_INT(w.c[1].got, 300);
    CHECK_EQ_INT(w.c[1].lost, 1);
    CHECK_EQ_INT(w.c[1].lost_code, 0);
    CHECK_EQ_INT(w.c[1].data_after_close, 0);
    CHECK_EQ_INT(w.c[0].lost, 0);
    for (int i = 0; i < 20 && w.srv_lost < 1; i++)
        ll_loop_run_once(w.loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(w.srv_lost, 1); /* its server side saw the end, the other not */
    CHECK_EQ_INT(w.srv_lost_err, 0);
    world_close(&w);
}

static int raw_fd = -1;

static int reset_echo(struct world *w, struct conn *c) {
    (void)c;
    if (c->got == 200 && write(raw_fd, "0123456789abcdef", MSG) != MSG)
        w->bad++;
    if (c->got == 400) {
        struct linger lg = {1, 0};
        setsockopt(raw_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        close(raw_fd); /* unread echo in its buffer: a reset */
        raw_fd = -1;
    }
    return 0;
}

static void test_peer_reset_ends_only_it(void) {
    struct world w = {.on_echo = reset_echo};
    int port = 0;
    world_open(&w, 1, 3000);
    CHECK_EQ_INT(ll_server_port(w.server, &port), 0);
    raw_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK_EQ_INT(connect(raw_fd, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 3000);
    CHECK_EQ_INT(w.c[0].lost, 0);
    CHECK_EQ_INT(w.srv_lost, 1);
    CHECK_EQ_INT(w.srv_lost_err, 1);
    if (raw_fd >= 0)
        close(raw_fd);
    world_close(&w);
}

/* ---- a paused transport is not read; writes that block lose nothing ---- */

static void resume_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct conn *c = arg;
    c->paused = 0;
    if (ll_transport_resume_reading(c->t) != 0)
        c->w->bad++;
}

static int pause_echo(struct world *w, struct conn *c) {
    struct conn *other = &w->c[1];
    if (c == &w->c[0] && c->got % 5 == 0 && !other->paused && other->got < other->rounds) {
        other->paused = 1;
        if (ll_transport_pause_reading(other->t) != 0 || ll_call_later(w->loop, 0.0002, resume_cb, other, NULL) != 0)
            w->bad++;
        w->n++;
    }
    return 0;
}

static void test_paused_transport_not_read(void) {
    struct world w = {.on_echo = pause_echo};
    world_open(&w, 2, 2000);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 2000);
    CHECK_EQ_INT(w.c[1].got, 2000);
    CHECK(w.n > 10);
    CHECK_EQ_INT(w.c[1].paused_events, 0);
    world_close(&w);
}

#define BLOB 65536 /* messages: 1 MiB each way */

static int blob_echo(struct world *w, struct conn *c) {
    if (c->got != 100)
        return 0;
    char *b = malloc((size_t)BLOB * MSG);
    for (int i = 0; i < BLOB; i++)
        message(c->sent + i, b + (size_t)i * MSG);
    if (ll_transport_write(c->t, b, (size_t)BLOB * MSG) != 0)
        w->bad++;
    c->sent += BLOB;
    free(b);
    return 1;
}

static void test_blocked_writes_lose_nothing(void) {
    struct world w = {.on_echo = blob_echo};
    world_open(&w, 1, 100 + BLOB + 500);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 100 + BLOB + 500);
    world_close(&w);
}

/* ---- hooks, next_timeout, run modes ---- */

static void hook_cb(ll_loop loop, void *arg) {
    (void)loop;
    ((struct world *)arg)->n++;
}

static int hook_echo(struct world *w, struct conn *c) {
    if (c->got == 100) {
        if (ll_hook_add(w->loop, LL_HOOK_CHECK, hook_cb, w, &w->h) != 0)
            w->bad++;
        w->at = w->deliveries;
    }
    return 0;
}

static void test_check_hook_runs_every_iteration(void) {
    struct world w = {.on_echo = hook_echo};
    world_open(&w, 1, 2000);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 2000);
    /* One delivery an iteration here: the hook ran in each of them. */
    CHECK(w.n >= w.deliveries - w.at - 1);
    if (w.n < w.deliveries - w.at - 1)
        fprintf(stderr, "check hook: %d runs for %ld deliveries\n", w.n, w.deliveries - w.at);
    ll_handle_cancel(w.h);
    ll_release(w.h);
    world_close(&w);
}

static void nop_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

static void next_timeout_data(struct world *w) {
    int ms = ll_loop_next_timeout(w->loop);
    if (ms <= 0 || ms > 30000) /* the watchdog's 30 s is the only thing scheduled */
        w->bad++;
}

static int next_timeout_echo(struct world *w, struct conn *c) {
    next_timeout_data(w);
    if (c->got % 50 == 0) {
        if (ll_call_soon(w->loop, nop_cb, NULL, NULL) != 0 || ll_loop_next_timeout(w->loop) != 0)
            w->bad++;
        w->n++;
    }
    return 0;
}

static void test_next_timeout_inside_protocols(void) {
    struct world w = {.on_echo = next_timeout_echo, .on_server_data = next_timeout_data};
    world_open(&w, 1, 2000);
    CHECK_EQ_INT(ll_loop_run_forever(w.loop), 0);
    CHECK_EQ_INT(w.c[0].got, 2000);
    CHECK_EQ_INT(w.n, 39); /* echoes 50, 100, ... 1950 */
    world_close(&w);
}

static int unref_echo(struct world *w, struct conn *c) {
    if (c->got == 300) {
        int rc = ll_unref(c->t) | ll_unref(w->server) | ll_unref(w->dog);
        for (int i = 0; i < w->nsrv; i++)
            rc |= ll_unref(w->srv[i]);
        if (rc != 0)
            w->bad++;
        w->at = w->deliveries;
    }
    return 0;
}

static void test_run_default_returns_after_unref(void) {
    struct world w = {.on_echo = unref_echo};
    world_open(&w, 1, 2000);
    /* Nothing is alive after the iteration that unreferenced everything:
     * the run returns there, though the next message is on its way. */
    CHECK_EQ_INT(ll_loop_run(w.loop, LL_RUN_DEFAULT), 0);
    CHECK_EQ_INT(w.c[0].got, 300);
    CHECK_EQ_INT(w.deliveries, w.at);
    world_close(&w);
}

int main(void) {
    RUN_TEST(test_timer_due_fires_in_time);
    RUN_TEST(test_call_soon_runs_before_next_read);
    RUN_TEST(test_threadsafe_post_runs_and_stops);
    RUN_TEST(test_stop_from_protocol);
    RUN_TEST(test_close_from_callback_ends_only_it);
    RUN_TEST(test_peer_reset_ends_only_it);
    RUN_TEST(test_paused_transport_not_read);
    RUN_TEST(test_blocked_writes_lose_nothing);
    RUN_TEST(test_check_hook_runs_every_iteration);
    RUN_TEST(test_next_timeout_inside_protocols);
    RUN_TEST(test_run_default_returns_after_unref);
    return CHECK_REPORT();
}
