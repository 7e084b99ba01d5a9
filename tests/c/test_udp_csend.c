/* SPDX-License-Identifier: MIT */
/* The C datagram send path: on the loop's thread, ll_transport_sendto (and
 * ll_transport_write on a connected datagram transport; ll_udp_sendmany
 * with sendmmsg on Linux) to an open
 * datagram transport with nothing queued is one sendto from C, without
 * entering Go. Everything a user relies on stays as the Go path gives it:
 * datagrams arrive whole and in order, also when some wait in the queue
 * (a datagram sent while others wait goes behind them, never from C);
 * a kernel error other than a would-block is one LL_ERROR_RECEIVED
 * (ECONNREFUSED on a connected socket, EMSGSIZE), never lost or doubled;
 * bad input, a closed transport and another thread give the same codes.
 *
 * How "from C" is seen: this program's sendto() counts the calls made on
 * the main thread (libloop.so's C code calls it; Go uses raw system
 * calls). */
#define _GNU_SOURCE /* sendmmsg */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "net_util.h"

static int c_sendtos;
static pthread_t main_thread;

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *addr, socklen_t addrlen) {
    if (pthread_equal(pthread_self(), main_thread))
        c_sendtos++;
    return syscall(SYS_sendto, fd, buf, len, flags, addr, addrlen);
}

/* ll_udp_sendmany's fast path (Linux): counted with the sendto calls. */
int sendmmsg(int fd, struct mmsghdr *msgs, unsigned int n, int flags) {
    if (pthread_equal(pthread_self(), main_thread))
        c_sendtos++;
    return (int)syscall(SYS_sendmmsg, fd, msgs, n, flags);
}

/* A datagram of the order test: its index and a length that varies. */
#define NSEQ 3000
static size_t seq_len(int i) { return 8 + (size_t)(i % 97) * 13; }

static void fill_seq(char *buf, int i) {
    memset(buf, (char)i, seq_len(i));
    memcpy(buf, &i, sizeof i);
}

struct order {
    ll_transport t;
    int many;           /* send with ll_udp_sendmany, 10 a call */
    int next;           /* the next index to send */
    int rc;             /* the first non-zero result */
    size_t queued;      /* the write buffer after the first burst */
    int direct_before;  /* c_sendtos when the burst began */
    int direct_after;
};

/* Send until the kernel refuses (the rest of a burst is queued by Go);
 * then n more, which must go behind the queued ones. */
/* Send the next datagram (with sendmany: the next 10). */
static void send_next(struct order *o) {
    static char bufs[10][2048];
    ll_datagram d[10];
    int k = o->many ? 10 : 1;
    if (k > NSEQ - o->next)
        k = NSEQ - o->next;
    for (int j = 0; j < k; j++) {
        fill_seq(bufs[j], o->next + j);
        d[j] = (ll_datagram){.data = bufs[j], .len = seq_len(o->next + j)};
    }
    int rc = o->many ? ll_udp_sendmany(o->t, d, (size_t)k, 0) : ll_transport_sendto(o->t, bufs[0], d[0].len, NULL, 0);
    if (rc != 0 && o->rc == 0)
        o->rc = rc;
    o->next += k;
}

static void send_burst(struct order *o, int more) {
    size_t size = 0;
    o->direct_before = c_sendtos;
    while (o->next < NSEQ && size == 0) {
        send_next(o);
        CHECK_EQ_INT(ll_transport_get_write_buffer_size(o->t, &size), 0);
    }
    o->queued = size;
    for (int k = 0; k < more && o->next < NSEQ; k++)
        send_next(o);
    o->direct_after = c_sendtos;
}

static void burst_cb(ll_loop loop, void *arg) {
    (void)loop;
    send_burst(arg, 50);
}

/* Read what the peer has now; check each datagram is the next, whole. */
static int drain_peer(int peer, int *want, int max) {
    char buf[4096];
    int got = 0;
    while (got < max) {
        ssize_t n = recv(peer, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0)
            break;
        int v = -1;
        memcpy(&v, buf, sizeof v);
        CHECK_EQ_INT(v, *want);
        CHECK_EQ_INT(n, (long long)seq_len(*want));
        CHECK_EQ_INT((unsigned char)buf[n - 1], (unsigned char)*want);
        (*want)++;
        got++;
    }
    return got;
}

