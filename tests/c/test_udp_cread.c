/* SPDX-License-Identifier: MIT */
/* The C datagram path (capi/cloop/udprecv.c): a datagram transport whose
 * protocol is a C function has its datagrams read in C and handed to the
 * protocol one by one as they are read. What a user relies on stays as it
 * was: every datagram of a burst whole, in order, with its sender's
 * address (8-byte aligned, IPv4, IPv6 and unix); a pause, close or abort
 * made by the protocol in the middle of a burst stops the deliveries at
 * once (the paused transport gets the rest, in order, after resuming); a
 * protocol changed in the middle gets the rest; ICMP errors arrive as
 * LL_ERROR_RECEIVED; a callback's call_soon and sendto work. Each burst is
 * sent before the loop reads, so one readiness holds many datagrams. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "net_util.h"

#define NMAX 256
#define BIG 65507 /* UDP's largest IPv4 payload */

/* What to do when the protocol has seen `at` datagrams. */
enum { ACT_NONE, ACT_PAUSE, ACT_CLOSE, ACT_ABORT, ACT_SWITCH, ACT_SINK };

struct rec {
    int ndgram, nerr, nlost, nsoon, nmisaligned;
    int err_code;
    int seq[NMAX];
    size_t len[NMAX];
    int bad_bytes; /* a datagram whose bytes are not its sequence number's */
    unsigned char addr[128];
    uint32_t addrlen;
    int action, at;
    struct rec *next; /* ACT_SWITCH / ACT_SINK: who gets the rest */
    ll_transport t;
    int reply; /* answer each datagram with "ok" to its sender */
};

static void soon_cb(ll_loop loop, void *arg) {
    (void)loop;
    ((struct rec *)arg)->nsoon++;
}

/* A datagram's payload: its sequence number, then bytes derived from it. */
static size_t fill(unsigned char *buf, int seq, size_t len) {
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(seq * 7 + i);
    if (len >= sizeof seq)
        memcpy(buf, &seq, sizeof seq);
    return len;
}

static void record(struct rec *r, const ll_event *ev) {
    if (r->ndgram >= NMAX)
        return;
    int seq = -1;
    if (ev->len >= sizeof seq)
        memcpy(&seq, ev->data, sizeof seq);
    const unsigned char *b = ev->data;
    for (size_t i = sizeof seq; i < ev->len; i++)
        if (b[i] != (unsigned char)(seq * 7 + i)) {
            r->bad_bytes++;
            break;
        }
    if (ev->addr != NULL && ((uintptr_t)ev->addr & 7) != 0)
        r->nmisaligned++;
    r->seq[r->ndgram] = seq;
    r->len[r->ndgram] = ev->len;
    r->addrlen = ev->addrlen < sizeof r->addr ? ev->addrlen : sizeof r->addr;
    if (ev->addr != NULL)
        memcpy(r->addr, ev->addr, r->addrlen);
    r->ndgram++;
}

static int rec_proto(ll_loop loop, const ll_event *ev, void *arg) {
    struct rec *r = arg;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        r->t = ev->transport;
        break;
    case LL_DATAGRAM_RECEIVED:
        record(r, ev);
        if (r->reply)
            ll_transport_sendto(ev->transport, "ok", 2, ev->addr, ev->addrlen);
        if (r->ndgram == 1)
            ll_call_soon(loop, soon_cb, r, NULL);
        if (r->ndgram == r->at) {
            switch (r->action) {
            case ACT_PAUSE:
                ll_transport_pause_reading(ev->transport);
                break;
            case ACT_CLOSE:
                ll_transport_close(ev->transport);
                break;
            case ACT_ABORT:
                ll_transport_abort(ev->transport);
                break;
            case ACT_SWITCH:
                ll_transport_set_protocol(ev->transport, rec_proto, r->next);
                break;
            case ACT_SINK:
                ll_transport_set_protocol(ev->transport, NULL, r->next);
                break;
            }
        }
        break;
    case LL_ERROR_RECEIVED:
        r->nerr++;
        r->err_code = ev->code;
        break;
    case LL_CONNECTION_LOST:
        r->nlost++;
        break;
    }
    return 0;
}

static void rec_sink(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    (void)arg;
    for (size_t i = 0; i < n; i++)
        rec_proto(loop, &evs[i], evs[i].arg);
}

static int plain_socket(int family) {
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    return fd;
}

