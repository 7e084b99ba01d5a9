/* SPDX-License-Identifier: MIT */
/* An HTTPS GET from the header alone: a libloop TLS server and a TLS
 * client in one loop.
 *
 * The program makes a throwaway CA and a "localhost" certificate with the
 * openssl command (in a temporary directory, removed at the end), serves
 * one HTTP/1.1 response over TLS on 127.0.0.1 (a free port), then fetches
 * it with ll_tls_connect, checking the server's certificate against the
 * CA and the name "localhost", and prints what the handshake settled and
 * the response. The server closes after answering (close_notify), the
 * client's LL_EOF_RECEIVED ends the response, and the loop stops.
 *
 *   asyncio:  loop.create_server(..., ssl=ctx) / loop.create_connection(..., ssl=ctx)
 *   libuv:    none built in (OpenSSL memory BIOs wired by hand)
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libloop.h"

static const char body[] = "hello from a libloop TLS server\n";

/* ---- the server: answer one request, then close ---- */

static int serve(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_DATA_RECEIVED && memmem(ev->data, ev->len, "\r\n\r\n", 4) != NULL) {
        char resp[256];
        int n = snprintf(resp, sizeof resp,
                         "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n%s",
                         strlen(body), body);
        ll_transport_write(ev->transport, resp, (size_t)n);
        ll_transport_close(ev->transport); /* sends close_notify after the response */
    }
    return 0;
}

/* ---- the client ---- */

struct fetch {
    char resp[1024];
    size_t n;
    int lost_code;
};

static int client(ll_loop loop, const ll_event *ev, void *arg) {
    struct fetch *f = arg;
    char buf[64];
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        ll_tls_cipher(ev->transport, buf, sizeof buf);
        printf("client: TLS %s, %s, certificate %s, %d bytes of DER\n",
               ll_tls_version(ev->transport) == LL_TLS_1_3 ? "1.3" : "1.2", buf,
               ll_tls_verify_result(ev->transport) == 0 ? "verified" : "NOT verified",
               ll_tls_peer_cert(ev->transport, 0, NULL, 0));
        ll_transport_write(ev->transport, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", 35);
        break;
    case LL_DATA_RECEIVED:
        if (f->n + ev->len < sizeof f->resp) {
            memcpy(f->resp + f->n, ev->data, ev->len);
            f->n += ev->len;
        }
        break;
    case LL_CONNECTION_LOST:
        f->lost_code = ev->code;
        ll_loop_stop(loop);
        break;
    }
    return 0;
}

int main(void) {
    char dir[] = "/tmp/libloop-https-XXXXXX", cmd[1024], ca[64], cert[64], key[64];
    if (mkdtemp(dir) == NULL)
        return 1;
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key "
             "-out ca.pem -days 1 -subj /CN=example-ca >/dev/null 2>&1 && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr "
             "-subj /CN=localhost >/dev/null 2>&1 && printf 'subjectAltName=DNS:localhost\\n' > ext && "
             "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile ext "
             "-out srv.pem >/dev/null 2>&1",
             dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "https_get: the openssl command could not make a certificate\n");
        return 1;
    }
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);
    snprintf(cert, sizeof cert, "%s/srv.pem", dir);
    snprintf(key, sizeof key, "%s/srv.key", dir);

    ll_loop loop = 0;
    ll_tls_config scfg = 0, ccfg = 0;
    ll_server srv = 0;
    ll_future fut = 0;
    int port = 0, rc = 1;
    struct fetch f = {0};
    if (ll_loop_new(&loop) != 0 || ll_tls_config_new(&scfg) != 0 || ll_tls_config_new(&ccfg) != 0)
        goto out;
    if (ll_tls_config_load_cert_file(scfg, cert, key) != 0 || ll_tls_config_load_ca_file(ccfg, ca) != 0)
        goto out;
    if (ll_tls_listen(loop, "127.0.0.1", 0, 0, 0, scfg, serve, NULL, &srv) != 0 || ll_server_port(srv, &port) != 0)
        goto out;
    if (ll_tls_connect(loop, "127.0.0.1", port, ccfg, "localhost", client, &f, &fut) != 0)
        goto out;
    ll_loop_run_forever(loop);
    if (ll_future_result(fut, NULL) != 0) {
        printf("client: connect failed: %s\n", ll_strerror(ll_future_result(fut, NULL)));
        goto out;
    }
    f.resp[f.n] = 0;
    printf("client: got %zu bytes, connection closed with code %d:\n%s", f.n, f.lost_code, f.resp);
    rc = (f.lost_code == 0 && strstr(f.resp, body) != NULL) ? 0 : 1;
out:
    if (fut)
        ll_release(fut);
    if (srv)
        ll_release(srv);
    if (scfg)
        ll_release(scfg);
    if (ccfg)
        ll_release(ccfg);
    if (loop)
        ll_release(loop);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
