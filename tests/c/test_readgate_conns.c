/* SPDX-License-Identifier: MIT */
/* The read gate with many connections from a peer in another thread: its
 * polls block only while each brings one connection's answer (a poll of
 * more events ends that, libloop's gateBlockEvents), so a loop that serves
 * rounds on all its connections at once and rounds on one alone, with
 * pauses between them, switches between the gate's blocking polls and
 * Go's: every echo comes back whole and in order on its own connection,
 * a chain of timers fires in order and never early, posts from the peer
 * thread all run in order, the last stops the run, and the peer's pauses
 * count as the loop's idle time (the one-connection rules:
 * test_readgate_peer.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "libloop.h"
#include "check.h"

#include "readgate_world.h"

#define CONNS 8
#define ROUNDS 240
#define TIMERS 20

struct many {
    struct world w;
    int port;
    /* the loop thread's */
    int bad, posts_run, posts_out_of_order, timers_run, timers_early;
    double timer_due;
    size_t srv_bytes;
    /* the peer thread's (read after the join) */
    int client_bad, wide_rounds, narrow_rounds;
    long paused_ns;
};

static struct many *the_many;

static int many_echo(ll_loop loop, const ll_event *ev, void *arg) {
    struct many *m = arg;
    if (ev->kind == LL_DATA_RECEIVED)
        m->srv_bytes += ev->len;
    return echo(loop, ev, &m->w);
}

static void many_post(ll_loop loop, void *arg) {
    (void)loop;
    if ((long)arg != the_many->posts_run)
        the_many->posts_out_of_order++;
    the_many->posts_run++;
}

static void many_stop(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

static void many_timer(ll_loop loop, void *arg) {
    struct many *m = arg;
    if (ll_loop_time(loop) < m->timer_due)
        m->timers_early++;
    if (++m->timers_run < TIMERS) {
        m->timer_due = ll_loop_time(loop) + 0.003;
        ll_handle h = 0;
        if (ll_call_later(loop, 0.003, many_timer, m, &h) != 0)
            m->bad++;
        ll_release(h);
    }
}

static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int io_full(int fd, char *buf, size_t n, int wr) {
    for (size_t done = 0; done < n;) {
        ssize_t r = wr ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

/* Message i of connection c: distinct on every connection, so an echo
 * delivered to the wrong one shows. */
static void conn_message(int c, int i, char out[MSG]) { message(i * CONNS + c, out); }

static void *many_client(void *arg) {
    struct many *m = arg;
    int fds[CONNS];
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)m->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int c = 0; c < CONNS; c++) {
        fds[c] = socket(AF_INET, SOCK_STREAM, 0);
        if (fds[c] < 0 || connect(fds[c], (struct sockaddr *)&a, sizeof a) != 0)
            m->client_bad++;
        struct timeval tv = {5, 0}; /* an echo lost fails the test, not hangs it */
        if (fds[c] >= 0)
            setsockopt(fds[c], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    int sent[CONNS] = {0};
    char msg[MSG], back[MSG];
    for (int i = 0; i < ROUNDS && m->client_bad == 0; i++) {
        /* Rounds 0-3 of every 8 write on every connection before reading
         * any echo (the loop's polls see several at once); rounds 4-7 use
         * one connection (each poll sees one). */
        int wide = i % 8 < 4, first = wide ? 0 : i % CONNS, n = wide ? CONNS : 1;
        for (int c = first; c < first + n; c++) {
            conn_message(c, sent[c], msg);
            if (io_full(fds[c], msg, MSG, 1) != 0)
                m->client_bad++;
        }
        for (int c = first; c < first + n; c++) {
            conn_message(c, sent[c]++, msg);
            if (io_full(fds[c], back, MSG, 0) != 0 || memcmp(msg, back, MSG) != 0)
                m->client_bad++;
        }
        if (wide)
            m->wide_rounds++;
        else
            m->narrow_rounds++;
        if (i % 10 == 0 && ll_call_soon_threadsafe(m->w.loop, many_post, (void *)(long)(i / 10)) != 0)
            m->client_bad++;
        if (i % 12 == 5 || i % 12 == 9) { /* a pause after a wide and after a narrow round */
            long t0 = now_ns();
            usleep(2000);
            m->paused_ns += now_ns() - t0;
        }
    }
    for (int c = 0; c < CONNS; c++)
        if (fds[c] >= 0)
            close(fds[c]);
    if (ll_call_soon_threadsafe(m->w.loop, many_stop, NULL) != 0)
        m->client_bad++;
    return NULL;
}

static void test_many_connections_gate(void) {
    struct many m = {0};
    struct ll_loop_stats st0 = {.size = sizeof st0}, st1 = {.size = sizeof st1};
    pthread_t th;
    ll_handle h = 0, dog = 0;
    the_many = &m;
    CHECK_EQ_INT(ll_loop_new(&m.w.loop), 0);
    CHECK_EQ_INT(ll_tcp_listen(m.w.loop, "127.0.0.1", 0, 16, 0, many_echo, &m, &m.w.server), 0);
    CHECK_EQ_INT(ll_server_port(m.w.server, &m.port), 0);
    CHECK_EQ_INT(ll_call_later(m.w.loop, 30.0, watchdog, &m.w, &dog), 0);
    m.timer_due = ll_loop_time(m.w.loop) + 0.003;
    CHECK_EQ_INT(ll_call_later(m.w.loop, 0.003, many_timer, &m, &h), 0);
    ll_release(h);
    CHECK_EQ_INT(ll_loop_stats(m.w.loop, &st0), 0);
    CHECK_EQ_INT(pthread_create(&th, NULL, many_client, &m), 0);
    CHECK_EQ_INT(ll_loop_run_forever(m.w.loop), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(ll_loop_stats(m.w.loop, &st1), 0);
    CHECK_EQ_INT(m.w.timed_out, 0);
    CHECK_EQ_INT(m.bad, 0);
    CHECK_EQ_INT(m.client_bad, 0);
    CHECK_EQ_INT(m.w.bad, 0);
    CHECK_EQ_INT(m.wide_rounds, ROUNDS / 2);
    CHECK_EQ_INT(m.narrow_rounds, ROUNDS / 2);
    CHECK_EQ_INT((long)m.srv_bytes, (long)(ROUNDS / 2) * (CONNS + 1) * MSG);
    CHECK_EQ_INT(m.posts_run, ROUNDS / 10);
    CHECK_EQ_INT(m.posts_out_of_order, 0);
    CHECK_EQ_INT(m.timers_early, 0);
    CHECK_EQ_INT(m.timers_run, TIMERS); /* 60 ms of chain in the peer's 80 ms of pauses alone */
    /* The loop slept through the peer's pauses, less its own wake-ups. */
    CHECK((long)(st1.idle_ns - st0.idle_ns) > m.paused_ns * 9 / 10);
    if ((long)(st1.idle_ns - st0.idle_ns) <= m.paused_ns * 9 / 10)
        fprintf(stderr, "idle %ld ns over pauses of %ld ns\n", (long)(st1.idle_ns - st0.idle_ns), m.paused_ns);
    ll_handle_cancel(dog);
    ll_release(dog);
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(m.w.loop, LL_RUN_NOWAIT);
    ll_release(m.w.server);
    CHECK_EQ_INT(ll_release(m.w.loop), 0);
}

int main(void) {
    RUN_TEST(test_many_connections_gate);
    return CHECK_REPORT();
}
