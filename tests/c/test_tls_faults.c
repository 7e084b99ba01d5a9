/* SPDX-License-Identifier: MIT */
/*
 * TLS failures end one connection with a code that says why, never the
 * loop, and leave no fd behind: a certificate from an untrusted CA, a
 * wrong host name, garbage from the peer, a peer that vanishes
 * mid-handshake, a silent peer past the handshake timeout. Also 200
 * concurrent handshakes, start_tls on a live connection, resumption, and
 * the bad-input table of every TLS call.
 */
#define _GNU_SOURCE
#include <math.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "net_util.h"
#include "tls_util.h"

static struct pki pki;

struct tls_server {
    struct server s;
    int nfail, fail_code;
};

static int tls_server_proto(ll_loop loop, const ll_event *ev, void *arg) {
    struct tls_server *ts = arg;
    if (ev->kind == LL_CONNECTION_LOST) { /* a handshake that failed: the only event */
        ts->nfail++;
        ts->fail_code = ev->code;
        return 0;
    }
    return server_proto(loop, ev, &ts->s);
}

static void tls_server_start(struct tls_server *ts, ll_loop loop, ll_tls_config cfg, int max) {
    memset(ts, 0, sizeof *ts);
    server_init(&ts->s, max);
    ts->s.tmpl.echo = 1;
    CHECK_EQ_INT(ll_tls_listen(loop, "127.0.0.1", 0, 0, 0, cfg, tls_server_proto, ts, &ts->s.id), 0);
    CHECK_EQ_INT(ll_server_port(ts->s.id, &ts->s.port), 0);
}

/* A blocking plain socket connected to 127.0.0.1:port. */
static int raw_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Client side: untrusted CA, wrong name; the server sees our alert. */
static void test_client_verify_failures(void) {
    ll_loop loop = new_loop();
    int fds = count_fds();
    ll_tls_config evil = tls_conf(NULL, pki.evil_cert, pki.evil_key);
    ll_tls_config good = tls_conf(NULL, pki.cert, pki.key);
    ll_tls_config cli = tls_conf(pki.ca, NULL, NULL);
    struct tls_server es, gs;
    tls_server_start(&es, loop, evil, 4);
    tls_server_start(&gs, loop, good, 4);
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", es.s.port, cli, "localhost", &c), LL_ETLSCERT);
    RUN_UNTIL(loop, es.nfail == 1, 20);
    CHECK_EQ_INT(es.fail_code, LL_ETLSALERT); /* we told it bad_certificate */
    conn_init(&c);
    CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", gs.s.port, cli, "not-localhost", &c), LL_ETLSHOST);
    RUN_UNTIL(loop, gs.nfail == 1, 20);
    /* Verification off: the handshake completes and says what was wrong. */
    CHECK_EQ_INT(ll_tls_config_set_verify(cli, 0), 0);
    conn_init(&c);
    CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", gs.s.port, cli, "not-localhost", &c), 0);
    CHECK_EQ_INT(ll_tls_verify_result(c.t), LL_ETLSHOST);
    RUN_UNTIL(loop, gs.s.n == 1, 20);
    CHECK_EQ_INT(ll_tls_verify_result(gs.s.conns[0].t), LL_ETLSNOCERT); /* no client certificate */
    ll_transport_close(c.t);
    RUN_UNTIL(loop, c.nlost == 1 && gs.s.conns[0].nlost == 1, 20);
    CHECK_LIFECYCLE(&c, 0);
    CHECK_EQ_INT(gs.s.conns[0].neof, 1);
    CHECK_EQ_INT(gs.s.conns[0].lost_code, 0);
    STILL_RUNS(loop);
    server_free(&es.s, loop);
    server_free(&gs.s, loop);
    CHECK_EQ_INT(count_fds(), fds);
    ll_release(evil);
    ll_release(good);
    ll_release(cli);
    ll_release(loop);
}

