/* SPDX-License-Identifier: MIT */
/*
 * TLS against peers nobody here wrote: openssl s_server / s_client and
 * Python's ssl module, both directions; ALPN, client certificates, TLS 1.2
 * and 1.3, a 64 MiB transfer with checksum, the version mismatch, and a
 * TLS server on a socket the host bound (ll_tls_server_open).
 * Certificates are made at test time (tls_util.h); every port is picked
 * by the kernel.
 */
#define _GNU_SOURCE
#include "net_util.h"
#include "tls_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static struct pki pki;

/* A TLS server whose connections each get a struct conn; a connection whose
 * handshake fails reaches server_proto with LL_CONNECTION_LOST only. */
struct tls_server {
    struct server s;
    int nfail, fail_code;
};

static int tls_server_proto(ll_loop loop, const ll_event *ev, void *arg) {
    struct tls_server *ts = arg;
    if (ev->kind == LL_CONNECTION_LOST) {
        ts->nfail++;
        ts->fail_code = ev->code;
        return 0;
    }
    return server_proto(loop, ev, &ts->s);
}

static int tls_server_start(struct tls_server *ts, ll_loop loop, ll_tls_config cfg, int max) {
    memset(ts, 0, sizeof *ts);
    server_init(&ts->s, max);
    ts->s.tmpl.echo = 1;
    int rc = ll_tls_listen(loop, "127.0.0.1", 0, 0, 0, cfg, tls_server_proto, ts, &ts->s.id);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(ll_server_port(ts->s.id, &ts->s.port), 0);
    return rc;
}

/* Our client against openssl s_server -rev: TLS 1.3, ALPN, accessors. */
static void test_client_vs_openssl_server(void) {
    ll_loop loop = new_loop();
    struct peer p;
    char *argv[] = {"openssl", "s_server", "-accept", "0", "-cert", pki.cert, "-key", pki.key,
                    "-rev", "-naccept", "1", "-alpn", "x,h2", NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, -1), 0);
    int port = peer_port(&p, "ACCEPT", 20);
    CHECK(port > 0);
    ll_tls_config cfg = tls_conf(pki.ca, NULL, NULL);
    const char *alpn[] = {"h2"};
    CHECK_EQ_INT(ll_tls_config_set_alpn(cfg, alpn, 1), 0);
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", port, cfg, "localhost", &c), 0);
    CHECK_EQ_INT(ll_tls_version(c.t), LL_TLS_1_3);
    char name[64];
    CHECK_EQ_INT(ll_tls_alpn(c.t, name, sizeof name), 2);
    CHECK_EQ_STR(name, "h2");
    int n = ll_tls_cipher(c.t, name, sizeof name);
    CHECK(n > 0 && strncmp(name, "TLS_", 4) == 0);
    CHECK_EQ_INT(ll_tls_verify_result(c.t), 0);
    CHECK_EQ_INT(ll_tls_resumed(c.t), 0);
    unsigned char der[4096];
    int dlen = ll_tls_peer_cert(c.t, 0, der, sizeof der);
    CHECK(dlen > 100 && dlen <= (int)sizeof der && der[0] == 0x30); /* a DER SEQUENCE */
    CHECK_EQ_INT(ll_tls_peer_cert(c.t, 5, der, sizeof der), 0);
    CHECK_EQ_INT(ll_transport_can_write_eof(c.t), 0);
    CHECK_EQ_INT(ll_transport_write_eof(c.t), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_write(c.t, "hello tls\n", 10), 0);
    RUN_UNTIL(loop, c.nbuf >= 9 && memmem(c.buf, c.nbuf, "slt olleh", 9) != NULL, 20);
    CHECK_EQ_INT(ll_transport_close(c.t), 0);
    RUN_UNTIL(loop, c.nlost == 1, 20);
    CHECK_EQ_INT(c.lost_code, 0);
    CHECK_EQ_INT(c.bad_order, 0);
    kill(p.pid, SIGTERM);
    peer_wait(&p, loop, 20);
    ll_release(cfg);
    ll_release(loop);
}