/* A Unix datagram pair: its sender blocks (EAGAIN) when the peer's queue
 * is full, instead of dropping, so some datagrams wait in the transport's
 * queue. The first ones go from C; once one is refused the rest queue in
 * Go, and a datagram sent while the queue holds any (after the peer made
 * room) goes behind them, not from C: the peer reads every datagram,
 * whole, in order. Once the queue drained, sends go from C again. */
static void order_with_queue(int many) {
    ll_loop loop = new_loop();
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
    struct conn c;
    conn_init(&c);
    struct order o = {.many = many};
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_DATAGRAM, conn_proto, &c, &o.t), 0);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(o.t, 64 << 20, 0), 0); /* no pause */
    CHECK_EQ_INT(ll_call_soon(loop, burst_cb, &o, NULL), 0);
    RUN_UNTIL(loop, o.direct_after != 0, 5.0);
    CHECK_EQ_INT(o.rc, 0);
    CHECK(o.queued > 0); /* the kernel refused one: the queue holds it */
    CHECK(o.direct_after - o.direct_before > 1); /* the first went from C... */
    int direct1 = o.direct_after - o.direct_before;
    CHECK(direct1 < (many ? o.next / 10 : o.next)); /* ...not all of them */

    /* The peer makes room while the queue still holds datagrams; a new
     * burst must queue behind them, none from C. */
    int want = 0;
    CHECK(drain_peer(sv[1], &want, 20) == 20);
    CHECK_EQ_INT(ll_call_soon(loop, burst_cb, &o, NULL), 0);
    o.direct_after = 0;
    RUN_UNTIL(loop, o.direct_after != 0, 5.0);
    CHECK_EQ_INT(o.rc, 0);
    CHECK_EQ_INT(o.direct_after - o.direct_before, 0); /* all queued in Go */
    /* Drain all: the loop flushes the queue as the peer reads. */
    double end = now_s() + 10.0;
    size_t size = 1;
    while ((want < o.next || size > 0) && now_s() < end) {
        drain_peer(sv[1], &want, 1 << 20);
        tick(loop);
        CHECK_EQ_INT(ll_transport_get_write_buffer_size(o.t, &size), 0);
    }
    CHECK_EQ_INT(want, o.next);
    CHECK_EQ_INT(size, 0);

    /* The queue is empty: the next datagrams go from C again, and arrive. */
    int before = c_sendtos, from = o.next;
    CHECK_EQ_INT(ll_call_soon(loop, burst_cb, &o, NULL), 0);
    o.direct_after = 0;
    RUN_UNTIL(loop, o.direct_after != 0, 5.0);
    CHECK(c_sendtos - before >= 1);
    end = now_s() + 10.0;
    while ((want < o.next || size > 0) && now_s() < end) {
        drain_peer(sv[1], &want, 1 << 20);
        tick(loop);
        CHECK_EQ_INT(ll_transport_get_write_buffer_size(o.t, &size), 0);
    }
    CHECK(o.next > from);
    CHECK_EQ_INT(want, o.next);
    CHECK_EQ_INT(c.nerr, 0);
    ll_transport_close(o.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    close(sv[1]);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_order_with_queue(void) { order_with_queue(0); }

/* The same with ll_udp_sendmany, 10 datagrams a call. */
static void test_order_with_queue_sendmany(void) { order_with_queue(1); }

static int plain_socket(void) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK_EQ_INT(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    return fd;
}

static struct sockaddr_in fd_addr(int fd) {
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    CHECK_EQ_INT(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    return sin;
}

struct refused {
    ll_transport t;
    int port, back; /* the closed port; a socket bound to it again */
    int rc1, rc2, pending, sends, ran;
};

/* Send one datagram to a closed port and wait (in the callback, so the
 * loop reads nothing meanwhile) until its ICMP error is pending on the
 * socket; then bind the port again and send "2": that sendto takes the
 * error, so "2" is not sent. A second try of it would reach the new
 * socket, and the error would be lost. */
static void refused_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct refused *r = arg;
    int before = c_sendtos;
    r->rc1 = ll_transport_sendto(r->t, "1", 1, NULL, 0);
    struct pollfd p = {.fd = ll_transport_fd(r->t), .events = 0};
    r->pending = poll(&p, 1, 2000) == 1 && (p.revents & POLLERR);
    r->back = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_port = htons((unsigned short)r->port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK_EQ_INT(bind(r->back, (struct sockaddr *)&sin, sizeof sin), 0);
    r->rc2 = ll_transport_write(r->t, "2", 1);
    r->sends = c_sendtos - before;
    r->ran = 1;
}

/* ECONNREFUSED taken by C's sendto on a connected socket: one
 * LL_ERROR_RECEIVED (not lost to a retry, not doubled), the datagram that
 * drew it is not sent, the call returns 0, the transport stays open and
 * sends on. */
static void test_refused_once(void) {
    ll_loop loop = new_loop();
    int gone = plain_socket();
    int port = ntohs(fd_addr(gone).sin_port);
    close(gone);
    struct conn c;
    conn_init(&c);
    struct refused r = {.port = port};
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, "127.0.0.1", port, 0, conn_proto, &c, &r.t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_call_soon(loop, refused_cb, &r, NULL), 0);
    RUN_UNTIL(loop, r.ran, 5.0);
    CHECK_EQ_INT(r.pending, 1);
    CHECK_EQ_INT(r.rc1, 0);
    CHECK_EQ_INT(r.rc2, 0);
    CHECK_EQ_INT(r.sends, 2); /* both from C */
    RUN_UNTIL(loop, c.nerr >= 1, 5.0);
    for (int i = 0; i < 10; i++)
        tick(loop);
    CHECK_EQ_INT(c.nerr, 1);
    CHECK_EQ_INT(c.err_code, -ECONNREFUSED);
    CHECK_EQ_INT(c.nlost, 0);
    CHECK_EQ_INT(ll_transport_is_closing(r.t), 0);
    char buf[4];
    CHECK_EQ_INT(recv(r.back, buf, sizeof buf, MSG_DONTWAIT), -1); /* "2" was not sent */
    CHECK_EQ_INT(ll_transport_sendto(r.t, "3", 1, NULL, 0), 0);
    struct timeval tv = {1, 0};
    setsockopt(r.back, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    CHECK_EQ_INT(recv(r.back, buf, sizeof buf, 0), 1);
    CHECK_EQ_INT(buf[0], '3');
    close(r.back);
    ll_transport_close(r.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_EQ_INT(c.nerr, 1);
    STILL_RUNS(loop);
    ll_release(loop);
}

struct sized {
    ll_transport t;
    struct sockaddr_in to;
    int rc_big, rc_small, rc_write_big, sends, ran;
};

static void sized_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct sized *s = arg;
    static char big[65508]; /* one more than UDP's largest IPv4 payload */
    int before = c_sendtos;
    s->rc_big = ll_transport_sendto(s->t, big, sizeof big, &s->to, sizeof s->to);
    s->rc_small = ll_transport_sendto(s->t, "ok", 2, &s->to, sizeof s->to);
    s->sends = c_sendtos - before;
    s->ran = 1;
}

/* A datagram too large (65,508 bytes) from C: the call returns 0 and its
 * EMSGSIZE is one LL_ERROR_RECEIVED, as from Go; the next one arrives. */
static void test_emsgsize(void) {
    ll_loop loop = new_loop();
    int peer = plain_socket();
    struct conn c;
    conn_init(&c);
    struct sized s = {.to = fd_addr(peer)};
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &s.t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_call_soon(loop, sized_cb, &s, NULL), 0);
    RUN_UNTIL(loop, s.ran && c.nerr >= 1, 5.0);
    for (int i = 0; i < 5; i++)
        tick(loop);
    CHECK_EQ_INT(s.rc_big, 0);
    CHECK_EQ_INT(s.rc_small, 0);
    CHECK_EQ_INT(s.sends, 2);
    CHECK_EQ_INT(c.nerr, 1);
    CHECK_EQ_INT(c.err_code, -EMSGSIZE);
    char buf[8];
    struct timeval tv = {1, 0};
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    CHECK_EQ_INT(recv(peer, buf, sizeof buf, 0), 2);
    CHECK_EQ_INT(memcmp(buf, "ok", 2), 0);
    close(peer);
    ll_transport_close(s.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    ll_release(loop);
}

struct many {
    ll_transport t;
    struct sockaddr_in to;
    int rc, rc_bad, sends, sends_bad, ran;
};

static void many_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct many *m = arg;
    static char huge[70000];
    static int five[5] = {1000, 1001, 1002, 1003, 1004};
    ll_datagram d[5];
    for (int i = 0; i < 5; i++)
        d[i] = (ll_datagram){.data = &five[i], .len = sizeof(int), .addr = &m->to, .addrlen = sizeof m->to};
    d[2].data = huge;
    d[2].len = sizeof huge;
    int before = c_sendtos;
    m->rc = ll_udp_sendmany(m->t, d, 5, 0);
    m->sends = c_sendtos - before;
    d[2] = (ll_datagram){.data = "x", .len = 1, .addr = &m->to, .addrlen = 0};
    before = c_sendtos;
    m->rc_bad = ll_udp_sendmany(m->t, d, 5, 0);
    m->sends_bad = c_sendtos - before;
    m->ran = 1;
}

/* ll_udp_sendmany from C: the third of five too large is one
 * LL_ERROR_RECEIVED (EMSGSIZE) and the four others arrive in order; a
 * record with a bad address is LL_EINVAL with nothing sent. */
static void test_sendmany_error_and_bad_input(void) {
    ll_loop loop = new_loop();
    int peer = plain_socket();
    struct conn c;
    conn_init(&c);
    struct many m = {.to = fd_addr(peer)};
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &m.t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_call_soon(loop, many_cb, &m, NULL), 0);
    RUN_UNTIL(loop, m.ran && c.nerr >= 1, 5.0);
    for (int i = 0; i < 5; i++)
        tick(loop);
    CHECK_EQ_INT(m.rc, 0);
    CHECK(m.sends >= 1); /* from C */
    CHECK_EQ_INT(m.rc_bad, LL_EINVAL);
    CHECK_EQ_INT(m.sends_bad, 0);
    CHECK_EQ_INT(c.nerr, 1);
    CHECK_EQ_INT(c.err_code, -EMSGSIZE);
    int want[4] = {1000, 1001, 1003, 1004};
    struct timeval tv = {1, 0};
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    for (int i = 0; i < 4; i++) {
        int v = -1;
        CHECK_EQ_INT(recv(peer, &v, sizeof v, 0), (long long)sizeof v);
        CHECK_EQ_INT(v, want[i]);
    }
    char buf[4];
    CHECK_EQ_INT(recv(peer, buf, sizeof buf, MSG_DONTWAIT), -1); /* the bad call sent nothing */
    close(peer);
    ll_transport_close(m.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    ll_release(loop);
}

struct bad {
    ll_transport t;
    struct sockaddr_in to;
    int rc[8];
    int sends, ran;
};

/* Bad input on the loop's thread, where the fast path would run: the
 * codes the Go path gives; nothing is sent. Then a send after close. */
static void bad_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct bad *b = arg;
    unsigned char wide[130] = {0};
    memcpy(wide, &b->to, sizeof b->to);
    int before = c_sendtos;
    b->rc[0] = ll_transport_sendto(b->t, NULL, 5, &b->to, sizeof b->to);
    b->rc[1] = ll_transport_sendto(b->t, "x", 1, &b->to, 0);
    b->rc[2] = ll_transport_sendto(b->t, "x", 1, &b->to, 300);
    b->rc[3] = ll_transport_sendto(b->t, "x", 1, wide, sizeof wide); /* longer than any sockaddr */
    b->rc[4] = ll_transport_sendto(0, "x", 1, &b->to, sizeof b->to);
    b->rc[5] = ll_transport_sendto(b->t, "x", 1, NULL, 0); /* not connected */
    b->sends = c_sendtos - before;
    CHECK_EQ_INT(ll_transport_close(b->t), 0);
    before = c_sendtos;
    b->rc[6] = ll_transport_sendto(b->t, "x", 1, &b->to, sizeof b->to);
    b->rc[7] = ll_transport_write(b->t, "x", 1);
    b->sends += c_sendtos - before;
    b->ran = 1;
}