/* Our server requires a client certificate: without one the server ends
 * the connection with LL_ETLSNOCERT, with one from an untrusted CA with
 * LL_ETLSCERT, and with a good one the verdict is 0. In TLS 1.3 the
 * client's handshake is done before the server judges it, so the client
 * learns of the refusal as LL_CONNECTION_LOST with LL_ETLSALERT. */
static void test_server_client_auth(void) {
    ll_loop loop = new_loop();
    int fds = count_fds();
    ll_tls_config srv = tls_conf(pki.ca, pki.cert, pki.key);
    CHECK_EQ_INT(ll_tls_config_set_client_auth(srv, LL_TLS_CLIENT_REQUIRE), 0);
    struct tls_server ts;
    tls_server_start(&ts, loop, srv, 4);
    /* (A Go client does not send a certificate the server's CA list does
     * not name, so the untrusted one comes from openssl s_client, below.) */
    const char *certs[][2] = {{NULL, NULL}, {pki.ccert, pki.ckey}};
    int want[] = {LL_ETLSNOCERT, 0};
    for (int i = 0; i < 2; i++) {
        ll_tls_config cli = tls_conf(pki.ca, certs[i][0], certs[i][1]);
        struct conn c;
        conn_init(&c);
        int rc = connect_tls(loop, "127.0.0.1", ts.s.port, cli, "localhost", &c);
        if (want[i] == 0) {
            CHECK_EQ_INT(rc, 0);
            RUN_UNTIL(loop, ts.s.n == 1, 20);
            CHECK_EQ_INT(ll_tls_verify_result(ts.s.conns[0].t), 0);
            unsigned char der[2048];
            int n = ll_tls_peer_cert(ts.s.conns[0].t, 0, der, sizeof der);
            CHECK(n > 100 && n <= (int)sizeof der && der[0] == 0x30);
            ll_transport_close(c.t);
            RUN_UNTIL(loop, c.nlost == 1, 20);
            CHECK_LIFECYCLE(&c, 0);
        } else {
            RUN_UNTIL(loop, ts.nfail == i + 1, 20);
            CHECK_EQ_INT(ts.fail_code, want[i]);
            if (rc == 0) {
                RUN_UNTIL(loop, c.nlost == 1, 20);
                CHECK_EQ_INT(c.lost_code, LL_ETLSALERT);
                CHECK_EQ_INT(c.nmade, 1);
            } else {
                CHECK_EQ_INT(rc, LL_ETLSALERT);
            }
        }
        ll_release(cli);
    }
    char portarg[32];
    snprintf(portarg, sizeof portarg, "127.0.0.1:%d", ts.s.port);
    struct peer p;
    char *argv[] = {"openssl", "s_client", "-connect", portarg, "-CAfile", pki.ca, "-cert", pki.evil_cert,
                    "-key", pki.evil_key, NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, -1), 0);
    RUN_UNTIL(loop, ts.nfail == 2, 30);
    CHECK_EQ_INT(ts.fail_code, LL_ETLSCERT);
    peer_wait(&p, loop, 30);
    CHECK_EQ_INT(ts.s.n, 1);
    server_free(&ts.s, loop);
    CHECK_EQ_INT(count_fds(), fds);
    ll_release(srv);
    ll_release(loop);
}

/* A plain server that answers the ClientHello with text: LL_ETLSPROTO; one
 * that closes on it: LL_ETLSEOF. */
static int garbage_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    if (ev->kind == LL_DATA_RECEIVED) {
        if (c->user)
            ll_transport_write(ev->transport, "HTTP/1.0 400 Bad Request\r\n\r\n", 28);
        else
            ll_transport_close(ev->transport);
    }
    return 0;
}

static void test_client_peer_garbage_and_vanish(void) {
    ll_loop loop = new_loop();
    int fds = count_fds();
    ll_tls_config cli = tls_conf(pki.ca, NULL, NULL);
    for (int garbage = 1; garbage >= 0; garbage--) {
        struct server s;
        server_init(&s, 2);
        s.tmpl.hook = garbage_hook;
        s.tmpl.user = garbage ? &s : NULL;
        server_listen(&s, loop, 0);
        struct conn c;
        conn_init(&c);
        CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", s.port, cli, "localhost", &c), garbage ? LL_ETLSPROTO : LL_ETLSEOF);
        server_free(&s, loop);
    }
    STILL_RUNS(loop);
    CHECK_EQ_INT(count_fds(), fds);
    ll_release(cli);
    ll_release(loop);
}

