/* SPDX-License-Identifier: MIT */
/*
 * Cancelling a connect's future before the connect completes (asyncio's
 * create_connection cancelled): the sockets under way are closed, no
 * transport is made, the protocol hears nothing, the future reports
 * cancelled, ll_loop_walk lists no transport, and the loop goes on. For
 * ll_tcp_connect (a connect that hangs, and one cancelled before it ran),
 * ll_tcp_connect_ex with happy eyeballs, ll_unix_connect and
 * ll_tls_connect (cancelled mid-handshake).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
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

static int count_transports(ll_loop loop, uint64_t id, int kind, void *arg) {
    (void)loop;
    (void)id;
    if (kind == LL_KIND_TRANSPORT)
        (*(int *)arg)++;
    return 0;
}

static int walk_transports(ll_loop loop) {
    int n = 0;
    CHECK_EQ_INT(ll_loop_walk(loop, count_transports, &n), 0);
    return n;
}

struct done_rec {
    int calls;
    int state; /* ll_future_state when the done callback ran */
};

static void record_done(ll_future f, void *arg) {
    struct done_rec *d = arg;
    d->calls++;
    d->state = ll_future_state(f);
}

/* What every cancelled connect must leave: a cancelled future whose done
 * callbacks ran once, no event, no transport, no fd, a running loop; and
 * still so after the loop ran on for a while (a late completion changes
 * nothing). */
static void check_cancelled(ll_loop loop, ll_future f, struct done_rec *d, struct conn *c, int fds) {
    RUN_UNTIL(loop, d->calls == 1, 5.0);
    CHECK_EQ_INT(d->state, LL_CANCELLED);
    CHECK_EQ_INT(ll_future_state(f), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_result(f, NULL), LL_ECANCELLED);
    double until = now_s() + 0.2;
    while (now_s() < until)
        tick(loop);
    CHECK_EQ_INT(d->calls, 1);
    CHECK_EQ_INT(c->nev, 0);
    CHECK_EQ_INT(c->nmade, 0);
    CHECK_EQ_INT(walk_transports(loop), 0);
    CHECK_EQ_INT(count_fds(), fds);
    STILL_RUNS(loop);
}

/* A connect that hangs (the peer's accept queue is full), cancelled while
 * its socket waits. */
static void test_cancel_while_connecting(void) {
    ll_loop loop = new_loop();
    int bh[3];
    int port = blackhole(bh);
    int fds = count_fds();
    struct conn c;
    conn_init(&c);
    struct done_rec d = {0, 0};
    ll_future f = 0;
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", port, conn_proto, &c, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, record_done, &d), 0);
    spin(loop, 3);
    CHECK_EQ_INT(count_fds(), fds + 1); /* the attempt's socket is open */
    CHECK_EQ_INT(ll_future_cancel(f, "stop"), 1);
    check_cancelled(loop, f, &d, &c, fds);
    ll_release(f);
    for (int i = 0; i < 3; i++)
        close(bh[i]);
    ll_release(loop);
}

/* Cancelled before the loop ran: the peer accepts at once, so without the
 * cancel the connect would complete in the next iterations. */
static void test_cancel_before_it_ran(void) {
    ll_loop loop = new_loop();
    struct server s;
    server_init(&s, 2);
    server_listen(&s, loop, 16);
    int fds = count_fds();
    for (int by_name = 0; by_name < 2; by_name++) {
        struct conn c;
        conn_init(&c);
        struct done_rec d = {0, 0};
        ll_future f = 0;
        /* A name goes through the resolver pool first: its outcome arrives
         * after the cancel and must be ignored. */
        CHECK_EQ_INT(ll_tcp_connect(loop, by_name ? "localhost" : "127.0.0.1", s.port, conn_proto, &c, &f), 0);
        CHECK_EQ_INT(ll_future_add_done_callback(f, record_done, &d), 0);
        CHECK_EQ_INT(ll_future_cancel(f, NULL), 1);
        check_cancelled(loop, f, &d, &c, fds);
        CHECK_EQ_INT(s.n, 0); /* no socket ever connected */
        ll_release(f);
    }
    server_free(&s, loop);
    ll_release(loop);
}

/* Happy eyeballs: the first address hangs and the delay would start the
 * next; the cancel drops both the attempt and the delay. */