/* s_server requires a client certificate: ours verifies; without one the
 * server's certificate_required alert ends the connection (in TLS 1.3 the
 * client's handshake is over by then, so it comes as LL_CONNECTION_LOST). */
static void test_client_cert_vs_openssl(int with_cert) {
    ll_loop loop = new_loop();
    struct peer p;
    char *argv[] = {"openssl", "s_server", "-accept", "0", "-cert", pki.cert, "-key", pki.key, "-rev",
                    "-naccept", "1", "-Verify", "1", "-verify_return_error", "-CAfile", pki.ca, NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, -1), 0);
    int port = peer_port(&p, "ACCEPT", 20);
    CHECK(port > 0);
    ll_tls_config cfg = tls_conf(pki.ca, with_cert ? pki.ccert : NULL, pki.ckey);
    struct conn c;
    conn_init(&c);
    int rc = connect_tls(loop, "127.0.0.1", port, cfg, "localhost", &c);
    if (with_cert) {
        CHECK_EQ_INT(rc, 0);
        ll_transport_write(c.t, "abc\n", 4);
        RUN_UNTIL(loop, c.nbuf >= 3 && memmem(c.buf, c.nbuf, "cba", 3) != NULL, 20);
        ll_transport_close(c.t);
        RUN_UNTIL(loop, c.nlost == 1, 20);
        CHECK_EQ_INT(c.lost_code, 0);
    } else if (rc == 0) {
        ll_transport_write(c.t, "abc\n", 4);
        RUN_UNTIL(loop, c.nlost == 1, 20);
        CHECK_EQ_INT(c.lost_code, LL_ETLSALERT);
        CHECK_EQ_INT(c.nbytes, 0);
    } else {
        CHECK_EQ_INT(rc, LL_ETLSALERT);
    }
    kill(p.pid, SIGTERM);
    peer_wait(&p, loop, 20);
    ll_release(cfg);
    ll_release(loop);
}

static void test_client_cert_ok(void) { test_client_cert_vs_openssl(1); }
static void test_client_cert_missing(void) { test_client_cert_vs_openssl(0); }

/* openssl s_client speaks only TLS 1.2, our server only 1.3: the server
 * ends that connection with LL_ETLSNEGOTIATE (no LL_CONNECTION_MADE) and
 * goes on; s_client fails. */
static void test_version_mismatch(void) {
    ll_loop loop = new_loop();
    ll_tls_config cfg = tls_conf(NULL, pki.cert, pki.key);
    CHECK_EQ_INT(ll_tls_config_set_versions(cfg, LL_TLS_1_3, LL_TLS_1_3), 0);
    struct tls_server ts;
    tls_server_start(&ts, loop, cfg, 4);
    char portarg[32];
    snprintf(portarg, sizeof portarg, "127.0.0.1:%d", ts.s.port);
    struct peer p;
    char *argv[] = {"openssl", "s_client", "-connect", portarg, "-tls1_2", NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, -1), 0);
    CHECK(peer_wait(&p, loop, 30) != 0);
    RUN_UNTIL(loop, ts.nfail == 1, 20);
    CHECK_EQ_INT(ts.fail_code, LL_ETLSNEGOTIATE);
    CHECK_EQ_INT(ts.s.n, 0);
    CHECK_EQ_STR(ll_strerror(LL_ETLSNEGOTIATE), "no TLS version, cipher suite or ALPN protocol in common");
    CHECK_EQ_STR(ll_err_name(LL_ETLSNEGOTIATE), "LL_ETLSNEGOTIATE");
    server_free(&ts.s, loop);
    ll_release(cfg);
    ll_release(loop);
}

/* openssl s_client (TLS 1.2, ALPN, a client certificate) against our echo
 * server: what it sends comes back; we see its certificate. */
