/* SPDX-License-Identifier: MIT */
/* TCP transports through the header: listen, connect, echo, the order of
 * events, addresses, half-close in both directions, pause/resume reading,
 * close (twice) and what calls return after it, server close. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "net_util.h"

static void test_echo_lifecycle(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server srv;
    server_init(&srv, 4);
    srv.tmpl.echo = 1;
    server_listen(&srv, loop, 0);
    CHECK(srv.port > 0 && srv.port < 65536);
    CHECK_EQ_INT(ll_server_num_sockets(srv.id), 1);

    struct sockaddr_in sin;
    uint32_t len = sizeof sin;
    CHECK_EQ_INT(ll_server_sockname(srv.id, 0, &sin, &len), 0);
    CHECK_EQ_INT(len, sizeof sin);
    CHECK_EQ_INT(sin.sin_family, AF_INET);
    CHECK_EQ_INT(ntohs(sin.sin_port), srv.port);
    CHECK_EQ_INT(ntohl(sin.sin_addr.s_addr), INADDR_LOOPBACK);

    struct conn cl;
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    CHECK(cl.t != 0);
    CHECK(ll_transport_fd(cl.t) >= 0);
    CHECK_EQ_INT(ll_transport_is_reading(cl.t), 1);
    CHECK_EQ_INT(ll_transport_is_closing(cl.t), 0);
    CHECK_EQ_INT(ll_transport_can_write_eof(cl.t), 1);

    /* The client's peer is the server's socket; its own address is the
     * server connection's peer. */
    struct sockaddr_in peer, self;
    len = sizeof peer;
    CHECK_EQ_INT(ll_transport_peername(cl.t, &peer, &len), 0);
    CHECK_EQ_INT(len, sizeof peer);
    CHECK_EQ_INT(ntohs(peer.sin_port), srv.port);
    len = sizeof self;
    CHECK_EQ_INT(ll_transport_sockname(cl.t, &self, &len), 0);
    CHECK_EQ_INT(self.sin_family, AF_INET);
    /* Too little room: truncated copy, full length reported (getsockname). */
    unsigned char small[2] = {0xee, 0xee};
    len = 2;
    CHECK_EQ_INT(ll_transport_sockname(cl.t, small, &len), 0);
    CHECK_EQ_INT(len, sizeof self);
    CHECK_EQ_INT(small[0], ((unsigned char *)&self)[0]);

    CHECK_EQ_INT(ll_transport_write(cl.t, "hello", 5), 0);
    CHECK_EQ_INT(ll_transport_write(cl.t, NULL, 0), 0); /* an empty write is fine */
    RUN_UNTIL(loop, cl.nbytes == 5, 5.0);
    CHECK(memcmp(cl.buf, "hello", 5) == 0);
    CHECK_EQ_INT(srv.n, 1);
    struct conn *sc = &srv.conns[0];
    CHECK_EQ_INT(sc->nbytes, 5);
    struct sockaddr_in sc_peer;
    len = sizeof sc_peer;
    CHECK_EQ_INT(ll_transport_peername(sc->t, &sc_peer, &len), 0);
    CHECK_EQ_INT(sc_peer.sin_port, self.sin_port);

    /* Close twice: one LL_CONNECTION_LOST, code 0; the server sees EOF,
     * answers 0 and so closes too. */
    CHECK_EQ_INT(ll_transport_close(cl.t), 0);
    CHECK_EQ_INT(ll_transport_is_closing(cl.t), 1);
    CHECK_EQ_INT(ll_transport_close(cl.t), 0);
    CHECK_EQ_INT(ll_transport_is_reading(cl.t), 0);
    RUN_UNTIL(loop, cl.nlost == 1 && sc->nlost == 1, 5.0);
    spin(loop, 3);
    CHECK_LIFECYCLE(&cl, 0);
    CHECK_LIFECYCLE(sc, 0);
    CHECK_EQ_INT(cl.nev, 3);
    CHECK_EQ_INT(cl.kinds[1], LL_DATA_RECEIVED);
    CHECK_EQ_INT(cl.kinds[2], LL_CONNECTION_LOST);
    CHECK_EQ_INT(sc->neof, 1);
    CHECK_EQ_INT(sc->kinds[sc->nev - 2], LL_EOF_RECEIVED);
    CHECK_EQ_INT(ll_transport_close(cl.t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_transport_fd(cl.t), LL_EBADHANDLE);

    server_free(&srv, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* Client half-closes; the server answers EOF with 1, keeps writing, then
 * half-closes itself; the client answers 0 and closes. */
static void test_half_close_client_first(void) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 1);
    srv.tmpl.eof_answer = 1;
    server_listen(&srv, loop, 0);
    struct conn cl;
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    CHECK_EQ_INT(ll_transport_write(cl.t, "question", 8), 0);
    CHECK_EQ_INT(ll_transport_write_eof(cl.t), 0);
    CHECK_EQ_INT(ll_transport_write_eof(cl.t), 0); /* again: nothing */
    CHECK_EQ_INT(ll_transport_write(cl.t, "more", 4), LL_ESTATE);
    RUN_UNTIL(loop, srv.n == 1 && srv.conns[0].neof == 1, 5.0);
    struct conn *sc = &srv.conns[0];
    CHECK_EQ_INT(sc->nbytes, 8);
    spin(loop, 3);
    CHECK_EQ_INT(sc->nlost, 0);               /* kept open for writing */
    CHECK_EQ_INT(ll_transport_is_closing(sc->t), 0);
    CHECK_EQ_INT(ll_transport_is_reading(sc->t), 0); /* past EOF */
    CHECK_EQ_INT(ll_transport_write(sc->t, "answer", 6), 0);
    RUN_UNTIL(loop, cl.nbytes == 6, 5.0);
    CHECK(memcmp(cl.buf, "answer", 6) == 0);
    CHECK_EQ_INT(cl.nlost, 0);
    CHECK_EQ_INT(ll_transport_write_eof(sc->t), 0);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_EQ_INT(cl.neof, 1);
    CHECK_LIFECYCLE(&cl, 0);
    CHECK_EQ_INT(cl.nev, 4); /* MADE DATA EOF LOST */
    /* The server's side: both directions are shut; it closes when asked. */
    CHECK_EQ_INT(sc->nlost, 0);
    CHECK_EQ_INT(ll_transport_close(sc->t), 0);
    RUN_UNTIL(loop, sc->nlost == 1, 5.0);
    CHECK_LIFECYCLE(sc, 0);
    server_free(&srv, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* The server half-closes first; the client keeps its side open (1) and
 * still sends; a server answering EOF with 0 closes. */
static void test_half_close_server_first(void) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 1);
    server_listen(&srv, loop, 0);
    struct conn cl;
    conn_init(&cl);
    cl.eof_answer = 1;
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    RUN_UNTIL(loop, srv.n == 1, 5.0);
    struct conn *sc = &srv.conns[0];
    CHECK_EQ_INT(ll_transport_write(sc->t, "bye", 3), 0);
    CHECK_EQ_INT(ll_transport_write_eof(sc->t), 0);
    RUN_UNTIL(loop, cl.neof == 1, 5.0);
    CHECK_EQ_INT(cl.nbytes, 3);
    spin(loop, 3);
    CHECK_EQ_INT(cl.nlost, 0);
    CHECK_EQ_INT(ll_transport_write(cl.t, "late", 4), 0);
    RUN_UNTIL(loop, sc->nbytes == 4, 5.0);
    CHECK(memcmp(sc->buf, "late", 4) == 0);
    CHECK_EQ_INT(ll_transport_close(cl.t), 0);
    RUN_UNTIL(loop, cl.nlost == 1 && sc->nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    CHECK_LIFECYCLE(sc, 0);
    CHECK_EQ_INT(sc->neof, 1);
    server_free(&srv, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_pause_reading(void) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 1);
    server_listen(&srv, loop, 0);
    struct conn cl;
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    RUN_UNTIL(loop, srv.n == 1, 5.0);
    struct conn *sc = &srv.conns[0];
    CHECK_EQ_INT(ll_transport_pause_reading(sc->t), 0);
    CHECK_EQ_INT(ll_transport_pause_reading(sc->t), 0); /* idempotent */
    CHECK_EQ_INT(ll_transport_is_reading(sc->t), 0);
    CHECK_EQ_INT(ll_transport_write(cl.t, "abc", 3), 0);
    for (int i = 0; i < 5; i++)
        tick(loop);
    CHECK_EQ_INT(sc->ndata, 0);
    CHECK_EQ_INT(ll_transport_resume_reading(sc->t), 0);
    CHECK_EQ_INT(ll_transport_is_reading(sc->t), 1);
    RUN_UNTIL(loop, sc->nbytes == 3, 5.0);
    /* Paused, the peer's EOF waits too. */
    CHECK_EQ_INT(ll_transport_pause_reading(sc->t), 0);
    CHECK_EQ_INT(ll_transport_close(cl.t), 0);
    for (int i = 0; i < 5; i++)
        tick(loop);
    CHECK_EQ_INT(sc->neof, 0);
    CHECK_EQ_INT(ll_transport_resume_reading(sc->t), 0);
    RUN_UNTIL(loop, sc->nlost == 1, 5.0);
    CHECK_LIFECYCLE(sc, 0);
    CHECK_LIFECYCLE(&cl, 0);
    server_free(&srv, loop);
    ll_release(loop);
}

/* close flushes what is buffered first; calls after close and abort. */
static void test_close_flushes(void) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 2);
    server_listen(&srv, loop, 0);
    struct conn cl;
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    size_t big = 8u << 20;
    unsigned char *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (unsigned char)(i * 31 + (i >> 12));
    CHECK_EQ_INT(ll_transport_write(cl.t, data, big), 0);
    size_t pending = 0;
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(cl.t, &pending), 0);
    CHECK(pending > 0); /* 8 MiB does not fit in the socket buffers */
    CHECK_EQ_INT(ll_transport_close(cl.t), 0);
    CHECK_EQ_INT(ll_transport_write(cl.t, "x", 1), LL_ECLOSED);
    CHECK_EQ_INT(ll_transport_write_eof(cl.t), LL_ECLOSED);
    CHECK_EQ_INT(ll_transport_abort(cl.t), 0);  /* abort while closing: now */
    CHECK_EQ_INT(ll_transport_pause_reading(cl.t), LL_ECLOSED);
    CHECK_EQ_INT(ll_transport_fd(cl.t), LL_ECLOSED);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    RUN_UNTIL(loop, srv.n == 1 && srv.conns[0].nlost == 1, 5.0);
    CHECK(srv.conns[0].nbytes < big); /* aborted: the buffer was dropped */

    /* Now a close that is allowed to finish: every byte arrives, then EOF. */
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    CHECK_EQ_INT(ll_transport_write(cl.t, data, big), 0);
    CHECK_EQ_INT(ll_transport_close(cl.t), 0);
    CHECK_EQ_INT(ll_transport_is_closing(cl.t), 1);
    RUN_UNTIL(loop, srv.n == 2 && srv.conns[1].nlost == 1, 10.0);
    struct conn *sc = &srv.conns[1];
    CHECK_EQ_INT(sc->nbytes, big);
    CHECK_EQ_INT(sc->hash, fnv(FNV_INIT, data, big));
    CHECK_EQ_INT(sc->neof, 1);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    free(data);
    server_free(&srv, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* host NULL listens on IPv4 and IPv6 on one port; names resolve; a closed
 * server refuses new connections but its open ones go on. */
static void test_listen_any_and_server_close(void) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 8);
    srv.tmpl.echo = 1;
    CHECK_EQ_INT(ll_tcp_listen(loop, NULL, 0, 0, 0, server_proto, &srv, &srv.id), 0);
    CHECK_EQ_INT(ll_server_port(srv.id, &srv.port), 0);
    int ns = ll_server_num_sockets(srv.id);
    CHECK(ns == 1 || ns == 2);
    for (int i = 0; i < ns; i++) {
        struct sockaddr_storage ss;
        uint32_t len = sizeof ss;
        CHECK_EQ_INT(ll_server_sockname(srv.id, (size_t)i, &ss, &len), 0);
        int port = ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
                                           : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        CHECK_EQ_INT(port, srv.port);
    }
    uint32_t len = 64;
    char tmp[64];
    CHECK_EQ_INT(ll_server_sockname(srv.id, (size_t)ns, tmp, &len), LL_EINVAL);

    struct conn a, b, c;
    conn_init(&a);
    conn_init(&b);
    conn_init(&c);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &a), 0);
    CHECK_EQ_INT(connect_tcp(loop, "localhost", srv.port, &b), 0); /* resolved off the loop thread */
    if (ns == 2) {
        CHECK_EQ_INT(connect_tcp(loop, "::1", srv.port, &c), 0);
        struct sockaddr_in6 p6;
        len = sizeof p6;
        CHECK_EQ_INT(ll_transport_peername(c.t, &p6, &len), 0);
        CHECK_EQ_INT(p6.sin6_family, AF_INET6);
        CHECK_EQ_INT(ll_transport_write(c.t, "six", 3), 0);
        RUN_UNTIL(loop, c.nbytes == 3, 5.0);
        ll_transport_close(c.t);
        RUN_UNTIL(loop, c.nlost == 1, 5.0);
        CHECK_LIFECYCLE(&c, 0);
    }

    CHECK_EQ_INT(ll_server_close(srv.id), 0);
    CHECK_EQ_INT(ll_server_close(srv.id), 0);
    int port = 0;
    CHECK_EQ_INT(ll_server_port(srv.id, &port), LL_ECLOSED);
    struct conn late;
    conn_init(&late);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &late), -ECONNREFUSED);
    CHECK_EQ_INT(ll_transport_write(a.t, "still", 5), 0); /* open connections stay */
    RUN_UNTIL(loop, a.nbytes == 5, 5.0);
    ll_transport_close(a.t);
    ll_transport_close(b.t);
    RUN_UNTIL(loop, a.nlost && b.nlost, 5.0);
    CHECK_LIFECYCLE(&a, 0);
    CHECK_LIFECYCLE(&b, 0);
    CHECK_EQ_INT(ll_release(srv.id), 0);
    CHECK_EQ_INT(ll_server_close(srv.id), LL_EBADHANDLE);
    srv.id = 0;
    server_free(&srv, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* SO_REUSEPORT: two servers on one port. */
static void test_reuse_port(void) {
    ll_loop loop = new_loop();
    struct server s1, s2;
    server_init(&s1, 1);
    server_init(&s2, 1);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, LL_REUSE_PORT, server_proto, &s1, &s1.id), 0);
    CHECK_EQ_INT(ll_server_port(s1.id, &s1.port), 0);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", s1.port, 0, LL_REUSE_PORT, server_proto, &s2, &s2.id), 0);
    ll_server third = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", s1.port, 0, 0, server_proto, &s2, &third), -EADDRINUSE);
    server_free(&s1, loop);
    server_free(&s2, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_echo_lifecycle);
    RUN_TEST(test_half_close_client_first);
    RUN_TEST(test_half_close_server_first);
    RUN_TEST(test_pause_reading);
    RUN_TEST(test_close_flushes);
    RUN_TEST(test_listen_any_and_server_close);
    RUN_TEST(test_reuse_port);
    return CHECK_REPORT();
}
