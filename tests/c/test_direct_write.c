/* SPDX-License-Identifier: MIT */
/* The write fast path outside a delivery: on the loop's thread, a write to
 * an open stream socket with nothing buffered is sent from C (send(2)),
 * without entering Go, from any callback (a timer, call_soon, the host
 * queue), not only from the transport's own event. Anything else goes
 * through Go as before: bytes buffered behind a partial send (order kept),
 * a closed or aborted transport (LL_ECLOSED, nothing sent on its fd), a
 * peer gone (the write error ends the transport), another thread (a
 * transport Go ended on a read error, its LL_CONNECTION_LOST still queued:
 * test_direct_write_lost.c).
 *
 * How "from C" is seen: send_counter.h counts the fast path's
 * sends (Go's writes do not call its hook). */
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "net_util.h"
#include "send_counter.h"


/* A loop and one stream transport on a socketpair; *peer is the other end. */
static ll_loop open_pair(struct conn *c, int *peer) {
    ll_loop loop = new_loop();
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    conn_init(c);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, c, &c->t), 0);
    RUN_UNTIL(loop, c->nmade == 1, 5.0);
    *peer = sv[1];
    return loop;
}

static void close_pair(ll_loop loop, struct conn *c, int peer) {
    if (c->nlost == 0)
        ll_transport_abort(c->t);
    RUN_UNTIL(loop, c->nlost == 1, 5.0);
    close(peer);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* Read what the peer has now, blocking at most ~1 s for the first byte. */
static size_t peer_read(int peer, void *buf, size_t cap) {
    struct timeval tv = {1, 0};
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n = recv(peer, buf, cap, 0);
    return n > 0 ? (size_t)n : 0;
}

/* What a callback does, and what it saw. */
struct job {
    ll_transport t;
    int mode;
    int rc, rc2;
    size_t buffered;
    int sends_before, sends_after;
    int ran;
};

enum { PLAIN, ASYNC_SIZE, ABORT_WRITE, CLOSE_WRITE, CLOSE_WRITE_ASYNC, PEER_GONE };

static void job_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct job *j = arg;
    j->sends_before = c_sends;
    j->buffered = 99;
    switch (j->mode) {
    case PLAIN: j->rc = ll_transport_write(j->t, "hello", 5); break;
    case ASYNC_SIZE: j->rc = ll_transport_write_async_size(j->t, "hello", 5, &j->buffered); break;
    case ABORT_WRITE:
        CHECK_EQ_INT(ll_transport_abort(j->t), 0);
        j->rc = ll_transport_write(j->t, "late", 4);
        j->rc2 = ll_transport_write_async_size(j->t, "late", 4, &j->buffered);
        break;
    case CLOSE_WRITE:
        CHECK_EQ_INT(ll_transport_close(j->t), 0);
        j->rc = ll_transport_write(j->t, "late", 4);
        break;
    case CLOSE_WRITE_ASYNC:
        CHECK_EQ_INT(ll_transport_close(j->t), 0);
        j->rc = ll_transport_write_async_size(j->t, "late", 4, &j->buffered);
        break;
    case PEER_GONE:
        j->rc = ll_transport_write(j->t, "into the void", 13);
        j->rc2 = ll_transport_write(j->t, "again", 5);
        break;
    }
    j->sends_after = c_sends;
    j->ran++;
}

/* From a timer and from call_soon: one send from C each, nothing buffered. */
static void test_timer_and_soon_send_from_c(void) {
    struct conn c;
    int peer;
    ll_loop loop = open_pair(&c, &peer);
    for (int mode = PLAIN; mode <= ASYNC_SIZE; mode++) {
        for (int how = 0; how < 2; how++) {
            struct job j = {.t = c.t, .mode = mode};
            if (how == 0)
                CHECK_EQ_INT(ll_call_later(loop, 0.001, job_cb, &j, NULL), 0);
            else
                CHECK_EQ_INT(ll_call_soon(loop, job_cb, &j, NULL), 0);
            RUN_UNTIL(loop, j.ran == 1, 5.0);
            CHECK_EQ_INT(j.rc, 0);
            CHECK_EQ_INT(j.sends_after - j.sends_before, 1);
            if (mode == ASYNC_SIZE)
                CHECK_EQ_INT(j.buffered, 0);
            char buf[16];
            CHECK_EQ_INT(peer_read(peer, buf, sizeof buf), 5);
            CHECK_EQ_INT(memcmp(buf, "hello", 5), 0);
        }
    }
    size_t size = 1;
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(c.t, &size), 0);
    CHECK_EQ_INT(size, 0);
    close_pair(loop, &c, peer);
}