static void test_bad_input_and_closed(void) {
    ll_loop loop = new_loop();
    int peer = plain_socket();
    struct conn c;
    conn_init(&c);
    struct bad b = {.to = fd_addr(peer)};
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &b.t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_call_soon(loop, bad_cb, &b, NULL), 0);
    RUN_UNTIL(loop, b.ran && c.nlost == 1, 5.0);
    CHECK_EQ_INT(b.rc[0], LL_EINVAL);
    CHECK_EQ_INT(b.rc[1], LL_EINVAL);
    CHECK_EQ_INT(b.rc[2], LL_EINVAL);
    CHECK_EQ_INT(b.rc[3], LL_EINVAL);
    CHECK_EQ_INT(b.rc[4], LL_EBADHANDLE);
    CHECK_EQ_INT(b.rc[6], LL_ECLOSED);
    CHECK_EQ_INT(b.rc[7], LL_ECLOSED);
    /* Not connected, no address: the kernel's EDESTADDRREQ, as from Go. */
    CHECK_EQ_INT(b.rc[5], 0);
    CHECK_EQ_INT(c.nerr, 1);
    CHECK_EQ_INT(c.err_code, -EDESTADDRREQ);
    CHECK_EQ_INT(b.sends, 1); /* only the unconnected one reached sendto */
    char buf[4];
    CHECK_EQ_INT(recv(peer, buf, sizeof buf, MSG_DONTWAIT), -1); /* nothing arrived */
    CHECK_EQ_INT(ll_transport_sendto(b.t, "x", 1, &b.to, sizeof b.to), LL_EBADHANDLE); /* ended */
    close(peer);
    ll_release(loop);
}