static void test_openssl_client_vs_server(void) {
    ll_loop loop = new_loop();
    ll_tls_config cfg = tls_conf(pki.ca, pki.cert, pki.key);
    const char *alpn[] = {"h2", "http/1.1"};
    CHECK_EQ_INT(ll_tls_config_set_alpn(cfg, alpn, 2), 0);
    CHECK_EQ_INT(ll_tls_config_set_client_auth(cfg, LL_TLS_CLIENT_REQUIRE), 0);
    struct tls_server ts;
    tls_server_start(&ts, loop, cfg, 4);
    char portarg[32];
    /* stdin is a pipe kept open until the echo is back: s_client quits at
     * its stdin's EOF. The input fits in the pipe's buffer. */
    static char input[40000];
    size_t ilen = 0;
    for (int i = 0; ilen < sizeof input - 64; i++)
        ilen += (size_t)snprintf(input + ilen, 64, "line %d of the openssl client's input\n", i);
    int inpipe[2];
    CHECK_EQ_INT(pipe(inpipe), 0);
    CHECK_EQ_INT(write(inpipe[1], input, ilen), ilen);
    int in = inpipe[0];
    snprintf(portarg, sizeof portarg, "127.0.0.1:%d", ts.s.port);
    struct peer p;
    char *argv[] = {"openssl", "s_client", "-connect", portarg, "-CAfile", pki.ca, "-verify_return_error",
                    "-servername", "localhost", "-tls1_2", "-alpn", "http/1.1", "-cert", pki.ccert,
                    "-key", pki.ckey, "-quiet", "-no_ign_eof", NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, in), 0);
    close(in);
    RUN_UNTIL(loop, ts.s.n == 1 && ts.s.conns[0].nbytes == ilen, 30);
    struct conn *c = &ts.s.conns[0];
    CHECK_EQ_INT(c->hash, fnv(FNV_INIT, input, ilen));
    CHECK_EQ_INT(ll_tls_version(c->t), LL_TLS_1_2);
    char name[32];
    CHECK_EQ_INT(ll_tls_alpn(c->t, name, sizeof name), 8);
    CHECK_EQ_STR(name, "http/1.1");
    CHECK_EQ_INT(ll_tls_verify_result(c->t), 0);
    CHECK(ll_tls_peer_cert(c->t, 0, NULL, 0) > 100);
    /* Our close sends close_notify after the echo: s_client prints it all and quits. */
    ll_transport_close(c->t);
    static char out[1 << 17];
    size_t n = peer_read_all(&p, loop, out, sizeof out, 30);
    CHECK_EQ_INT(n, ilen);
    CHECK_EQ_INT(fnv(FNV_INIT, out, n), c->hash);
    close(inpipe[1]);
    peer_wait(&p, loop, 20);
    RUN_UNTIL(loop, c->nlost == 1, 20);
    CHECK_EQ_INT(c->lost_code, 0);
    CHECK_EQ_INT(ts.nfail, 0);
    server_free(&ts.s, loop);
    ll_release(cfg);
    ll_release(loop);
}

/* ll_tls_server_open: a listening socket the host bound serves TLS as
 * ll_tls_listen does. Bad input is refused and leaves the fd to the host;
 * a client that speaks no TLS ends with one LL_CONNECTION_LOST
 * (LL_ETLSPROTO) and no LL_CONNECTION_MADE; openssl s_client's input
 * comes back over TLS 1.3. */
