/* SPDX-License-Identifier: MIT */
/* UDP in batches: datagrams waiting when the loop reads reach the batch
 * sink together (one call for a whole readiness), every one whole, in
 * order, with its sender; ll_udp_sendmany sends a batch in one call, its
 * failures one LL_ERROR_RECEIVED each while the rest go; an ICMP error on a
 * connected socket ends nothing; and what ll_udp_sendmany refuses. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

#define NDGRAM 150 /* more than one readiness reads (64) and than one recvmmsg (32) */

struct sink {
    int calls, ndgram, nerr, maxbatch;
    int seq[4 * NDGRAM];
    size_t len[4 * NDGRAM];
    unsigned short port[4 * NDGRAM];
    int errs[16];
};

static void sink_fn(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    (void)loop;
    struct sink *s = arg;
    int dg = 0;
    s->calls++;
    for (size_t i = 0; i < n; i++) {
        const ll_event *ev = &evs[i];
        if (ev->kind == LL_DATAGRAM_RECEIVED && s->ndgram < 4 * NDGRAM) {
            int v = -1;
            if (ev->len >= sizeof v)
                memcpy(&v, ev->data, sizeof v);
            s->seq[s->ndgram] = v;
            s->len[s->ndgram] = ev->len;
            s->port[s->ndgram] = ev->addrlen >= sizeof(struct sockaddr_in)
                                     ? ntohs(((const struct sockaddr_in *)ev->addr)->sin_port)
                                     : 0;
            s->ndgram++;
            dg++;
        } else if (ev->kind == LL_ERROR_RECEIVED && s->nerr < 16) {
            s->errs[s->nerr++] = ev->code;
        }
    }
    if (dg > s->maxbatch)
        s->maxbatch = dg;
}

static struct sockaddr_in local_addr(ll_transport t) {
    struct sockaddr_in a;
    uint32_t len = sizeof a;
    CHECK_EQ_INT(ll_transport_sockname(t, &a, &len), 0);
    return a;
}

static int plain_socket(void) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK_EQ_INT(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    return fd;
}

static unsigned short fd_port(int fd) {
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    getsockname(fd, (struct sockaddr *)&sin, &len);
    return ntohs(sin.sin_port);
}

/* Datagrams already waiting: one readiness reads up to 64 and they reach
 * the sink in one call; all arrive, whole, in order, with their senders. */
static void test_batch_receive(void) {
    ll_loop loop = new_loop();
    struct sink s = {0};
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, sink_fn, &s), 0);
    ll_transport rt = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, NULL, NULL, &rt), 0);
    int big = 1 << 20;
    setsockopt(ll_transport_fd(rt), SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct sockaddr_in ra = local_addr(rt);
    int a = plain_socket(), b = plain_socket();
    char buf[2048];
    for (int i = 0; i < NDGRAM; i++) {
        memset(buf, i, sizeof buf);
        memcpy(buf, &i, sizeof i);
        size_t len = 16 + (size_t)i * 10;
        CHECK_EQ_INT(sendto(i % 2 ? b : a, buf, len, 0, (struct sockaddr *)&ra, sizeof ra), (long long)len);
    }
    RUN_UNTIL(loop, s.ndgram == NDGRAM, 5.0);
    CHECK_EQ_INT(s.ndgram, NDGRAM);
    CHECK_EQ_INT(s.maxbatch, 64); /* one readiness, one crossing */
    for (int i = 0; i < s.ndgram; i++) {
        CHECK_EQ_INT(s.seq[i], i);
        CHECK_EQ_INT(s.len[i], 16 + (size_t)i * 10);
        CHECK_EQ_INT(s.port[i], fd_port(i % 2 ? b : a));
    }
    CHECK_EQ_INT(s.nerr, 0);
    close(a);
    close(b);
    ll_transport_close(rt);
    ll_release(loop);
}

/* A datagram of 60,000 bytes arrives whole among small ones. */
static void test_large_whole(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    ll_transport rt = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &rt), 0);
    struct sockaddr_in ra = local_addr(rt);
    int fd = plain_socket();
    static char big[60000];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = 'z';
    CHECK_EQ_INT(sendto(fd, "ab", 2, 0, (struct sockaddr *)&ra, sizeof ra), 2);
    CHECK_EQ_INT(sendto(fd, big, sizeof big, 0, (struct sockaddr *)&ra, sizeof ra), (long long)sizeof big);
    CHECK_EQ_INT(sendto(fd, "cd", 2, 0, (struct sockaddr *)&ra, sizeof ra), 2);
    RUN_UNTIL(loop, c.ndgram == 3, 5.0);
    CHECK_EQ_INT(c.nbytes, (long long)sizeof big + 4);
    /* The bytes, in order: "ab", the big one, "cd". */
    uint32_t h = fnv(FNV_INIT, "ab", 2);
    h = fnv(h, big, sizeof big);
    h = fnv(h, "cd", 2);
    CHECK_EQ_INT(c.hash, h);
    close(fd);
    ll_transport_close(rt);
    ll_release(loop);
}

/* ll_udp_sendmany: NDGRAM datagrams in one call, addressed and to the
 * connected peer, arrive in order; one the kernel rejects is one
 * LL_ERROR_RECEIVED and the rest still go. */