static struct sockaddr_in sockname4(ll_transport t) {
    struct sockaddr_in a;
    uint32_t len = sizeof a;
    CHECK_EQ_INT(ll_transport_sockname(t, &a, &len), 0);
    return a;
}

/* Sends datagrams seq first..first+n-1 of len bytes from fd to `to`. */
static void burst(int fd, const void *to, socklen_t tolen, int first, int n, size_t len) {
    static unsigned char buf[BIG];
    for (int i = first; i < first + n; i++)
        CHECK_EQ_INT((int)sendto(fd, buf, fill(buf, i, len), MSG_DONTWAIT, to, tolen), (int)len);
}

static int in_order(const struct rec *r, int first, int n) {
    for (int i = 0; i < n; i++)
        if (r->seq[i] != first + i)
            return 0;
    return 1;
}

/* A burst of datagrams of mixed sizes, the largest UDP payload among them,
 * arrives whole and in order, each with the sender's address (aligned);
 * a callback's call_soon runs and its sendto reaches the sender. */
static void test_burst(void) {
    ll_loop loop = new_loop();
    struct rec r = {.reply = 1};
    ll_transport t = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, rec_proto, &r, &t), 0);
    RUN_UNTIL(loop, r.t == t, 5.0);
    struct sockaddr_in to = sockname4(t);
    int fd = plain_socket(AF_INET);
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK_EQ_INT(bind(fd, (struct sockaddr *)&from, sizeof from), 0);
    socklen_t flen = sizeof from;
    getsockname(fd, (struct sockaddr *)&from, &flen);

    /* In groups that the socket's default buffer holds (the loop reads
     * only in RUN_UNTIL). */
    burst(fd, &to, sizeof to, 0, 70, 64); /* more than one recvmmsg (32) and one readiness (64) */
    RUN_UNTIL(loop, r.ndgram == 70, 5.0);
    burst(fd, &to, sizeof to, 70, 1, BIG); /* the largest */
    burst(fd, &to, sizeof to, 71, 1, 0);   /* an empty one */
    RUN_UNTIL(loop, r.ndgram == 72, 5.0);
    burst(fd, &to, sizeof to, 72, 30, 1024);
    RUN_UNTIL(loop, r.ndgram == 102, 5.0);
    CHECK(in_order(&r, 0, 70));
    CHECK_EQ_INT(r.seq[70], 70);
    CHECK_EQ_INT((int)r.len[70], BIG);
    CHECK_EQ_INT((int)r.len[71], 0);
    CHECK(in_order(&r, 0, 71) && r.seq[71] == -1);
    for (int i = 0; i < 30; i++)
        CHECK_EQ_INT(r.seq[72 + i], 72 + i);
    CHECK_EQ_INT(r.bad_bytes, 0);
    CHECK_EQ_INT(r.nmisaligned, 0);
    CHECK_EQ_INT((int)r.addrlen, (int)sizeof from);
    CHECK(memcmp(r.addr, &from, sizeof from) == 0);
    RUN_UNTIL(loop, r.nsoon == 1, 5.0);
    /* Every reply came back to the sender. */
    char ok[8];
    int replies = 0;
    while (recv(fd, ok, sizeof ok, MSG_DONTWAIT) == 2)
        replies++;
    CHECK_EQ_INT(replies, 102);
    close(fd);
    ll_transport_close(t);
    RUN_UNTIL(loop, r.nlost == 1, 5.0);
    CHECK_EQ_INT(r.ndgram, 102);
    ll_release(loop);
}