/* Server side: garbage, a client that vanishes, a silent one past the
 * handshake timeout; each is one LL_CONNECTION_LOST with its code. */
static void test_server_handshake_failures(void) {
    ll_loop loop = new_loop();
    int fds = count_fds();
    ll_tls_config cfg = tls_conf(NULL, pki.cert, pki.key);
    CHECK_EQ_INT(ll_tls_config_set_timeouts(cfg, 0.5, 0), 0);
    struct tls_server ts;
    tls_server_start(&ts, loop, cfg, 4);
    int fd = raw_connect(ts.s.port);
    CHECK(write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18);
    RUN_UNTIL(loop, ts.nfail == 1, 20);
    CHECK_EQ_INT(ts.fail_code, LL_ETLSPROTO);
    close(fd);
    fd = raw_connect(ts.s.port);
    close(fd);
    RUN_UNTIL(loop, ts.nfail == 2, 20);
    CHECK_EQ_INT(ts.fail_code, LL_ETLSEOF);
    double t0 = now_s();
    fd = raw_connect(ts.s.port);
    RUN_UNTIL(loop, ts.nfail == 3, 20);
    CHECK_EQ_INT(ts.fail_code, LL_ETIMEDOUT);
    CHECK(now_s() - t0 >= 0.45);
    char b[16];
    CHECK_EQ_INT(read(fd, b, sizeof b), 0); /* the server closed it */
    close(fd);
    CHECK_EQ_INT(ts.s.n, 0);
    STILL_RUNS(loop);
    server_free(&ts.s, loop);
    CHECK_EQ_INT(count_fds(), fds);
    ll_release(cfg);
    ll_release(loop);
}

/* 200 clients handshake at once with one server in the same loop, each
 * echoes 1 KiB; then resumption: a second connection resumes. */
#define NCONC 200
static void test_200_concurrent(void) {
    ll_loop loop = new_loop();
    int fds = count_fds();
    ll_tls_config srv = tls_conf(NULL, pki.cert, pki.key);
    ll_tls_config cli = tls_conf(pki.ca, NULL, NULL);
    struct tls_server ts;
    tls_server_start(&ts, loop, srv, NCONC + 2);
    static struct conn cs[NCONC];
    ll_future fs[NCONC];
    for (int i = 0; i < NCONC; i++) {
        conn_init(&cs[i]);
        CHECK_EQ_INT(ll_tls_connect(loop, "127.0.0.1", ts.s.port, cli, "localhost", conn_proto, &cs[i], &fs[i]), 0);
    }
    int made = 0;
    RUN_UNTIL(loop, (made = 0, ({ for (int i = 0; i < NCONC; i++) made += cs[i].nmade; }), made == NCONC), 120);
    static char msg[1024];
    memset(msg, 'm', sizeof msg);
    for (int i = 0; i < NCONC; i++)
        ll_transport_write(cs[i].t, msg, sizeof msg);
    int got = 0;
    RUN_UNTIL(loop, (got = 0, ({ for (int i = 0; i < NCONC; i++) got += cs[i].nbytes == sizeof msg; }), got == NCONC), 120);
    int resumed = 0;
    for (int i = 0; i < NCONC; i++) {
        CHECK_EQ_INT(ll_future_result(fs[i], NULL), 0);
        ll_release(fs[i]);
        resumed += ll_tls_resumed(cs[i].t);
        ll_transport_close(cs[i].t);
    }
    int lost = 0;
    RUN_UNTIL(loop, (lost = 0, ({ for (int i = 0; i < NCONC; i++) lost += cs[i].nlost; }), lost == NCONC), 60);
    for (int i = 0; i < NCONC; i++)
        CHECK_LIFECYCLE(&cs[i], 0);
    CHECK_EQ_INT(ts.nfail, 0);
    CHECK(resumed < NCONC); /* the first ones had no ticket yet */
    /* One more: the client's session cache has tickets now. */
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", ts.s.port, cli, "localhost", &c), 0);
    CHECK_EQ_INT(ll_tls_resumed(c.t), 1);
    CHECK_EQ_INT(ll_tls_verify_result(c.t), 0);
    CHECK(ll_tls_peer_cert(c.t, 0, NULL, 0) > 100); /* still known when resumed */
    RUN_UNTIL(loop, ts.s.n == NCONC + 1, 20); /* the server's side is made too */
    ll_transport_abort(c.t);
    RUN_UNTIL(loop, c.nlost == 1, 20);
    server_free(&ts.s, loop);
    CHECK_EQ_INT(count_fds(), fds);
    ll_release(srv);
    ll_release(cli);
    ll_release(loop);
}