static void test_server_open_fd(void) {
    ll_loop loop = new_loop();
    ll_tls_config cfg = tls_conf(NULL, pki.cert, pki.key);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK_EQ_INT(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
    struct tls_server ts;
    memset(&ts, 0, sizeof ts);
    server_init(&ts.s, 4);
    ts.s.tmpl.echo = 1;
    CHECK_EQ_INT(ll_tls_server_open(loop, ls, cfg, tls_server_proto, &ts, &ts.s.id), LL_EINVAL); /* not listening */
    CHECK_EQ_INT(listen(ls, 8), 0);
    CHECK_EQ_INT(ll_tls_server_open(loop, ls, 0, tls_server_proto, &ts, &ts.s.id), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tls_server_open(loop, ls, cfg, tls_server_proto, &ts, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tls_server_open(loop, -1, cfg, tls_server_proto, &ts, &ts.s.id), -EBADF);
    CHECK_EQ_INT(ll_tls_server_open(loop, ls, cfg, tls_server_proto, &ts, &ts.s.id), 0);
    CHECK_EQ_INT(ll_server_port(ts.s.id, &ts.s.port), 0);

    struct conn plain;
    conn_init(&plain);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", ts.s.port, &plain), 0);
    static const char http[] = "GET / HTTP/1.0\r\n\r\n";
    CHECK_EQ_INT(ll_transport_write(plain.t, http, sizeof http - 1), 0);
    RUN_UNTIL(loop, ts.nfail == 1 && plain.nlost == 1, 20);
    CHECK_EQ_INT(ts.fail_code, LL_ETLSPROTO);
    CHECK_EQ_INT(ts.s.n, 0);

    static const char input[] = "hello from s_client\n";
    int inpipe[2];
    CHECK_EQ_INT(pipe(inpipe), 0);
    CHECK_EQ_INT(write(inpipe[1], input, sizeof input - 1), sizeof input - 1);
    char portarg[32];
    snprintf(portarg, sizeof portarg, "127.0.0.1:%d", ts.s.port);
    struct peer p;
    char *argv[] = {"openssl", "s_client", "-connect", portarg, "-CAfile", pki.ca, "-verify_return_error",
                    "-servername", "localhost", "-tls1_3", "-quiet", "-no_ign_eof", NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, inpipe[0]), 0);
    close(inpipe[0]);
    RUN_UNTIL(loop, ts.s.n == 1 && ts.s.conns[0].nbytes == sizeof input - 1, 30);
    struct conn *c = &ts.s.conns[0];
    CHECK_EQ_INT(ll_tls_version(c->t), LL_TLS_1_3);
    ll_transport_close(c->t);
    char out[256];
    size_t n = peer_read_all(&p, loop, out, sizeof out, 30);
    CHECK_EQ_INT(n, sizeof input - 1);
    CHECK(memcmp(out, input, n) == 0);
    close(inpipe[1]);
    peer_wait(&p, loop, 20);
    RUN_UNTIL(loop, c->nlost == 1, 20);
    CHECK_EQ_INT(ts.nfail, 1);
    server_free(&ts.s, loop);
    ll_release(cfg);
    ll_release(loop);
}

/* Python's ssl client sends 64 MiB through our echo server and checks
 * the SHA-256 of what came back against what it sent. */
/* Single-threaded: an ssl socket must not be read and written from two
 * threads at once (OpenSSL's SSL object is not thread-safe), so it sends
 * 1 MiB and reads its echo back, 64 times. */
static const char *py_client =
    "import hashlib, socket, ssl, sys\n"
    "ctx = ssl.create_default_context(cafile=sys.argv[2])\n"
    "s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', int(sys.argv[1]))), server_hostname='localhost')\n"
    "block = bytes((i * 7) & 255 for i in range(1 << 20)); rounds = 64\n"
    "hs = hashlib.sha256(); hr = hashlib.sha256(); got = 0\n"
    "for _ in range(rounds):\n"
    "    s.sendall(block); hs.update(block); want = got + len(block)\n"
    "    while got < want:\n"
    "        d = s.recv(1 << 16)\n"
    "        if not d: break\n"
    "        hr.update(d); got += len(d)\n"
    "total = rounds * len(block)\n"
    "print('OK' if got == total and hs.digest() == hr.digest() else 'BAD %d' % got, s.version(), flush=True)\n"
    "s.unwrap(); s.close()\n";

static void test_python_client_64mib(void) {
    ll_loop loop = new_loop();
    ll_tls_config cfg = tls_conf(NULL, pki.cert, pki.key);
    struct tls_server ts;
    tls_server_start(&ts, loop, cfg, 2);
    char port[16];
    snprintf(port, sizeof port, "%d", ts.s.port);
    struct peer p;
    char *argv[] = {"python3", "-c", (char *)py_client, port, pki.ca, NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, -1), 0);
    char out[256];
    peer_read_all(&p, loop, out, sizeof out, 300);
    CHECK(strncmp(out, "OK TLSv1.3", 10) == 0);
    if (strncmp(out, "OK", 2) != 0)
        fprintf(stderr, "python said: %s\n", out);
    CHECK_EQ_INT(peer_wait(&p, loop, 30), 0);
    RUN_UNTIL(loop, ts.s.n == 1 && ts.s.conns[0].nlost == 1, 30);
    CHECK_EQ_INT(ts.s.conns[0].nbytes, 64 << 20);
    CHECK_EQ_INT(ts.s.conns[0].neof, 1); /* its close_notify */
    CHECK_EQ_INT(ts.s.conns[0].lost_code, 0);
    server_free(&ts.s, loop);
    ll_release(cfg);
    ll_release(loop);
}

