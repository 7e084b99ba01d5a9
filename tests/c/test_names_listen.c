/* SPDX-License-Identifier: MIT */
/* Listening and opening by name never looks the name up on a running loop's
 * thread: ll_tcp_listen / ll_udp_open from a callback refuse a name with
 * LL_ENEEDASYNC and take addresses and "localhost" as before; while the loop
 * is not running they still take a name; ll_tcp_listen_ex and ll_udp_open_ex
 * resolve on the resolver pool and give the server / transport id as their
 * future's value; their bad input. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

static char host_name[256];

struct inloop {
    int listen_name, udp_name, listen_local;
    ll_future lf, uf;
    struct conn uc;
};

static void in_loop_cb(ll_loop loop, void *arg) {
    struct inloop *s = arg;
    ll_server srv = 0;
    ll_transport t = 0;
    s->listen_name = ll_tcp_listen(loop, host_name, 0, 0, 0, conn_proto, NULL, &srv);
    s->udp_name = ll_udp_open(loop, host_name, 0, NULL, 0, 0, conn_proto, NULL, &t);
    s->listen_local = ll_tcp_listen(loop, "localhost", 0, 0, 0, conn_proto, NULL, &srv);
    if (s->listen_local == 0)
        ll_release(srv);
    ll_listen_options lo = {.size = sizeof lo, .host = host_name};
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &s->lf), 0);
    ll_udp_options uo = {.size = sizeof uo, .local_host = host_name};
    CHECK_EQ_INT(ll_udp_open_ex(loop, &uo, conn_proto, &s->uc, &s->uf), 0);
    ll_loop_stop(loop);
}

static void test_by_name_while_running(void) {
    ll_loop loop = new_loop();
    struct inloop s = {0};
    conn_init(&s.uc);
    ll_handle h = 0;
    CHECK_EQ_INT(ll_call_soon(loop, in_loop_cb, &s, &h), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    ll_release(h);
    CHECK_EQ_INT(s.listen_name, LL_ENEEDASYNC);
    CHECK_EQ_INT(s.udp_name, LL_ENEEDASYNC);
    CHECK_EQ_INT(s.listen_local, 0);
    RUN_UNTIL(loop, ll_future_done(s.lf) == 1 && ll_future_done(s.uf) == 1, 10.0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(s.lf, &v), 0);
    ll_server srv = (ll_server)v;
    int port = 0;
    CHECK_EQ_INT(ll_server_port(srv, &port), 0);
    CHECK(port > 0);
    CHECK_EQ_INT(ll_future_result(s.uf, &v), 0);
    ll_transport t = (ll_transport)v;
    RUN_UNTIL(loop, s.uc.nmade == 1, 5.0);
    CHECK_EQ_INT(s.uc.t, t);
    struct sockaddr_in sin;
    uint32_t len = sizeof sin;
    CHECK_EQ_INT(ll_transport_sockname(t, &sin, &len), 0);
    CHECK(ntohs(sin.sin_port) > 0);
    ll_transport_close(t);
    RUN_UNTIL(loop, s.uc.nlost == 1, 5.0);
    ll_release(srv);
    ll_release(s.lf);
    ll_release(s.uf);
    ll_release(loop);
}

/* Before the loop runs the synchronous calls still take a name. */
static void test_by_name_not_running(void) {
    ll_loop loop = new_loop();
    ll_server srv = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, host_name, 0, 0, 0, conn_proto, NULL, &srv), 0);
    struct conn c;
    conn_init(&c);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_udp_open(loop, host_name, 0, NULL, 0, 0, conn_proto, &c, &t), 0);
    ll_transport_close(t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    ll_release(srv);
    ll_release(loop);
}

