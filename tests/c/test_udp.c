/* SPDX-License-Identifier: MIT */
/* UDP transports: unconnected echo with ll_transport_sendto and the sender's
 * address in the event, datagram boundaries, connected sockets (write, the
 * peer's address, ICMP port unreachable as LL_ERROR_RECEIVED), IPv6, and
 * what datagram transports refuse. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

static int udp_free_port(void) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, (struct sockaddr *)&sin, sizeof sin);
    socklen_t len = sizeof sin;
    getsockname(fd, (struct sockaddr *)&sin, &len);
    close(fd);
    return ntohs(sin.sin_port);
}

static void test_unconnected_echo(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct conn srv, cl;
    conn_init(&srv);
    conn_init(&cl);
    srv.echo = 1;
    ll_transport st = 0, ct = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &srv, &st), 0);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &cl, &ct), 0);
    RUN_UNTIL(loop, srv.nmade == 1 && cl.nmade == 1, 5.0);
    CHECK_EQ_INT(srv.t, st);
    struct sockaddr_in saddr, caddr;
    uint32_t slen = sizeof saddr, clen = sizeof caddr;
    CHECK_EQ_INT(ll_transport_sockname(st, &saddr, &slen), 0);
    CHECK_EQ_INT(ll_transport_sockname(ct, &caddr, &clen), 0);
    CHECK(ntohs(saddr.sin_port) > 0);
    struct sockaddr_in6 dummy;
    uint32_t dlen = sizeof dummy;
    CHECK_EQ_INT(ll_transport_peername(ct, &dummy, &dlen), -ENOTCONN);
    CHECK_EQ_INT(ll_transport_can_write_eof(ct), 0);
    CHECK_EQ_INT(ll_transport_write_eof(ct), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_is_reading(ct), 1);

    /* Three datagrams arrive as three events, boundaries kept. */
    CHECK_EQ_INT(ll_transport_sendto(ct, "one", 3, &saddr, slen), 0);
    CHECK_EQ_INT(ll_transport_sendto(ct, "two!", 4, &saddr, slen), 0);
    CHECK_EQ_INT(ll_transport_sendto(ct, "", 0, &saddr, slen), 0); /* an empty datagram is one */
    RUN_UNTIL(loop, cl.ndgram == 3, 5.0);
    CHECK_EQ_INT(srv.ndgram, 3);
    CHECK_EQ_INT(cl.nbytes, 7);
    CHECK(memcmp(cl.buf, "onetwo!", 7) == 0);
    /* The sender's address: the server saw the client's, the client the server's. */
    CHECK_EQ_INT(srv.addrlen, clen);
    CHECK(memcmp(srv.addr, &caddr, clen) == 0);
    CHECK_EQ_INT(cl.addrlen, slen);
    CHECK(memcmp(cl.addr, &saddr, slen) == 0);
    CHECK_EQ_INT(cl.nerr, 0);

    /* A 60,000-byte datagram arrives whole. */
    static char big[60000];
    memset(big, 'u', sizeof big);
    CHECK_EQ_INT(ll_transport_sendto(ct, big, sizeof big, &saddr, slen), 0);
    RUN_UNTIL(loop, cl.ndgram == 4, 5.0);
    CHECK_EQ_INT(cl.nbytes, 7 + sizeof big);

    /* Without an address an unconnected socket cannot send: reported as
     * LL_ERROR_RECEIVED, the transport stays open. */
    CHECK_EQ_INT(ll_transport_write(ct, "nowhere", 7), 0);
    RUN_UNTIL(loop, cl.nerr == 1, 5.0);
    CHECK(cl.err_code < 0);
    CHECK_EQ_INT(ll_transport_is_closing(ct), 0);

    CHECK_EQ_INT(ll_transport_close(ct), 0);
    CHECK_EQ_INT(ll_transport_sendto(ct, "x", 1, &saddr, slen), LL_ECLOSED);
    CHECK_EQ_INT(ll_transport_close(st), 0);
    RUN_UNTIL(loop, cl.nlost == 1 && srv.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    CHECK_LIFECYCLE(&srv, 0);
    CHECK_EQ_INT(ll_transport_sendto(ct, "x", 1, &saddr, slen), LL_EBADHANDLE);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* A connected socket: write and sendto(NULL) go to the peer; replies come
 * with the peer's address. */
static void test_connected(void) {
    ll_loop loop = new_loop();
    struct conn srv, cl;
    conn_init(&srv);
    conn_init(&cl);
    srv.echo = 1;
    ll_transport st = 0, ct = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &srv, &st), 0);
    struct sockaddr_in saddr;
    uint32_t slen = sizeof saddr;
    CHECK_EQ_INT(ll_transport_sockname(st, &saddr, &slen), 0);
    CHECK_EQ_INT(ll_udp_open(loop, NULL, 0, "127.0.0.1", ntohs(saddr.sin_port), 0, conn_proto, &cl, &ct), 0);
    struct sockaddr_in peer;
    uint32_t plen = sizeof peer;
    CHECK_EQ_INT(ll_transport_peername(ct, &peer, &plen), 0);
    CHECK_EQ_INT(peer.sin_port, saddr.sin_port);
    CHECK_EQ_INT(ll_transport_write(ct, "abc", 3), 0);
    CHECK_EQ_INT(ll_transport_sendto(ct, "def", 3, NULL, 0), 0);
    RUN_UNTIL(loop, cl.ndgram == 2, 5.0);
    CHECK(memcmp(cl.buf, "abcdef", 6) == 0);
    CHECK(memcmp(cl.addr, &saddr, sizeof saddr) == 0);
    ll_transport_close(ct);
    ll_transport_close(st);
    RUN_UNTIL(loop, cl.nlost && srv.nlost, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* Connected to a port nobody listens on: the ICMP error comes back as
 * LL_ERROR_RECEIVED with -ECONNREFUSED, and the transport stays open. */
static void test_connected_refused(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct conn cl;
    conn_init(&cl);
    ll_transport ct = 0;
    CHECK_EQ_INT(ll_udp_open(loop, NULL, 0, "127.0.0.1", udp_free_port(), 0, conn_proto, &cl, &ct), 0);
    CHECK_EQ_INT(ll_transport_write(ct, "anyone?", 7), 0);
    RUN_UNTIL(loop, cl.nerr >= 1, 5.0);
    CHECK_EQ_INT(cl.err_code, -ECONNREFUSED);
    spin(loop, 3);
    CHECK_EQ_INT(cl.nlost, 0);
    CHECK_EQ_INT(ll_transport_is_closing(ct), 0);
    /* Still usable: another send, another error. */
    int before = cl.nerr;
    CHECK_EQ_INT(ll_transport_write(ct, "again", 5), 0);
    RUN_UNTIL(loop, cl.nerr > before, 5.0);
    CHECK_EQ_INT(ll_transport_abort(ct), 0);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_ipv6_and_reuse(void) {
    ll_loop loop = new_loop();
    struct conn a, b;
    conn_init(&a);
    conn_init(&b);
    ll_transport ta = 0, tb = 0;
    int rc = ll_udp_open(loop, "::1", 0, NULL, 0, 0, conn_proto, &a, &ta);
    if (rc == -EADDRNOTAVAIL || rc == -EAFNOSUPPORT) {
        fprintf(stderr, "SKIP IPv6 UDP: %s\n", ll_strerror(rc));
    } else {
        CHECK_EQ_INT(rc, 0);
        struct sockaddr_in6 sa;
        uint32_t len = sizeof sa;
        CHECK_EQ_INT(ll_transport_sockname(ta, &sa, &len), 0);
        CHECK_EQ_INT(sa.sin6_family, AF_INET6);
        CHECK_EQ_INT(ll_udp_open(loop, NULL, 0, "::1", ntohs(sa.sin6_port), 0, conn_proto, &b, &tb), 0);
        CHECK_EQ_INT(ll_transport_write(tb, "v6", 2), 0);
        RUN_UNTIL(loop, a.ndgram == 1, 5.0);
        CHECK_EQ_INT(a.addrlen, sizeof(struct sockaddr_in6));
        ll_transport_close(ta);
        ll_transport_close(tb);
        RUN_UNTIL(loop, a.nlost && b.nlost, 5.0);
    }
    /* LL_REUSE_PORT: two sockets on one port; without it, EADDRINUSE. */
    struct conn c, d;
    conn_init(&c);
    conn_init(&d);
    ll_transport tc = 0, td = 0, te = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, LL_REUSE_PORT, conn_proto, &c, &tc), 0);
    struct sockaddr_in sc;
    uint32_t len = sizeof sc;
    CHECK_EQ_INT(ll_transport_sockname(tc, &sc, &len), 0);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", ntohs(sc.sin_port), NULL, 0, LL_REUSE_PORT, conn_proto, &d, &td), 0);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", ntohs(sc.sin_port), NULL, 0, 0, conn_proto, &d, &te), -EADDRINUSE);
    ll_transport_close(tc);
    ll_transport_close(td);
    RUN_UNTIL(loop, c.nlost && d.nlost, 5.0);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_unconnected_echo);
    RUN_TEST(test_connected);
    RUN_TEST(test_connected_refused);
    RUN_TEST(test_ipv6_and_reuse);
    return CHECK_REPORT();
}