/* Python's ssl server sends 1 MiB and unwraps (close_notify): our client
 * gets every byte, then LL_EOF_RECEIVED, then a clean LL_CONNECTION_LOST. */
static const char *py_server =
    "import socket, ssl, sys\n"
    "ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[1], sys.argv[2])\n"
    "ctx.set_alpn_protocols(['x', 'y'])\n"
    "ls = socket.create_server(('127.0.0.1', 0)); print('PORT:%d' % ls.getsockname()[1], flush=True)\n"
    "c, _ = ls.accept(); s = ctx.wrap_socket(c, server_side=True)\n"
    "s.sendall(bytes(i % 251 for i in range(1 << 20)))\n"
    "s.unwrap(); c.close()\n";

static void test_client_vs_python_server(void) {
    ll_loop loop = new_loop();
    struct peer p;
    char *argv[] = {"python3", "-c", (char *)py_server, pki.cert, pki.key, NULL};
    CHECK_EQ_INT(peer_spawn(&p, argv, -1), 0);
    int port = peer_port(&p, "PORT", 20);
    CHECK(port > 0);
    ll_tls_config cfg = tls_conf(pki.ca, NULL, NULL);
    const char *alpn[] = {"y"};
    ll_tls_config_set_alpn(cfg, alpn, 1);
    struct conn c;
    conn_init(&c);
    CHECK_EQ_INT(connect_tls(loop, "127.0.0.1", port, cfg, NULL, &c), 0); /* NULL: checks "127.0.0.1" */
    char name[8];
    CHECK_EQ_INT(ll_tls_alpn(c.t, name, sizeof name), 1);
    RUN_UNTIL(loop, c.nlost == 1, 60);
    static unsigned char want[1 << 20];
    for (size_t i = 0; i < sizeof want; i++)
        want[i] = (unsigned char)(i % 251);
    CHECK_EQ_INT(c.nbytes, sizeof want);
    CHECK_EQ_INT(c.hash, fnv(FNV_INIT, want, sizeof want));
    CHECK_EQ_INT(c.neof, 1);
    CHECK_EQ_INT(c.lost_code, 0);
    CHECK_EQ_INT(peer_wait(&p, loop, 20), 0);
    ll_release(cfg);
    ll_release(loop);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    if (pki_make(&pki) != 0) {
        fprintf(stderr, "could not make test certificates with openssl\n");
        return 1;
    }
    RUN_TEST(test_client_vs_openssl_server);
    RUN_TEST(test_client_cert_ok);
    RUN_TEST(test_client_cert_missing);
    RUN_TEST(test_version_mismatch);
    RUN_TEST(test_openssl_client_vs_server);
    RUN_TEST(test_server_open_fd);
    RUN_TEST(test_python_client_64mib);
    RUN_TEST(test_client_vs_python_server);
    pki_free(&pki);
    return CHECK_REPORT();
}
