/* SPDX-License-Identifier: MIT */
/* The bad-input table for every transport call: id 0, a stale id, an id of
 * another kind, NULL pointers, ports -1 and 70000, fd -1 and a closed fd,
 * oversize lengths, unknown kinds and flags, a closed loop. Each returns its
 * documented code, and the loop still runs a callback afterwards. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

/* Every call taking a transport id, with id t, must return code. */
static void transport_calls(ll_loop loop, ll_transport t, int code) {
    char buf[64];
    uint32_t len = sizeof buf;
    size_t sz = 0;
    ll_future f = 0;
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK_EQ_INT(ll_transport_set_protocol(t, conn_proto, NULL), code);
    CHECK_EQ_INT(ll_transport_write(t, "x", 1), code);
    CHECK_EQ_INT(ll_transport_write_eof(t), code);
    CHECK_EQ_INT(ll_transport_can_write_eof(t), code);
    CHECK_EQ_INT(ll_transport_close(t), code);
    CHECK_EQ_INT(ll_transport_abort(t), code);
    CHECK_EQ_INT(ll_transport_pause_reading(t), code);
    CHECK_EQ_INT(ll_transport_resume_reading(t), code);
    CHECK_EQ_INT(ll_transport_is_reading(t), code);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(t, 0, 0), code);
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(t, &sz), code);
    CHECK_EQ_INT(ll_transport_is_closing(t), code);
    CHECK_EQ_INT(ll_transport_fd(t), code);
    CHECK_EQ_INT(ll_transport_sockname(t, buf, &len), code);
    CHECK_EQ_INT(ll_transport_peername(t, buf, &len), code);
    CHECK_EQ_INT(ll_transport_sendfile(t, fd, 0, 0, &f), code);
    CHECK_EQ_INT(ll_transport_sendto(t, "x", 1, NULL, 0), code);
    close(fd);
    STILL_RUNS(loop);
}

/* Every call taking a server id. */
static void server_calls(ll_loop loop, ll_server s, int code) {
    char buf[64];
    uint32_t len = sizeof buf;
    int port = 0;
    CHECK_EQ_INT(ll_server_close(s), code);
    CHECK_EQ_INT(ll_server_port(s, &port), code);
    CHECK_EQ_INT(ll_server_num_sockets(s), code);
    CHECK_EQ_INT(ll_server_sockname(s, 0, buf, &len), code);
    STILL_RUNS(loop);
}