/* Another thread while the loop runs: not the fast path; a debug-mode
 * loop refuses it (LL_EWRONGTHREAD, from Go) and nothing is sent. */
struct other {
    ll_transport t;
    struct sockaddr_in to;
    int rc;
};

static void *other_send(void *arg) {
    struct other *o = arg;
    o->rc = ll_transport_sendto(o->t, "x", 1, &o->to, sizeof o->to);
    return NULL;
}

static void other_cb(ll_loop loop, void *arg) {
    (void)loop;
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, other_send, arg), 0);
    pthread_join(th, NULL);
}

static void test_other_thread(void) {
    ll_loop loop = new_loop();
    int peer = plain_socket();
    struct conn c;
    conn_init(&c);
    struct other o = {.to = fd_addr(peer), .rc = 99};
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &o.t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    CHECK_EQ_INT(ll_call_soon(loop, other_cb, &o, NULL), 0);
    RUN_UNTIL(loop, o.rc != 99, 5.0);
    CHECK_EQ_INT(o.rc, LL_EWRONGTHREAD);
    char buf[4];
    CHECK_EQ_INT(recv(peer, buf, sizeof buf, MSG_DONTWAIT), -1);
    CHECK_EQ_INT(ll_loop_set_debug(loop, 0), 0);
    close(peer);
    ll_transport_close(o.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    ll_release(loop);
}

int main(void) {
    main_thread = pthread_self();
    RUN_TEST(test_order_with_queue);
    RUN_TEST(test_order_with_queue_sendmany);
    RUN_TEST(test_sendmany_error_and_bad_input);
    RUN_TEST(test_refused_once);
    RUN_TEST(test_emsgsize);
    RUN_TEST(test_bad_input_and_closed);
    RUN_TEST(test_other_thread);
    return CHECK_REPORT();
}
