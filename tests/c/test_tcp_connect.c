/* SPDX-License-Identifier: MIT */
/* ll_tcp_connect_ex: happy eyeballs (a first address that never answers
 * does not hold the connect up past the delay), a local address, TLS
 * through the same call refused for a bad config, and bad options. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

/* A listener on 127.0.0.1 whose accept queue is full: connects to it hang
 * (the kernel drops their SYNs). Returns its port; fds[0..2] to close. */
static int blackhole(int fds[3]) {
    fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK_EQ_INT(bind(fds[0], (struct sockaddr *)&sin, sizeof sin), 0);
    CHECK_EQ_INT(listen(fds[0], 0), 0);
    socklen_t len = sizeof sin;
    getsockname(fds[0], (struct sockaddr *)&sin, &len);
    for (int i = 1; i < 3; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        connect(fds[i], (struct sockaddr *)&sin, sizeof sin);
    }
    usleep(20000);
    return ntohs(sin.sin_port);
}

static int connect_ex(ll_loop loop, const ll_connect_options *o, struct conn *c, double *took) {
    ll_future f = 0;
    int rc = ll_tcp_connect_ex(loop, o, conn_proto, c, &f);
    if (rc != 0)
        return rc;
    double t0 = now_s();
    RUN_UNTIL(loop, ll_future_done(f) == 1, 10.0);
    if (took)
        *took = now_s() - t0;
    rc = ll_future_result(f, NULL);
    ll_release(f);
    return rc;
}

static void test_happy_eyeballs(void) {
    ll_loop loop = new_loop();
    int bh[3];
    int port = blackhole(bh);
    /* The fast address: ::1 on the same port. */
    struct conn srv;
    conn_init(&srv);
    ll_server s6 = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, "::1", port, 16, 0, conn_proto, &srv, &s6), 0);
    struct conn c;
    conn_init(&c);
    ll_connect_options o = {.size = sizeof o, .host = "localhost", .port = port, .happy_eyeballs_delay = 0.05};
    double took = 0;
    CHECK_EQ_INT(connect_ex(loop, &o, &c, &took), 0);
    CHECK(took >= 0.04 && took < 2.0);
    struct sockaddr_in6 peer;
    uint32_t plen = sizeof peer;
    CHECK_EQ_INT(ll_transport_peername(c.t, &peer, &plen), 0);
    CHECK_EQ_INT(peer.sin6_family, AF_INET6);
    ll_transport_close(c.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    ll_release(s6);
    for (int i = 0; i < 3; i++)
        close(bh[i]);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_local_address(void) {
    ll_loop loop = new_loop();
    struct server s;
    server_init(&s, 4);
    server_listen(&s, loop, 16);
    struct conn c;
    conn_init(&c);
    ll_connect_options o = {.size = sizeof o, .host = "127.0.0.1", .port = s.port, .local_host = "127.0.0.3"};
    CHECK_EQ_INT(connect_ex(loop, &o, &c, NULL), 0);
    struct sockaddr_in me;
    uint32_t mlen = sizeof me;
    CHECK_EQ_INT(ll_transport_sockname(c.t, &me, &mlen), 0);
    CHECK_EQ_INT(me.sin_addr.s_addr, htonl(0x7f000003));
    ll_transport_close(c.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    /* No local address of the remote's family. */
    struct conn d;
    conn_init(&d);
    o.local_host = "::1";
    CHECK_EQ_INT(connect_ex(loop, &o, &d, NULL), LL_EINVAL);
    server_free(&s, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_bad_options(void) {
    ll_loop loop = new_loop();
    struct conn c;
    conn_init(&c);
    ll_future f = 0;
    struct {
        ll_connect_options o;
        char tail[16];
    } big = {{.size = sizeof big, .host = "127.0.0.1", .port = 1}, {0}};
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, NULL, conn_proto, &c, &f), LL_EINVAL);
    ll_connect_options o = {.size = sizeof o - 8, .host = "127.0.0.1", .port = 1};
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, &f), LL_EINVAL); /* too small */
    big.tail[3] = 1;
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &big.o, conn_proto, &c, &f), LL_EINVAL); /* an unknown field set */
    big.tail[3] = 0;
    CHECK_EQ_INT(connect_ex(loop, &big.o, &c, NULL), -ECONNREFUSED); /* a zero tail is fine */
    o.size = sizeof o;
    o.host = NULL;
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, &f), LL_EINVAL);
    o.host = "127.0.0.1";
    o.happy_eyeballs_delay = -1;
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, &f), LL_EINVAL);
    o.happy_eyeballs_delay = NAN;
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, &f), LL_EINVAL);
    o.happy_eyeballs_delay = 0;
    o.port = 70000;
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, &f), LL_EINVAL);
    o.port = 1;
    o.tls = 12345; /* not a TLS config */
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, &f), LL_EBADHANDLE);
    o.tls = 0;
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_connect_ex(0, &o, conn_proto, &c, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(c.nev, 0);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_happy_eyeballs);
    RUN_TEST(test_local_address);
    RUN_TEST(test_bad_options);
    return CHECK_REPORT();
}