/* start_tls on a live connection, both sides in this loop: a plain line
 * protocol agrees to switch, then the bytes are TLS. */
struct starttls {
    ll_tls_config cfg;
    int server;
    ll_future fut;
    int done;
};

static void starttls_done(ll_future f, void *arg) {
    (void)f;
    ((struct starttls *)arg)->done = 1;
}

static int starttls_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    struct starttls *st = c->user;
    if (ev->kind != LL_DATA_RECEIVED || st->fut != 0)
        return 0;
    if (st->server && memmem(c->buf, c->nbuf, "STARTTLS\n", 9)) {
        ll_transport_write(ev->transport, "GO\n", 3); /* plain, before the handshake */
        CHECK_EQ_INT(ll_transport_start_tls(ev->transport, st->cfg, 1, NULL, &st->fut), 0);
        ll_future_add_done_callback(st->fut, starttls_done, st);
        c->echo = 1;
        c->nbuf = 0;
    } else if (!st->server && memmem(c->buf, c->nbuf, "GO\n", 3)) {
        CHECK_EQ_INT(ll_transport_start_tls(ev->transport, st->cfg, 0, "localhost", &st->fut), 0);
        ll_future_add_done_callback(st->fut, starttls_done, st);
        ll_transport_write(ev->transport, "secret", 6); /* sent once the handshake is done */
        c->nbuf = 0;
    }
    return 0;
}

static void test_start_tls(void) {
    ll_loop loop = new_loop();
    int fds = count_fds();
    struct starttls sst = {tls_conf(NULL, pki.cert, pki.key), 1, 0, 0};
    struct starttls cst = {tls_conf(pki.ca, NULL, NULL), 0, 0, 0};
    struct server s;
    server_init(&s, 2);
    s.tmpl.hook = starttls_hook;
    s.tmpl.user = &sst;
    server_listen(&s, loop, 0);
    struct conn c;
    conn_init(&c);
    c.hook = starttls_hook;
    c.user = &cst;
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", s.port, &c), 0);
    CHECK_EQ_INT(ll_tls_version(c.t), LL_EINVAL); /* plain so far */
    ll_transport_write(c.t, "STARTTLS\n", 9);
    RUN_UNTIL(loop, sst.done && cst.done, 30);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(cst.fut, &v), 0);
    CHECK_EQ_INT(v, c.t); /* the same transport */
    CHECK_EQ_INT(ll_future_result(sst.fut, NULL), 0);
    RUN_UNTIL(loop, c.nbuf >= 6, 20);
    CHECK(c.nbuf == 6 && memcmp(c.buf, "secret", 6) == 0);
    CHECK_EQ_INT(s.conns[0].nbuf, 6);
    CHECK_EQ_INT(ll_tls_version(c.t), LL_TLS_1_3);
    CHECK_EQ_INT(ll_tls_version(s.conns[0].t), LL_TLS_1_3);
    CHECK_EQ_INT(ll_transport_start_tls(c.t, cst.cfg, 0, NULL, &v), LL_ESTATE); /* twice */
    ll_transport_close(c.t);
    RUN_UNTIL(loop, c.nlost == 1 && s.conns[0].nlost == 1, 20);
    CHECK_LIFECYCLE(&c, 0);
    CHECK_EQ_INT(s.conns[0].neof, 1);
    ll_release(sst.fut);
    ll_release(cst.fut);
    server_free(&s, loop);
    CHECK_EQ_INT(count_fds(), fds);
    ll_release(sst.cfg);
    ll_release(cst.cfg);
    ll_release(loop);
}

