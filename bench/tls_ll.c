/* SPDX-License-Identifier: MIT */
/*
 * tls_ll.c — libloop's TLS echo server for W11 (bench/run_tls.sh), from C
 * through include/libloop.h: ll_tls_listen on 127.0.0.1 with the given
 * certificate, one shared protocol function, no per-connection state:
 * LL_DATA_RECEIVED -> ll_transport_write (encrypted on the loop thread),
 * LL_EOF_RECEIVED -> close. Prints "PORT <n>" once listening; stops itself
 * after MAX_S seconds.
 *
 *   tls_ll CERT.pem KEY.pem
 */
#include <stdio.h>
#include <stdlib.h>

#include <libloop.h>

#define MAX_S 900

static int echo(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_DATA_RECEIVED)
        ll_transport_write(ev->transport, ev->data, ev->len);
    return 0;
}

static void stop(ll_loop loop, void *arg) {
    (void)arg;
    ll_loop_stop(loop);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: tls_ll CERT.pem KEY.pem\n");
        return 2;
    }
    ll_loop loop = 0;
    ll_tls_config cfg = 0;
    ll_server srv = 0;
    int port = 0, rc;
    if ((rc = ll_loop_new(&loop)) != 0 || (rc = ll_tls_config_new(&cfg)) != 0 ||
        (rc = ll_tls_config_load_cert_file(cfg, argv[1], argv[2])) != 0 ||
        (rc = ll_tls_listen(loop, "127.0.0.1", 0, 1024, 0, cfg, echo, NULL, &srv)) != 0 ||
        (rc = ll_server_port(srv, &port)) != 0 || (rc = ll_call_later(loop, MAX_S, stop, NULL, NULL)) != 0) {
        fprintf(stderr, "tls_ll: %s\n", ll_strerror(rc));
        return 2;
    }
    printf("PORT %d\n", port);
    fflush(stdout);
    ll_loop_run_forever(loop);
    ll_release(srv);
    ll_release(cfg);
    ll_release(loop);
    return 0;
}