/* An IPv6 sender's address arrives as a struct sockaddr_in6, in place. */
static void test_ipv6_sender(void) {
    ll_loop loop = new_loop();
    struct rec r = {0};
    ll_transport t = 0;
    int rc = ll_udp_open(loop, "::1", 0, NULL, 0, 0, rec_proto, &r, &t);
    if (rc != 0) {
        fprintf(stderr, "  (no IPv6 loopback: %s)\n", ll_err_name(rc));
        CHECK_EQ_INT(rc, -EADDRNOTAVAIL);
        ll_release(loop);
        return;
    }
    struct sockaddr_in6 to;
    uint32_t len = sizeof to;
    CHECK_EQ_INT(ll_transport_sockname(t, &to, &len), 0);
    int fd = plain_socket(AF_INET6);
    struct sockaddr_in6 from = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    CHECK_EQ_INT(bind(fd, (struct sockaddr *)&from, sizeof from), 0);
    socklen_t flen = sizeof from;
    getsockname(fd, (struct sockaddr *)&from, &flen);
    burst(fd, &to, sizeof to, 0, 40, 100);
    RUN_UNTIL(loop, r.ndgram == 40, 5.0);
    CHECK(in_order(&r, 0, 40));
    CHECK_EQ_INT(r.nmisaligned, 0);
    CHECK_EQ_INT((int)r.addrlen, (int)sizeof(struct sockaddr_in6));
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)r.addr;
    CHECK_EQ_INT(a->sin6_family, AF_INET6);
    CHECK_EQ_INT(a->sin6_port, from.sin6_port);
    CHECK(memcmp(&a->sin6_addr, &in6addr_loopback, sizeof a->sin6_addr) == 0);
    close(fd);
    ll_transport_abort(t);
    RUN_UNTIL(loop, r.nlost == 1, 5.0);
    ll_release(loop);
}

/* An adopted unix datagram socket: the sender's path arrives. */
static void test_unix_sender(void) {
    ll_loop loop = new_loop();
    struct rec r = {0};
    int rfd = plain_socket(AF_UNIX), sfd = plain_socket(AF_UNIX);
    struct sockaddr_un ra = {.sun_family = AF_UNIX}, sa = {.sun_family = AF_UNIX};
    /* Abstract names (leading NUL): nothing to clean up. */
    snprintf(ra.sun_path + 1, sizeof ra.sun_path - 1, "ll-udpc-r-%d", (int)getpid());
    snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "ll-udpc-s-%d", (int)getpid());
    socklen_t ralen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ra.sun_path + 1));
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
    CHECK_EQ_INT(bind(rfd, (struct sockaddr *)&ra, ralen), 0);
    CHECK_EQ_INT(bind(sfd, (struct sockaddr *)&sa, salen), 0);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, rfd, LL_DATAGRAM, rec_proto, &r, &t), 0);
    /* A unix socket queues as few as 10 datagrams (max_dgram_qlen). */
    burst(sfd, &ra, ralen, 0, 8, 200);
    RUN_UNTIL(loop, r.ndgram == 8, 5.0);
    burst(sfd, &ra, ralen, 8, 8, 200);
    RUN_UNTIL(loop, r.ndgram == 16, 5.0);
    CHECK(in_order(&r, 0, 16));
    CHECK_EQ_INT(r.bad_bytes, 0);
    CHECK_EQ_INT(r.nmisaligned, 0);
    CHECK_EQ_INT((int)r.addrlen, (int)salen);
    CHECK(memcmp(r.addr, &sa, salen) == 0);
    close(sfd);
    ll_transport_close(t);
    RUN_UNTIL(loop, r.nlost == 1, 5.0);
    ll_release(loop);
}

/* Opens a receiver with protocol state r, sends it n datagrams in one
 * burst, and runs until the first `at` arrived. Returns the receiver. */
static ll_transport start_burst(ll_loop loop, struct rec *r, int n, int *sender) {
    ll_transport t = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, rec_proto, r, &t), 0);
    RUN_UNTIL(loop, r->t == t, 5.0);
    struct sockaddr_in to = sockname4(t);
    *sender = plain_socket(AF_INET);
    burst(*sender, &to, sizeof to, 0, n, 64);
    RUN_UNTIL(loop, r->ndgram >= r->at, 5.0);
    return t;
}

/* A pause in the middle of a burst: nothing more until resumed, then the
 * rest in order, then what came later. */
static void test_pause_mid_burst(void) {
    ll_loop loop = new_loop();
    struct rec r = {.action = ACT_PAUSE, .at = 5};
    int fd;
    ll_transport t = start_burst(loop, &r, 40, &fd);
    spin(loop, 5);
    tick(loop);
    CHECK_EQ_INT(r.ndgram, 5);
    CHECK_EQ_INT(ll_transport_is_reading(t), 0);
    CHECK_EQ_INT(ll_transport_resume_reading(t), 0);
    RUN_UNTIL(loop, r.ndgram == 40, 5.0);
    struct sockaddr_in to = sockname4(t);
    burst(fd, &to, sizeof to, 40, 10, 64);
    RUN_UNTIL(loop, r.ndgram == 50, 5.0);
    CHECK(in_order(&r, 0, 50));
    CHECK_EQ_INT(r.bad_bytes, 0);
    close(fd);
    ll_transport_close(t);
    RUN_UNTIL(loop, r.nlost == 1, 5.0);
    ll_release(loop);
}

