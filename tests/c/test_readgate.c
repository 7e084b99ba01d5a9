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
 * everything; with the peer in another thread, where the loop's polls
 * block, echoes (also of more than the read buffer), timers, posts, the
 * idle time and an end of stream after half a message come out right. */
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

#define MSG 16
#define MAXC 2

struct world;

struct conn {
    struct world *w;
    ll_transport t;
    int sent, got; /* messages sent, whole echoes received */
    size_t have;   /* bytes of the echo being received */
    int rounds;    /* stop sending at this many echoes */
    int paused, paused_events;
    int closed, data_after_close, lost, lost_code;
};

struct world {
    ll_loop loop;
    ll_server server;
    ll_handle dog;
    struct conn c[MAXC];
    int nconn, done, bad, timed_out;
    long deliveries; /* LL_DATA_RECEIVED on either side */
    ll_transport srv[4];
    int nsrv, srv_lost, srv_lost_err;
    /* The scenario: called when c's echo completes, before it sends its
     * next message; returns 0 to send it, 1 not to. */
    int (*on_echo)(struct world *w, struct conn *c);
    void (*on_server_data)(struct world *w);
    /* scenario state */
    int n, m, k;
    long at, lag, late;
    double deadline;
    ll_handle h;
};

static volatile long deliveries_seen; /* for the posting thread */

static void message(int i, char out[MSG]) {
    char tmp[MSG + 1];
    snprintf(tmp, sizeof tmp, "%0*d\n", MSG - 1, i);
    memcpy(out, tmp, MSG);
}

static void send_next(struct conn *c) {
    char m[MSG];
    message(c->sent, m);
    if (ll_transport_write(c->t, m, MSG) != 0)
        c->w->bad++;
    c->sent++;
}

static void count_delivery(struct world *w) {
    w->deliveries++;
    __atomic_store_n(&deliveries_seen, w->deliveries, __ATOMIC_RELEASE);
}

static int echo(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    struct world *w = arg;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        if (w->nsrv < 4)
            w->srv[w->nsrv++] = ev->transport;
        break;
    case LL_DATA_RECEIVED:
        count_delivery(w);
        if (w->on_server_data)
            w->on_server_data(w);
        if (ll_transport_write(ev->transport, ev->data, ev->len) != 0)
            w->bad++;
        break;
    case LL_CONNECTION_LOST:
        w->srv_lost++;
        if (ev->code != 0)
            w->srv_lost_err++;
        break;
    }
    return 0; /* EOF: close */
}

static void all_done(struct world *w) {
    if (++w->done == w->nconn)
        ll_loop_stop(w->loop);
}

static int client(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    struct conn *c = arg;
    struct world *w = c->w;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        c->t = ev->transport;
        send_next(c);
        break;
    case LL_DATA_RECEIVED:
        count_delivery(w);
        if (c->paused)
            c->paused_events++;
        if (c->closed)
            c->data_after_close++;
        for (size_t i = 0; i < ev->len; i++) {
            char want[MSG];
            message(c->got, want);
            if (((const char *)ev->data)[i] != want[c->have])
                w->bad++;
            if (++c->have < MSG)
                continue;
            c->have = 0;
            c->got++;
            if (c->got == c->rounds) {
                all_done(w);
                continue;
            }
            if (c->got < c->sent)
                continue; /* more echoes on their way */
            if (w->on_echo && w->on_echo(w, c))
                continue;
            send_next(c);
        }
        break;
    case LL_CONNECTION_LOST:
        c->lost++;
        c->lost_code = ev->code;
        break;
    }
    return 1;
}

static void watchdog(ll_loop loop, void *arg) {
    ((struct world *)arg)->timed_out = 1;
    ll_loop_stop(loop);
}

/* A loop with the echo server and nconn clients of rounds each; the
 * clients connect during the first run. */
static void world_open(struct world *w, int nconn, int rounds) {
    int port = 0;
    w->nconn = nconn;
    CHECK_EQ_INT(ll_loop_new(&w->loop), 0);
    CHECK_EQ_INT(ll_tcp_listen(w->loop, "127.0.0.1", 0, 16, 0, echo, w, &w->server), 0);
    CHECK_EQ_INT(ll_server_port(w->server, &port), 0);
    CHECK_EQ_INT(ll_call_later(w->loop, 30.0, watchdog, w, &w->dog), 0);
    for (int i = 0; i < nconn; i++) {
        ll_future f = 0;
        w->c[i].w = w;
        w->c[i].rounds = rounds;
        CHECK_EQ_INT(ll_tcp_connect(w->loop, "127.0.0.1", port, client, &w->c[i], &f), 0);
        ll_release(f);
    }
}

static void world_close(struct world *w) {
    CHECK_EQ_INT(w->timed_out, 0);
    CHECK_EQ_INT(w->bad, 0);
    ll_handle_cancel(w->dog);
    ll_release(w->dog);
    for (int i = 0; i < w->nconn; i++)
        if (!w->c[i].closed)
            ll_transport_close(w->c[i].t);
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(w->loop, LL_RUN_NOWAIT);
    ll_release(w->server);
    CHECK_EQ_INT(ll_release(w->loop), 0);
}