static void test_ex_errors(void) {
    ll_loop loop = new_loop();
    ll_future f = 0;
    ll_listen_options lo = {.size = sizeof lo, .host = "no-such-host.invalid"};
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 30.0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(f, &v), LL_ENONAME);
    ll_release(f);
    ll_udp_options uo = {.size = sizeof uo, .remote_host = "no-such-host.invalid", .remote_port = 9};
    CHECK_EQ_INT(ll_udp_open_ex(loop, &uo, conn_proto, NULL, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 30.0);
    CHECK_EQ_INT(ll_future_result(f, &v), LL_ENONAME);
    ll_release(f);

    f = 0;
    lo = (ll_listen_options){.size = sizeof lo, .host = "127.0.0.1"};
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, NULL, conn_proto, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, NULL), LL_EINVAL);
    lo.size = 4;
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), LL_EINVAL);
    lo.size = sizeof lo;
    lo.port = 70000;
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), LL_EINVAL);
    lo.port = 0;
    lo.backlog = -1;
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), LL_EINVAL);
    lo.backlog = 0;
    lo.flags = 64;
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), LL_EINVAL);
    lo.flags = 0;
    lo.tls = 12345;
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), LL_EBADHANDLE);
    lo.tls = 0;
    CHECK_EQ_INT(ll_tcp_listen_ex(0, &lo, conn_proto, NULL, &f), LL_EBADHANDLE);
    uo = (ll_udp_options){.size = sizeof uo};
    CHECK_EQ_INT(ll_udp_open_ex(loop, &uo, conn_proto, NULL, &f), LL_EINVAL); /* no side */
    CHECK_EQ_INT(ll_udp_open_ex(loop, NULL, conn_proto, NULL, &f), LL_EINVAL);
    uo.local_host = "127.0.0.1";
    uo.local_port = -1;
    CHECK_EQ_INT(ll_udp_open_ex(loop, &uo, conn_proto, NULL, &f), LL_EINVAL);
    uo.local_port = 0;
    uo.flags = 2;
    CHECK_EQ_INT(ll_udp_open_ex(loop, &uo, conn_proto, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(f, 0); /* nothing was made */
    STILL_RUNS(loop);

    /* An address is served at once, in a later callback: a listening server. */
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), 0);
    CHECK_EQ_INT(ll_future_done(f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    int port = 0;
    CHECK_EQ_INT(ll_server_port((ll_server)v, &port), 0);
    CHECK(port > 0);
    ll_release((ll_server)v);
    ll_release(f);
    ll_release(loop);
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, NULL, &f), LL_EBADHANDLE);
}

/* A future cancelled before the lookup ends leaves nothing behind: no
 * event reaches fn, no fd stays open. */
static void test_ex_cancelled(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct conn c;
    conn_init(&c);
    ll_future lf = 0, uf = 0;
    ll_listen_options lo = {.size = sizeof lo, .host = host_name};
    CHECK_EQ_INT(ll_tcp_listen_ex(loop, &lo, conn_proto, &c, &lf), 0);
    ll_udp_options uo = {.size = sizeof uo, .local_host = "127.0.0.1"};
    CHECK_EQ_INT(ll_udp_open_ex(loop, &uo, conn_proto, &c, &uf), 0);
    CHECK_EQ_INT(ll_future_cancel(lf, NULL), 1);
    CHECK_EQ_INT(ll_future_cancel(uf, NULL), 1);
    for (int i = 0; i < 20; i++)
        tick(loop);
    CHECK_EQ_INT(c.nev, 0);
    CHECK_EQ_INT(count_fds(), fds0);
    ll_release(lf);
    ll_release(uf);
    ll_release(loop);
}

int main(void) {
    if (gethostname(host_name, sizeof host_name - 1) != 0 || host_name[0] == 0) {
        fprintf(stderr, "gethostname failed\n");
        return 1;
    }
    RUN_TEST(test_by_name_while_running);
    RUN_TEST(test_by_name_not_running);
    RUN_TEST(test_ex_errors);
    RUN_TEST(test_ex_cancelled);
    return CHECK_REPORT();
}
