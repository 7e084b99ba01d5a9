/* SPDX-License-Identifier: MIT */
/* The read gate's rules with the peer in another thread, where the loop's
 * polls block: echoes (also of more than the read buffer), timers, posts,
 * the idle time and an end of stream after half a message come out right
 * (the loop's own ping-pongs: test_readgate.c). */
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

int main(void) {
    RUN_TEST(test_peer_thread_polls_block);
    return CHECK_REPORT();
}