/* ---- a timer due fires after its own iteration's I/O at most ---- */

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
        w->late = 0;
        w->deadline = ll_loop_time(w->loop) + 0.002;
        if (ll_call_later(w->loop, 0.002, timer_cb, w, NULL) != 0)
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

static void posted_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct world *w = arg;
    long lag = w->deliveries - __atomic_load_n(&w->at, __ATOMIC_ACQUIRE);
    if (lag > w->lag)
        w->lag = lag;
    __atomic_store_n(&w->n, w->n + 1, __ATOMIC_RELEASE);
}

static void posted_stop(ll_loop loop, void *arg) {
    ((struct world *)arg)->k = 1;
    ll_loop_stop(loop);
}

static void *poster(void *arg) {
    struct world *w = arg;
    for (int i = 0; i < 50; i++) {
        while (__atomic_load_n(&w->n, __ATOMIC_ACQUIRE) != i)
            usleep(100);
        usleep(500);
        long before = __atomic_load_n(&deliveries_seen, __ATOMIC_ACQUIRE);
        __atomic_store_n(&w->at, before, __ATOMIC_RELEASE);
        if (ll_call_soon_threadsafe(w->loop, posted_cb, w) != 0)
            __atomic_add_fetch(&w->bad, 1, __ATOMIC_RELAXED);
    }
    while (__atomic_load_n(&w->n, __ATOMIC_ACQUIRE) != 50)
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
    CHECK_EQ_INT(w.n, 50);
    CHECK_EQ_INT(w.k, 1); /* the posted stop ended the run */
    CHECK(w.c[0].got > 50);
    /* Seen after the poll that follows it: that poll's I/O, then the
     * post (the poster reads the count a moment after posting). */
    CHECK(w.lag <= 3);
    if (w.lag > 3)
        fprintf(stderr, "deliveries between a post and its callback: %ld\n", w.lag);
    world_close(&w);
}

/* ---- a peer in another thread: the loop's polls block ----
 * The loop serves one connection whose client is a plain blocking socket
 * in a thread, so most of its polls find nothing and block: until the
 * client's next message, a timer that may be due or a post. Echoes come back whole and
 * in order, also for writes larger than the loop's read buffer; a chain of
 * timers fires in order and never early; posts from the client thread all
 * run, the last one stops the run; the time the client thread paused is
 * counted as the loop's idle time; an end of stream after a partial
 * message still reaches the protocol. */

#define PEER_ROUNDS 300
#define PEER_BIG (300 * 1024) /* > the loop's 256 KiB read buffer */
#define PEER_TIMERS 20

struct peer {
    struct world w;
    int port;
    /* the loop thread's */
    int bad, posts_run, posts_out_of_order, timers_run, timers_early;
    double timer_due;
    int eof_seen;      /* the server protocol saw the end */
    size_t srv_bytes;  /* bytes the server protocol got before it */
    /* the client thread's (read after the join) */
    int client_bad;
    long paused_ns; /* time the client thread slept between messages */
};

static struct peer *the_peer;

static int peer_echo(ll_loop loop, const ll_event *ev, void *arg) {
    struct peer *pe = arg;
    if (ev->kind == LL_EOF_RECEIVED) {
        pe->eof_seen++;
        return 0;
    }
    if (ev->kind == LL_DATA_RECEIVED && pe->eof_seen == 0)
        pe->srv_bytes += ev->len;
    return echo(loop, ev, &pe->w);
}

static void peer_post(ll_loop loop, void *arg) {
    (void)loop;
    long i = (long)arg;
    if (i != the_peer->posts_run)
        the_peer->posts_out_of_order++;
    the_peer->posts_run++;
}