/* A close or an abort in the middle of a burst: no datagram after it, the
 * transport's end is reported once. */
static void close_mid_burst(int action) {
    ll_loop loop = new_loop();
    struct rec r = {.action = action, .at = 5};
    int fd;
    start_burst(loop, &r, 40, &fd);
    RUN_UNTIL(loop, r.nlost == 1, 5.0);
    spin(loop, 5);
    tick(loop);
    CHECK_EQ_INT(r.ndgram, 5);
    CHECK(in_order(&r, 0, 5));
    CHECK_EQ_INT(r.nlost, 1);
    close(fd);
    ll_release(loop);
}

static void test_close_mid_burst(void) { close_mid_burst(ACT_CLOSE); }
static void test_abort_mid_burst(void) { close_mid_burst(ACT_ABORT); }

/* A protocol changed in the middle of a burst gets the rest, in order:
 * another C function, or the batch sink (protocol NULL). */
static void switch_mid_burst(int action) {
    ll_loop loop = new_loop();
    struct rec second = {0};
    struct rec r = {.action = action, .at = 5, .next = &second};
    if (action == ACT_SINK)
        CHECK_EQ_INT(ll_loop_set_event_batch(loop, rec_sink, NULL), 0);
    int fd;
    ll_transport t = start_burst(loop, &r, 40, &fd);
    RUN_UNTIL(loop, second.ndgram == 35, 5.0);
    CHECK_EQ_INT(r.ndgram, 5);
    CHECK(in_order(&r, 0, 5));
    CHECK(in_order(&second, 5, 35));
    close(fd);
    ll_transport_close(t);
    RUN_UNTIL(loop, second.nlost == 1, 5.0);
    ll_release(loop);
}

static void test_switch_mid_burst(void) { switch_mid_burst(ACT_SWITCH); }
static void test_sink_mid_burst(void) { switch_mid_burst(ACT_SINK); }

/* A connected transport whose peer's port is closed hears ECONNREFUSED
 * (the ICMP error, reported by the receive) as LL_ERROR_RECEIVED, stays
 * open, and receives the peer's datagrams once it is there. */
static void test_refused_then_datagrams(void) {
    ll_loop loop = new_loop();
    int peer = plain_socket(AF_INET);
    struct sockaddr_in pa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK_EQ_INT(bind(peer, (struct sockaddr *)&pa, sizeof pa), 0);
    socklen_t palen = sizeof pa;
    getsockname(peer, (struct sockaddr *)&pa, &palen);
    int port = ntohs(pa.sin_port);
    close(peer); /* the port is closed now */
    struct rec r = {0};
    ll_transport t = 0;
    CHECK_EQ_INT(ll_udp_open(loop, NULL, 0, "127.0.0.1", port, 0, rec_proto, &r, &t), 0);
    RUN_UNTIL(loop, r.t == t, 5.0);
    CHECK_EQ_INT(ll_transport_write(t, "ping", 4), 0);
    RUN_UNTIL(loop, r.nerr == 1, 5.0);
    CHECK_EQ_INT(r.err_code, -ECONNREFUSED);
    CHECK_EQ_INT(ll_transport_is_closing(t), 0);
    /* The peer comes back on the same port and sends. */
    peer = plain_socket(AF_INET);
    CHECK_EQ_INT(bind(peer, (struct sockaddr *)&pa, sizeof pa), 0);
    struct sockaddr_in to = sockname4(t);
    burst(peer, &to, sizeof to, 0, 40, 64);
    RUN_UNTIL(loop, r.ndgram == 40, 5.0);
    CHECK(in_order(&r, 0, 40));
    CHECK_EQ_INT(r.nerr, 1);
    close(peer);
    ll_transport_close(t);
    RUN_UNTIL(loop, r.nlost == 1, 5.0);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_burst);
    RUN_TEST(test_ipv6_sender);
    RUN_TEST(test_unix_sender);
    RUN_TEST(test_pause_mid_burst);
    RUN_TEST(test_close_mid_burst);
    RUN_TEST(test_abort_mid_burst);
    RUN_TEST(test_switch_mid_burst);
    RUN_TEST(test_sink_mid_burst);
    RUN_TEST(test_refused_then_datagrams);
    return CHECK_REPORT();
}