static void test_bad_ids(void) {
    ll_loop loop = new_loop();
    /* id 0 */
    transport_calls(loop, 0, LL_EBADHANDLE);
    server_calls(loop, 0, LL_EBADHANDLE);
    /* forged */
    transport_calls(loop, 0xdeadbeef00000001ull, LL_EBADHANDLE);
    /* ids of other kinds: a future, the loop, a server as a transport and
     * a transport as a server */
    ll_future fut = 0;
    CHECK_EQ_INT(ll_future_new(loop, &fut), 0);
    transport_calls(loop, fut, LL_EBADHANDLE);
    server_calls(loop, fut, LL_EBADHANDLE);
    transport_calls(loop, loop, LL_EBADHANDLE);
    struct server srv;
    server_init(&srv, 1);
    server_listen(&srv, loop, 0);
    transport_calls(loop, srv.id, LL_EBADHANDLE);
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &c), 0);
    server_calls(loop, c.t, LL_EBADHANDLE);
    CHECK_EQ_INT(ll_future_result(c.t, NULL), LL_EBADHANDLE); /* not a future either */
    /* stale: after LL_CONNECTION_LOST, after ll_release of a server */
    ll_transport_close(c.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    transport_calls(loop, c.t, LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(c.t), LL_EBADHANDLE);
    server_free(&srv, loop);
    server_calls(loop, srv.id, LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(srv.id), LL_EBADHANDLE);
    /* the loop's own calls with a bad loop id */
    ll_future f = 0;
    ll_server s = 0;
    ll_transport t = 0;
    CHECK_EQ_INT(ll_tcp_connect(0, "127.0.0.1", 1, conn_proto, &c, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tcp_listen(fut, "127.0.0.1", 0, 0, 0, conn_proto, &c, &s), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_unix_connect(0, "/tmp/x", conn_proto, &c, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_unix_listen(0, "@x", 0, conn_proto, &c, &s), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_transport_open(0, 0, LL_STREAM, conn_proto, &c, &t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_udp_open(0, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_getaddrinfo(fut, "localhost", "1", 0, 0, 0, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_set_event_batch(0, NULL, NULL), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_set_event_batch(fut, NULL, NULL), LL_EBADHANDLE);
    ll_release(fut);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_bad_arguments(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct conn c;
    conn_init(&c);
    ll_future f = 0;
    ll_server s = 0;
    ll_transport t = 0;
    /* ports */
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", -1, conn_proto, &c, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", 70000, conn_proto, &c, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", -1, 0, 0, conn_proto, &c, &s), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 70000, 0, 0, conn_proto, &c, &s), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", -1, NULL, 0, 0, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 70000, NULL, 0, 0, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_open(loop, NULL, 0, "127.0.0.1", -1, 0, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_open(loop, NULL, 0, "127.0.0.1", 70000, 0, conn_proto, &c, &t), LL_EINVAL);
    STILL_RUNS(loop);
    /* NULL pointers */
    CHECK_EQ_INT(ll_tcp_connect(loop, NULL, 80, conn_proto, &c, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", 80, conn_proto, &c, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, conn_proto, &c, NULL), LL_EINVAL);
    /* A NULL protocol fn is not bad input: the connections' events go to
     * the loop's batch sink (ll_loop_set_event_batch). */
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, NULL, &c, &s), 0);
    CHECK_EQ_INT(ll_release(s), 0);
    CHECK_EQ_INT(ll_unix_connect(loop, NULL, conn_proto, &c, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_unix_connect(loop, "@x", conn_proto, &c, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_unix_listen(loop, NULL, 0, conn_proto, &c, &s), LL_EINVAL);
    CHECK_EQ_INT(ll_unix_listen(loop, "@ll-bad", 0, conn_proto, &c, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_unix_listen(loop, "@ll-bad", 0, NULL, &c, &s), 0);
    CHECK_EQ_INT(ll_release(s), 0);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_open(loop, NULL, 0, NULL, 0, 0, conn_proto, &c, &t), LL_EINVAL); /* neither side */
    CHECK_EQ_INT(ll_getaddrinfo(loop, NULL, NULL, 0, 0, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_getaddrinfo(loop, "localhost", NULL, 0, 0, 0, NULL), LL_EINVAL);
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, &c, NULL), LL_EINVAL);
    STILL_RUNS(loop);
    /* unknown flags, kinds, backlog */
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 2, conn_proto, &c, &s), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, -1, 0, conn_proto, &c, &s), LL_EINVAL);
    CHECK_EQ_INT(ll_unix_listen(loop, "@ll-bad", -1, conn_proto, &c, &s), LL_EINVAL);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 8, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], 0, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], 99, conn_proto, &c, &t), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], -1, conn_proto, &c, &t), LL_EINVAL);
    /* fds */
    CHECK_EQ_INT(ll_transport_open(loop, -1, LL_STREAM, conn_proto, &c, &t), -EBADF);
    int closed = dup(sv[1]);
    close(closed);
    CHECK_EQ_INT(ll_transport_open(loop, closed, LL_STREAM, conn_proto, &c, &t), -EBADF);
    CHECK_EQ_INT(c.nev, 0);
    STILL_RUNS(loop);

    /* calls on a live transport */
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, &c, &t), 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_transport_write(t, NULL, 5), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_write(t, "x", SIZE_MAX), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendto(t, NULL, 5, NULL, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendto(t, "x", SIZE_MAX, NULL, 0), LL_EINVAL);
    char addr[1024] = {0};
    CHECK_EQ_INT(ll_transport_sendto(t, "x", 1, addr, sizeof addr), LL_EINVAL); /* addrlen too large */
    CHECK_EQ_INT(ll_transport_sendto(t, "x", 1, addr, 16), LL_EINVAL);          /* an address on a stream */
    CHECK_EQ_INT(ll_transport_get_write_buffer_size(t, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sockname(t, addr, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_peername(t, addr, NULL), LL_EINVAL);
    uint32_t zero = 0;
    CHECK_EQ_INT(ll_transport_sockname(t, NULL, &zero), 0); /* asks the length only */
    CHECK(zero > 0);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(t, 1, 2), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_set_write_buffer_limits(t, SIZE_MAX, 0), LL_EINVAL);
    ll_future sf = 0;
    CHECK_EQ_INT(ll_transport_sendfile(t, -1, 0, 0, &sf), -EBADF);
    CHECK_EQ_INT(ll_transport_sendfile(t, closed, 0, 0, &sf), -EBADF);
    CHECK_EQ_INT(ll_transport_sendfile(t, sv[1], -1, 0, &sf), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendfile(t, sv[1], 0, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_is_closing(t), 0); /* none of that hurt it */
    CHECK_EQ_INT(ll_transport_write(t, "ok", 2), 0);
    char rb[4] = {0};
    CHECK_EQ_INT(read(sv[1], rb, sizeof rb), 2);
    STILL_RUNS(loop);

    /* a server: index out of range, NULL outs */
    struct server srv;
    server_init(&srv, 1);
    server_listen(&srv, loop, 0);
    uint32_t len = sizeof addr;
    CHECK_EQ_INT(ll_server_sockname(srv.id, 1, addr, &len), LL_EINVAL);
    CHECK_EQ_INT(ll_server_sockname(srv.id, SIZE_MAX, addr, &len), LL_EINVAL);
    CHECK_EQ_INT(ll_server_sockname(srv.id, 0, addr, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_server_port(srv.id, NULL), LL_EINVAL);
    ll_server_close(srv.id);
    CHECK_EQ_INT(ll_server_sockname(srv.id, 0, addr, &len), LL_ECLOSED);
    CHECK_EQ_INT(ll_server_num_sockets(srv.id), 1);
    server_free(&srv, loop);

    ll_transport_close(t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    close(sv[1]);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* A closed loop: new transports are LL_ECLOSED, open ones are gone. */
static void test_closed_loop(void) {
    int fds0 = count_fds();
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 1);
    server_listen(&srv, loop, 0);
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &c), 0);
    RUN_UNTIL(loop, srv.n == 1, 5.0);
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    ll_future f = 0;
    ll_server s = 0;
    ll_transport t = 0;
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", srv.port, conn_proto, &c, &f), LL_ECLOSED);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, conn_proto, &c, &s), LL_ECLOSED);
    CHECK_EQ_INT(ll_unix_connect(loop, "@x", conn_proto, &c, &f), LL_ECLOSED);
    CHECK_EQ_INT(ll_unix_listen(loop, "@ll-closed", 0, conn_proto, &c, &s), LL_ECLOSED);
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, conn_proto, &c, &t), LL_ECLOSED);
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &c, &t), LL_ECLOSED);
    CHECK_EQ_INT(ll_getaddrinfo(loop, "localhost", "80", 0, 0, 0, &f), LL_ECLOSED);
    /* The transports of a closed loop are closed: their calls fail. */
    int rc = ll_transport_write(c.t, "x", 1);
    CHECK(rc == LL_ECLOSED || rc == LL_EBADHANDLE);
    rc = ll_server_port(srv.id, &srv.port);
    CHECK(rc == LL_ECLOSED || rc == LL_EBADHANDLE);
    close(sv[0]);
    close(sv[1]);
    free(srv.conns);
    ll_release(loop);
    /* Releasing the loop ends their ids and closes every fd. */
    CHECK_EQ_INT(ll_transport_write(c.t, "x", 1), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_server_close(srv.id), LL_EBADHANDLE);
    CHECK_EQ_INT(count_fds(), fds0);
}

int main(void) {
    RUN_TEST(test_bad_ids);
    RUN_TEST(test_bad_arguments);
    RUN_TEST(test_closed_loop);
    return CHECK_REPORT();
}