static void peer_stop(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

static void peer_timer(ll_loop loop, void *arg) {
    struct peer *pe = arg;
    if (ll_loop_time(loop) < pe->timer_due)
        pe->timers_early++;
    if (++pe->timers_run < PEER_TIMERS) {
        pe->timer_due = ll_loop_time(loop) + 0.003;
        ll_handle h = 0;
        if (ll_call_later(loop, 0.003, peer_timer, pe, &h) != 0)
            pe->bad++;
        ll_release(h);
    }
}

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int read_full(int fd, char *buf, size_t n) {
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const char *buf, size_t n) {
    for (size_t put = 0; put < n;) {
        ssize_t r = write(fd, buf + put, n - put);
        if (r <= 0)
            return -1;
        put += (size_t)r;
    }
    return 0;
}

static void *peer_client(void *arg) {
    struct peer *pe = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)pe->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        pe->client_bad++;
        if (fd >= 0)
            close(fd);
        ll_call_soon_threadsafe(pe->w.loop, peer_stop, NULL);
        return NULL;
    }
    char m[MSG], back[MSG];
    for (int i = 0; i < PEER_ROUNDS && pe->client_bad == 0; i++) {
        message(i, m);
        if (write_full(fd, m, MSG) != 0 || read_full(fd, back, MSG) != 0 || memcmp(m, back, MSG) != 0)
            pe->client_bad++;
        if (i % 10 == 0 && ll_call_soon_threadsafe(pe->w.loop, peer_post, (void *)(long)(i / 10)) != 0)
            pe->client_bad++;
        if (i % 10 == 5) { /* a pause: the loop sleeps in its poll */
            long t0 = now_ns();
            usleep(2500);
            pe->paused_ns += now_ns() - t0;
        }
    }
    /* More than the read buffer at once: the gate reads it in chunks. */
    char *big = malloc(PEER_BIG), *bigback = malloc(PEER_BIG);
    if (big == NULL || bigback == NULL)
        pe->client_bad++;
    else {
        for (size_t i = 0; i < PEER_BIG; i++)
            big[i] = (char)(i * 7 + i / 251);
        /* Written whole before any of the echo is read: the loop reads it
         * in many reads (64 KiB at most each) and buffers the echo the
         * client does not read yet, so the write never waits on it. */
        if (write_full(fd, big, PEER_BIG) != 0 || read_full(fd, bigback, PEER_BIG) != 0 ||
            memcmp(big, bigback, PEER_BIG) != 0)
            pe->client_bad++;
    }
    free(big);
    free(bigback);
    /* Half a message, then the end: both reach the server's protocol. */
    message(0, m);
    if (write_full(fd, m, MSG / 2) != 0 || read_full(fd, back, MSG / 2) != 0)
        pe->client_bad++;
    shutdown(fd, SHUT_WR);
    if (read(fd, back, 1) != 0) /* the server closes after the end */
        pe->client_bad++;
    close(fd);
    if (ll_call_soon_threadsafe(pe->w.loop, peer_stop, NULL) != 0)
        pe->client_bad++;
    return NULL;
}

static void test_peer_thread_polls_block(void) {
    struct peer pe = {0};
    struct ll_loop_stats st0 = {.size = sizeof st0}, st1 = {.size = sizeof st1};
    pthread_t th;
    ll_handle h = 0, dog = 0;
    the_peer = &pe;
    CHECK_EQ_INT(ll_loop_new(&pe.w.loop), 0);
    CHECK_EQ_INT(ll_tcp_listen(pe.w.loop, "127.0.0.1", 0, 16, 0, peer_echo, &pe, &pe.w.server), 0);
    CHECK_EQ_INT(ll_server_port(pe.w.server, &pe.port), 0);
    CHECK_EQ_INT(ll_call_later(pe.w.loop, 30.0, watchdog, &pe.w, &dog), 0);
    pe.timer_due = ll_loop_time(pe.w.loop) + 0.003;
    CHECK_EQ_INT(ll_call_later(pe.w.loop, 0.003, peer_timer, &pe, &h), 0);
    ll_release(h);
    CHECK_EQ_INT(ll_loop_stats(pe.w.loop, &st0), 0);
    CHECK_EQ_INT(pthread_create(&th, NULL, peer_client, &pe), 0);
    CHECK_EQ_INT(ll_loop_run_forever(pe.w.loop), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(ll_loop_stats(pe.w.loop, &st1), 0);
    CHECK_EQ_INT(pe.w.timed_out, 0);
    CHECK_EQ_INT(pe.bad, 0);
    CHECK_EQ_INT(pe.client_bad, 0);
    CHECK_EQ_INT(pe.w.bad, 0);
    CHECK_EQ_INT(pe.posts_run, PEER_ROUNDS / 10);
    CHECK_EQ_INT(pe.posts_out_of_order, 0);
    CHECK_EQ_INT(pe.timers_early, 0);
    CHECK_EQ_INT(pe.eof_seen, 1);
    CHECK_EQ_INT((long)pe.srv_bytes, (long)PEER_ROUNDS * MSG + PEER_BIG + MSG / 2);
    /* The loop slept through the client's pauses, less its own
     * wake-ups. */
    CHECK((long)(st1.idle_ns - st0.idle_ns) > pe.paused_ns * 9 / 10);
    if ((long)(st1.idle_ns - st0.idle_ns) <= pe.paused_ns * 9 / 10)
        fprintf(stderr, "idle %ld ns over pauses of %ld ns\n", (long)(st1.idle_ns - st0.idle_ns), pe.paused_ns);
    /* The chain of 3 ms timers ran during the client's 75 ms of pauses
     * alone; the run lasts longer. */
    CHECK_EQ_INT(pe.timers_run, PEER_TIMERS);
    ll_handle_cancel(dog);
    ll_release(dog);
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(pe.w.loop, LL_RUN_NOWAIT);
    ll_release(pe.w.server);
    CHECK_EQ_INT(ll_release(pe.w.loop), 0);
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
    RUN_TEST(test_peer_thread_polls_block);
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