/* The host queue (a binding's trampoline, called by Go outside any batch):
 * its writes take the fast path too. */
struct hq {
    struct job j;
    int want;
};

static int hq_run(ll_loop loop, void *arg) {
    struct hq *h = arg;
    if (h->want) {
        h->want = 0;
        job_cb(loop, &h->j);
    }
    return 0;
}

static void test_host_queue_sends_from_c(void) {
    struct conn c;
    int peer;
    ll_loop loop = open_pair(&c, &peer);
    struct hq h = {.j = {.t = c.t, .mode = ASYNC_SIZE}, .want = 1};
    CHECK_EQ_INT(ll_loop_set_host_queue(loop, hq_run, &h), 0);
    CHECK_EQ_INT(ll_loop_host_ready(loop), 0);
    RUN_UNTIL(loop, h.j.ran == 1, 5.0);
    CHECK_EQ_INT(h.j.rc, 0);
    CHECK_EQ_INT(h.j.buffered, 0);
    CHECK_EQ_INT(h.j.sends_after - h.j.sends_before, 1);
    char buf[16];
    CHECK_EQ_INT(peer_read(peer, buf, sizeof buf), 5);
    CHECK_EQ_INT(ll_loop_set_host_queue(loop, NULL, NULL), 0);
    close_pair(loop, &c, peer);
}

/* A write the kernel takes only part of: the rest is buffered in Go, and a
 * write after it must not overtake it (no send from C) until the buffer
 * drained; then the fast path comes back. Every byte arrives in order. */
#define BIG (4u << 20)
static unsigned char big[BIG];

struct order_job {
    ll_transport t;
    int sends_big, sends_tail;
    size_t buffered;
    int ran;
};

static void order_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct order_job *o = arg;
    int s0 = c_sends;
    CHECK(ll_transport_write_async_size(o->t, big, BIG, &o->buffered) >= 0);
    o->sends_big = c_sends - s0;
    s0 = c_sends;
    CHECK_EQ_INT(ll_transport_write(o->t, "<tail>", 6), 0);
    o->sends_tail = c_sends - s0;
    o->ran++;
}

static void test_partial_send_keeps_order(void) {
    struct conn c;
    int peer;
    ll_loop loop = open_pair(&c, &peer);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 13 + (i >> 9));
    struct order_job o = {.t = c.t};
    CHECK_EQ_INT(ll_call_soon(loop, order_cb, &o, NULL), 0);
    RUN_UNTIL(loop, o.ran == 1, 5.0);
    CHECK_EQ_INT(o.sends_big, 1); /* the first part went from C */
    CHECK(o.buffered > 0);        /* the kernel did not take 4 MiB */
    CHECK_EQ_INT(o.sends_tail, 0);
    uint32_t want = fnv(fnv(FNV_INIT, big, BIG), "<tail>", 6), got = FNV_INIT;
    size_t total = 0;
    static unsigned char rb[1 << 16];
    double dl = now_s() + 10;
    while (total < BIG + 6 && now_s() < dl) {
        ssize_t n = recv(peer, rb, sizeof rb, MSG_DONTWAIT);
        if (n > 0) {
            got = fnv(got, rb, (size_t)n);
            total += (size_t)n;
        } else {
            tick(loop);
        }
    }
    CHECK_EQ_INT(total, BIG + 6);
    CHECK_EQ_INT(got, want);
    size_t size = 1;
    RUN_UNTIL(loop, ll_transport_get_write_buffer_size(c.t, &size) == 0 && size == 0, 5.0);
    struct job j = {.t = c.t, .mode = PLAIN};
    CHECK_EQ_INT(ll_call_soon(loop, job_cb, &j, NULL), 0);
    RUN_UNTIL(loop, j.ran == 1, 5.0);
    CHECK_EQ_INT(j.sends_after - j.sends_before, 1); /* drained: direct again */
    char buf[8];
    CHECK_EQ_INT(peer_read(peer, buf, sizeof buf), 5);
    close_pair(loop, &c, peer);
}

/* Abort or close (nothing buffered) from a callback, then write: refused
 * as before, nothing sent from C, nothing reaches the peer. */