static void test_cancel_happy_eyeballs(void) {
    ll_loop loop = new_loop();
    int bh[3];
    int port = blackhole(bh);
    int fds = count_fds();
    struct conn c;
    conn_init(&c);
    struct done_rec d = {0, 0};
    ll_future f = 0;
    ll_connect_options o = {.size = sizeof o, .host = "localhost", .port = port, .happy_eyeballs_delay = 0.05};
    CHECK_EQ_INT(ll_tcp_connect_ex(loop, &o, conn_proto, &c, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, record_done, &d), 0);
    RUN_UNTIL(loop, count_fds() > fds, 5.0); /* the first attempt is under way */
    CHECK_EQ_INT(ll_future_cancel(f, NULL), 1);
    check_cancelled(loop, f, &d, &c, fds);
    ll_release(f);
    for (int i = 0; i < 3; i++)
        close(bh[i]);
    ll_release(loop);
}

/* A Unix connect completes inside its first callback: cancelled before
 * that, it never connects. */
static void test_cancel_unix(void) {
    ll_loop loop = new_loop();
    char path[64];
    snprintf(path, sizeof path, "@libloop-cancel-%d", (int)getpid());
    struct server s;
    server_init(&s, 2);
    CHECK_EQ_INT(ll_unix_listen(loop, path, 16, server_proto, &s, &s.id), 0);
    int fds = count_fds();
    struct conn c;
    conn_init(&c);
    struct done_rec d = {0, 0};
    ll_future f = 0;
    CHECK_EQ_INT(ll_unix_connect(loop, path, conn_proto, &c, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, record_done, &d), 0);
    CHECK_EQ_INT(ll_future_cancel(f, NULL), 1);
    check_cancelled(loop, f, &d, &c, fds);
    CHECK_EQ_INT(s.n, 0);
    ll_release(f);
    server_free(&s, loop);
    ll_release(loop);
}

/* A TLS connect cancelled mid-handshake (the peer accepts and never
 * answers the ClientHello): the connected socket is closed too. */
static void test_cancel_tls_handshake(void) {
    ll_loop loop = new_loop();
    struct server s;
    server_init(&s, 2);
    server_listen(&s, loop, 16);
    ll_tls_config cfg = 0;
    CHECK_EQ_INT(ll_tls_config_new(&cfg), 0);
    int fds = count_fds();
    struct conn c;
    conn_init(&c);
    struct done_rec d = {0, 0};
    ll_future f = 0;
    CHECK_EQ_INT(ll_tls_connect(loop, "127.0.0.1", s.port, cfg, "localhost", conn_proto, &c, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, record_done, &d), 0);
    RUN_UNTIL(loop, s.n == 1 && s.conns[0].nbytes > 0, 5.0); /* the ClientHello arrived */
    CHECK_EQ_INT(ll_future_done(f), 0);
    CHECK_EQ_INT(ll_future_cancel(f, NULL), 1);
    RUN_UNTIL(loop, s.conns[0].nlost == 1, 5.0); /* the server sees the socket closed */
    check_cancelled(loop, f, &d, &c, fds); /* both ends closed */
    ll_release(f);
    server_free(&s, loop);
    ll_release(cfg);
    ll_release(loop);
}

/* Cancelling a connect that already completed does nothing: the transport
 * stays the host's. */
static void test_cancel_after_completion(void) {
    ll_loop loop = new_loop();
    struct server s;
    server_init(&s, 2);
    server_listen(&s, loop, 16);
    struct conn c;
    conn_init(&c);
    ll_future f = 0;
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", s.port, conn_proto, &c, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_cancel(f, NULL), 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    CHECK_EQ_INT(v, c.t);
    CHECK_EQ_INT(c.nmade, 1);
    CHECK_EQ_INT(walk_transports(loop), 2); /* ours and the server's */
    ll_transport_close(c.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    ll_release(f);
    server_free(&s, loop);
    ll_release(loop);
}

int main(void) {
    test_cancel_while_connecting();
    test_cancel_before_it_ran();
    test_cancel_happy_eyeballs();
    test_cancel_unix();
    test_cancel_tls_handshake();
    test_cancel_after_completion();
    return CHECK_REPORT();
}