static void test_sendmany(void) {
    ll_loop loop = new_loop();
    struct sink s = {0};
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, sink_fn, &s), 0);
    ll_transport rt = 0, st = 0, ct = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, NULL, NULL, &rt), 0);
    int big = 1 << 20;
    setsockopt(ll_transport_fd(rt), SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct sockaddr_in ra = local_addr(rt);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, NULL, NULL, &st), 0);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, "127.0.0.1", ntohs(ra.sin_port), 0, NULL, NULL, &ct), 0);
    static int vals[2 * NDGRAM];
    ll_datagram d[NDGRAM];
    for (int i = 0; i < NDGRAM; i++) {
        vals[i] = i;
        d[i] = (ll_datagram){.data = &vals[i], .len = sizeof(int), .addr = &ra, .addrlen = sizeof ra};
    }
    CHECK_EQ_INT(ll_udp_sendmany(st, d, NDGRAM, 0), 0);
    for (int i = 0; i < NDGRAM; i++) {
        vals[NDGRAM + i] = NDGRAM + i;
        d[i] = (ll_datagram){.data = &vals[NDGRAM + i], .len = sizeof(int)};
    }
    CHECK_EQ_INT(ll_udp_sendmany(ct, d, NDGRAM, 0), 0);
    RUN_UNTIL(loop, s.ndgram == 2 * NDGRAM, 5.0);
    unsigned short sp = ntohs(local_addr(st).sin_port), cp = ntohs(local_addr(ct).sin_port);
    int na = 0, nc = NDGRAM;
    for (int i = 0; i < s.ndgram; i++) {
        if (s.seq[i] < NDGRAM) {
            CHECK_EQ_INT(s.seq[i], na++);
            CHECK_EQ_INT(s.port[i], sp);
        } else {
            CHECK_EQ_INT(s.seq[i], nc++);
            CHECK_EQ_INT(s.port[i], cp);
        }
    }
    CHECK_EQ_INT(na, NDGRAM);
    CHECK_EQ_INT(nc, 2 * NDGRAM);

    /* The third of five is too large: one EMSGSIZE, four arrive. */
    s.ndgram = 0;
    static char huge[70000];
    int five[5] = {1000, 1001, 1002, 1003, 1004};
    for (int i = 0; i < 5; i++)
        d[i] = (ll_datagram){.data = &five[i], .len = sizeof(int), .addr = &ra, .addrlen = sizeof ra};
    d[2].data = huge;
    d[2].len = sizeof huge;
    CHECK_EQ_INT(ll_udp_sendmany(st, d, 5, 0), 0);
    RUN_UNTIL(loop, s.ndgram == 4 && s.nerr >= 1, 5.0);
    CHECK_EQ_INT(s.nerr, 1);
    CHECK_EQ_INT(s.errs[0], -EMSGSIZE);
    CHECK_EQ_INT(s.seq[0], 1000);
    CHECK_EQ_INT(s.seq[1], 1001);
    CHECK_EQ_INT(s.seq[2], 1003);
    CHECK_EQ_INT(s.seq[3], 1004);
    ll_transport_close(rt);
    ll_transport_close(st);
    ll_transport_close(ct);
    ll_release(loop);
}

/* A connected socket whose peer is gone: ECONNREFUSED as one
 * LL_ERROR_RECEIVED, the transport stays open and still sends. */
static void test_refused_ends_nothing(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    int gone = plain_socket();
    int port = fd_port(gone);
    close(gone);
    ll_transport ct = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, "127.0.0.1", port, 0, conn_proto, &c, &ct), 0);
    ll_datagram d[2] = {{.data = "1", .len = 1}, {.data = "2", .len = 1}};
    CHECK_EQ_INT(ll_udp_sendmany(ct, d, 2, 0), 0);
    RUN_UNTIL(loop, c.nerr > 0, 5.0);
    CHECK_EQ_INT(c.err_code, -ECONNREFUSED);
    CHECK_EQ_INT(c.nlost, 0);
    CHECK_EQ_INT(ll_transport_is_closing(ct), 0);
    CHECK_EQ_INT(ll_udp_sendmany(ct, d, 1, 0), 0);
    ll_transport_close(ct);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    ll_release(loop);
}

static void test_bad_input(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    ll_transport ut = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &ut), 0);
    struct sockaddr_in ra = local_addr(ut);
    ll_datagram d[2] = {{.data = "x", .len = 1, .addr = &ra, .addrlen = sizeof ra},
                        {.data = "y", .len = 1, .addr = &ra, .addrlen = 0}};
    CHECK_EQ_INT(ll_udp_sendmany(ut, NULL, 1, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_sendmany(ut, NULL, 0, 0), 0);
    CHECK_EQ_INT(ll_udp_sendmany(ut, d, 1, 7), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_sendmany(ut, d, 2, 0), LL_EINVAL); /* addrlen 0 with an address: nothing sent */
    d[1].addrlen = 100000;
    CHECK_EQ_INT(ll_udp_sendmany(ut, d, 2, 0), LL_EINVAL);
    d[1] = (ll_datagram){.data = NULL, .len = 5, .addr = &ra, .addrlen = sizeof ra};
    CHECK_EQ_INT(ll_udp_sendmany(ut, d, 2, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_sendmany(0, d, 1, 0), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_udp_sendmany(loop, d, 1, 0), LL_EBADHANDLE); /* an id of another kind */
    for (int i = 0; i < 5; i++)
        tick(loop);
    CHECK_EQ_INT(c.ndgram, 0); /* every refused call sent nothing */
    STILL_RUNS(loop);

    /* A stream transport refuses it. */
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct conn sc;
    conn_init(&sc);
    ll_transport st = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, &sc, &st), 0);
    CHECK_EQ_INT(ll_udp_sendmany(st, d, 1, 0), LL_EINVAL);
    ll_transport_abort(st);
    close(sv[1]);

    ll_transport_close(ut);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_EQ_INT(ll_udp_sendmany(ut, d, 1, 0), LL_EBADHANDLE);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_batch_receive);
    RUN_TEST(test_large_whole);
    RUN_TEST(test_sendmany);
    RUN_TEST(test_refused_ends_nothing);
    RUN_TEST(test_bad_input);
    return CHECK_REPORT();
}