/* Every TLS call with bad input returns a code and the loop goes on. */
static void test_bad_input(void) {
    ll_loop loop = new_loop();
    ll_tls_config c = 0;
    ll_future f = 0;
    ll_server sv = 0;
    CHECK_EQ_INT(ll_tls_config_new(NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_new(&c), 0);
    ll_tls_config stale = 0;
    CHECK_EQ_INT(ll_tls_config_new(&stale), 0);
    CHECK_EQ_INT(ll_release(stale), 0);
    CHECK_EQ_INT(ll_release(stale), LL_EBADHANDLE);
    ll_tls_config ids[] = {0, stale, loop};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        ll_tls_config b = ids[i];
        CHECK_EQ_INT(ll_tls_config_set_cert_pem(b, "x", 1, "y", 1), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_load_cert_file(b, pki.cert, pki.key), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_add_ca_pem(b, "x", 1), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_load_ca_file(b, pki.ca), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_load_ca_dir(b, pki.dir), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_use_system_ca(b), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_set_verify(b, 1), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_set_server_name(b, "x"), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_set_client_auth(b, 0), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_set_alpn(b, NULL, 0), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_set_versions(b, 0, 0), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_set_session_cache(b, 1), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_config_set_timeouts(b, 1, 1), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_connect(loop, "127.0.0.1", 1, b, NULL, NULL, NULL, &f), LL_EBADHANDLE);
        CHECK_EQ_INT(ll_tls_listen(loop, "127.0.0.1", 0, 0, 0, b, NULL, NULL, &sv), LL_EBADHANDLE);
    }
    /* Bad values on a good config. */
    CHECK_EQ_INT(ll_tls_config_set_cert_pem(c, NULL, 5, "y", 1), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_cert_pem(c, "x", 0, "y", 1), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_cert_pem(c, "not pem", 7, "not pem", 7), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_load_cert_file(c, NULL, pki.key), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_load_cert_file(c, pki.cert, ""), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_load_cert_file(c, "/nonexistent/x.pem", pki.key), -ENOENT);
    CHECK_EQ_INT(ll_tls_config_load_cert_file(c, pki.cert, pki.ckey), LL_EINVAL); /* key of another cert */
    CHECK_EQ_INT(ll_tls_config_add_ca_pem(c, NULL, 3), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_add_ca_pem(c, "garbage", 7), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_load_ca_file(c, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_load_ca_file(c, "/nonexistent"), -ENOENT);
    CHECK_EQ_INT(ll_tls_config_load_ca_file(c, pki.key), LL_EINVAL); /* no certificate in it */
    CHECK_EQ_INT(ll_tls_config_load_ca_dir(c, "/nonexistent"), -ENOENT);
    CHECK_EQ_INT(ll_tls_config_load_ca_dir(c, pki.ca), -ENOTDIR);
    CHECK_EQ_INT(ll_tls_config_load_ca_dir(c, "/proc/self/fdinfo"), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_load_ca_dir(c, pki.dir), 0); /* its PEM files hold the CAs */
    CHECK_EQ_INT(ll_tls_config_set_verify(c, 2), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_verify(c, -1), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_client_auth(c, 3), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_client_auth(c, -1), LL_EINVAL);
    const char *nul[] = {"h2", NULL};
    const char *empty[] = {""};
    char longp[300];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = 0;
    const char *toolong[] = {longp};
    CHECK_EQ_INT(ll_tls_config_set_alpn(c, NULL, 1), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_alpn(c, nul, 2), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_alpn(c, empty, 1), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_alpn(c, toolong, 1), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_alpn(c, nul, 1000), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_alpn(c, NULL, 0), 0);
    CHECK_EQ_INT(ll_tls_config_set_versions(c, 0x0302, 0), LL_EINVAL); /* TLS 1.1 */
    CHECK_EQ_INT(ll_tls_config_set_versions(c, LL_TLS_1_3, LL_TLS_1_2), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_versions(c, 0, 0x0305), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_session_cache(c, (size_t)1 << 40), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_timeouts(c, -1, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_timeouts(c, NAN, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_timeouts(c, 0, INFINITY), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_config_set_timeouts(c, 1e9, 0), LL_EINVAL);
    /* Connections. */
    CHECK_EQ_INT(ll_tls_connect(loop, NULL, 1, c, NULL, NULL, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_connect(loop, "127.0.0.1", 70000, c, NULL, NULL, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_connect(loop, "127.0.0.1", 1, c, NULL, NULL, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_connect(0, "127.0.0.1", 1, c, NULL, NULL, NULL, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_connect(c, "127.0.0.1", 1, c, NULL, NULL, NULL, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_listen(loop, "127.0.0.1", -1, 0, 0, c, NULL, NULL, &sv), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_listen(loop, "127.0.0.1", 0, 0, 0, c, NULL, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_listen(loop, "127.0.0.1", 0, -1, 0, c, NULL, NULL, &sv), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_listen(0, "127.0.0.1", 0, 0, 0, c, NULL, NULL, &sv), LL_EBADHANDLE);
    /* A refused connect: the future fails with -ECONNREFUSED, no events. */
    struct conn cc;
    conn_init(&cc);
    struct server s;
    server_init(&s, 2);
    server_listen(&s, loop, 0);
    int port = s.port;
    CHECK_EQ_INT(ll_release(s.id), 0);
    s.id = 0;
    CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", port, c, "localhost", &cc), -ECONNREFUSED);
    /* start_tls and the accessors. */
    ll_transport stale_t = 0;
    CHECK_EQ_INT(ll_transport_start_tls(0, c, 0, NULL, &f), LL_EBADHANDLE);
    server_init(&s, 2);
    server_listen(&s, loop, 0);
    conn_init(&cc);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", s.port, &cc), 0);
    CHECK_EQ_INT(ll_transport_start_tls(cc.t, 0, 0, NULL, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_transport_start_tls(cc.t, stale, 0, NULL, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_transport_start_tls(cc.t, c, 2, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_start_tls(cc.t, c, 0, NULL, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_start_tls(loop, c, 0, NULL, &f), LL_EBADHANDLE);
    char buf[16];
    CHECK_EQ_INT(ll_tls_version(cc.t), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_cipher(cc.t, buf, sizeof buf), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_alpn(cc.t, buf, sizeof buf), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_peer_cert(cc.t, 0, buf, sizeof buf), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_verify_result(cc.t), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_resumed(cc.t), LL_EINVAL);
    /* start_tls against a plain server that never answers: LL_ESTATE while
     * the handshake runs; abort ends it, the future fails LL_ECLOSED. */
    CHECK_EQ_INT(ll_transport_start_tls(cc.t, c, 0, "localhost", &f), 0);
    CHECK_EQ_INT(ll_tls_version(cc.t), LL_ESTATE);
    CHECK_EQ_INT(ll_tls_cipher(cc.t, NULL, 0), LL_ESTATE);
    CHECK_EQ_INT(ll_transport_abort(cc.t), 0);
    RUN_UNTIL(loop, cc.nlost == 1, 20);
    CHECK_EQ_INT(cc.lost_code, 0);
    CHECK_EQ_INT(ll_future_result(f, NULL), LL_ECLOSED);
    ll_release(f);
    stale_t = cc.t;
    CHECK_EQ_INT(ll_tls_version(stale_t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_cipher(stale_t, buf, sizeof buf), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_alpn(stale_t, buf, sizeof buf), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_peer_cert(stale_t, 0, buf, sizeof buf), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_verify_result(stale_t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_resumed(stale_t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_version(loop), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_version(0), LL_EBADHANDLE);
    for (int code = LL_ETLS; code >= LL_ETLSEOF; code--) {
        CHECK(strcmp(ll_strerror(code), "unknown error") != 0);
        CHECK(strncmp(ll_err_name(code), "LL_ETLS", 7) == 0);
    }
    STILL_RUNS(loop);
    server_free(&s, loop);
    CHECK_EQ_INT(ll_release(c), 0);
    CHECK_EQ_INT(ll_tls_config_set_verify(c, 1), LL_EBADHANDLE);
    ll_release(loop);
}

/* A server with an ALPN list refuses a client that offers only others
 * (LL_ETLSNEGOTIATE on both sides: the client hears no_application_protocol),
 * also http/1.1 to an h2 server, which crypto/tls would let through without
 * ALPN; a client that offers none is served without ALPN. */
static void alpn_case(ll_loop loop, const char *const *srv, size_t nsrv, const char *const *cli, size_t ncli,
                      int want_rc, const char *want_alpn) {
    ll_tls_config scfg = tls_conf(NULL, pki.cert, pki.key);
    ll_tls_config ccfg = tls_conf(pki.ca, NULL, NULL);
    CHECK_EQ_INT(ll_tls_config_set_alpn(scfg, srv, nsrv), 0);
    CHECK_EQ_INT(ll_tls_config_set_alpn(ccfg, cli, ncli), 0);
    struct tls_server ts;
    tls_server_start(&ts, loop, scfg, 2);
    struct conn c;
    conn_init(&c);
    int rc = connect_tls(loop, "127.0.0.1", ts.s.port, ccfg, "localhost", &c);
    CHECK_EQ_INT(rc, want_rc);
    if (want_rc != 0) {
        RUN_UNTIL(loop, ts.nfail == 1, 20);
        CHECK_EQ_INT(ts.fail_code, want_rc);
        CHECK_EQ_INT(ts.s.n, 0);
    } else {
        char name[64];
        CHECK_EQ_INT(ll_tls_alpn(c.t, name, sizeof name), (long long)strlen(want_alpn));
        CHECK_EQ_STR(name, want_alpn);
        RUN_UNTIL(loop, ts.s.n == 1, 20);
        ll_transport_close(c.t);
        RUN_UNTIL(loop, c.nlost == 1, 20);
    }
    server_free(&ts.s, loop);
    ll_release(scfg);
    ll_release(ccfg);
}

static void test_alpn_refusal(void) {
    ll_loop loop = new_loop();
    int fds = count_fds();
    const char *h2[] = {"h2"}, *h11[] = {"http/1.1"}, *ab[] = {"a", "b"}, *c[] = {"c"}, *xb[] = {"x", "b"};
    const char *h2h11[] = {"h2", "http/1.1"};
    alpn_case(loop, h2, 1, h11, 1, LL_ETLSNEGOTIATE, NULL);
    alpn_case(loop, ab, 2, c, 1, LL_ETLSNEGOTIATE, NULL);
    alpn_case(loop, ab, 2, xb, 2, 0, "b");
    alpn_case(loop, h2h11, 2, h11, 1, 0, "http/1.1");
    alpn_case(loop, h2, 1, NULL, 0, 0, "");
    spin(loop, 3);
    CHECK_EQ_INT(count_fds(), fds);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    if (pki_make(&pki) != 0) {
        fprintf(stderr, "could not make test certificates with openssl\n");
        return 1;
    }
    RUN_TEST(test_client_verify_failures);
    RUN_TEST(test_server_client_auth);
    RUN_TEST(test_client_peer_garbage_and_vanish);
    RUN_TEST(test_server_handshake_failures);
    RUN_TEST(test_200_concurrent);
    RUN_TEST(test_start_tls);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_alpn_refusal);
    pki_free(&pki);
    return CHECK_REPORT();
}