static void test_write_after_close_or_abort(void) {
    for (int mode = ABORT_WRITE; mode <= CLOSE_WRITE_ASYNC; mode++) {
        struct conn c;
        int peer;
        int fds0 = count_fds();
        ll_loop loop = open_pair(&c, &peer);
        struct job j = {.t = c.t, .mode = mode};
        CHECK_EQ_INT(ll_call_soon(loop, job_cb, &j, NULL), 0);
        RUN_UNTIL(loop, j.ran == 1 && c.nlost == 1, 5.0);
        CHECK_EQ_INT(j.rc, LL_ECLOSED);
        if (mode == ABORT_WRITE)
            CHECK_EQ_INT(j.rc2, LL_ECLOSED);
        CHECK_EQ_INT(j.sends_after, j.sends_before);
        char buf[8];
        CHECK_EQ_INT(peer_read(peer, buf, sizeof buf), 0); /* EOF, no bytes */
        /* The id ended with LL_CONNECTION_LOST: no fast path either. */
        int s0 = c_sends;
        CHECK_EQ_INT(ll_transport_write(c.t, "x", 1), LL_EBADHANDLE);
        CHECK_EQ_INT(c_sends, s0);
        close(peer);
        STILL_RUNS(loop);
        ll_release(loop);
        CHECK_EQ_INT(count_fds(), fds0);
    }
}

/* The peer closed and the loop has not read its EOF yet: the first write
 * is tried from C, fails, and Go ends the transport with the error (as a
 * write through Go does); the next write finds it lost and is dropped (0,
 * as asyncio's), without a send. */
static void test_peer_gone(void) {
    struct conn c;
    int peer;
    ll_loop loop = open_pair(&c, &peer);
    CHECK_EQ_INT(ll_transport_pause_reading(c.t), 0); /* the EOF stays unread */
    close(peer);
    struct job j = {.t = c.t, .mode = PEER_GONE};
    CHECK_EQ_INT(ll_call_soon(loop, job_cb, &j, NULL), 0);
    RUN_UNTIL(loop, j.ran == 1 && c.nlost == 1, 5.0);
    CHECK_EQ_INT(j.rc, 0);              /* write errors end the transport, not the call */
    CHECK_EQ_INT(j.rc2, 0);             /* lost, not closed by the host: dropped */
    CHECK_EQ_INT(j.sends_after - j.sends_before, 1);
    CHECK_EQ_INT(c.lost_code, -EPIPE);
    CHECK_LIFECYCLE(&c, -EPIPE);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* Another thread: through Go. While the loop is idle the write is made
 * there (the bytes arrive, no send from C); while the loop runs on the
 * main thread a debug-mode loop refuses it (LL_EWRONGTHREAD, from Go). */
struct other {
    ll_transport t;
    int rc;
};

static void *other_write(void *arg) {
    struct other *o = arg;
    o->rc = ll_transport_write(o->t, "other", 5);
    return NULL;
}

static void run_other(struct other *o) {
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, other_write, o), 0);
    pthread_join(th, NULL);
}

static void other_cb(ll_loop loop, void *arg) {
    (void)loop;
    run_other(arg);
}

static void test_other_thread_goes_through_go(void) {
    struct conn c;
    int peer;
    ll_loop loop = open_pair(&c, &peer);
    struct other o = {.t = c.t, .rc = 99};
    int s0 = c_sends;
    run_other(&o); /* the loop is idle */
    CHECK_EQ_INT(o.rc, 0);
    char buf[8];
    CHECK_EQ_INT(peer_read(peer, buf, sizeof buf), 5);
    CHECK_EQ_INT(memcmp(buf, "other", 5), 0);
    /* This thread, not running the loop: Go too. */
    CHECK_EQ_INT(ll_transport_write(c.t, "idle!", 5), 0);
    CHECK_EQ_INT(c_sends, s0);
    CHECK_EQ_INT(peer_read(peer, buf, sizeof buf), 5);
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    o.rc = 99;
    CHECK_EQ_INT(ll_call_soon(loop, other_cb, &o, NULL), 0);
    RUN_UNTIL(loop, o.rc != 99, 5.0);
    CHECK_EQ_INT(o.rc, LL_EWRONGTHREAD);
    CHECK_EQ_INT(ll_loop_set_debug(loop, 0), 0);
    close_pair(loop, &c, peer);
}

int main(void) {
    main_thread = pthread_self();
    RUN_TEST(test_timer_and_soon_send_from_c);
    RUN_TEST(test_host_queue_sends_from_c);
    RUN_TEST(test_partial_send_keeps_order);
    RUN_TEST(test_write_after_close_or_abort);
    RUN_TEST(test_peer_gone);
    RUN_TEST(test_other_thread_goes_through_go);
    return CHECK_REPORT();
}
