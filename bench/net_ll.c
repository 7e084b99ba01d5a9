/* SPDX-License-Identifier: MIT */
/*
 * net_ll.c — libloop, driven from C through include/libloop.h, for the
 * network workloads W4 (ping-pong in one loop) and the echo server of W5 and
 * W10 (driven by bench/loadgen.c). Modes: see bench/net_common.h.
 *
 * Server: ll_tcp_listen(loop, "127.0.0.1", PORT, NET_BACKLOG, 0, echo, NULL)
 *    with ONE shared protocol function and no per-connection state (an echo
 *    needs none; the rivals keep only their own watcher/handle per
 *    connection): LL_DATA_RECEIVED -> ll_transport_write(ev->transport,
 *    ev->data, ev->len) (libloop sends what the kernel takes and buffers the
 *    rest); LL_EOF_RECEIVED -> return 0 (close). ll_call_later(MAX_S) stops
 *    the loop so a stray server ends by itself.
 * W4: the same server plus a client from ll_tcp_connect in the same loop;
 *    on LL_CONNECTION_MADE the client starts the clock and writes W4_MSG
 *    bytes, on each complete echo writes the next; after N it stops the
 *    loop. A watchdog ll_call_later(W4_TIMEOUT_S) exits with status 3.
 */
#include "net_common.h"
#include <libloop.h>

static const char *IMPL = "libloop";

static void die_rc(const char *what, int rc) {
    fprintf(stderr, "%s: %s failed: %s (%d)\n", IMPL, what, ll_err_name(rc), rc);
    exit(2);
}

static long write_errors;

/* The server's protocol, shared by every accepted connection. */
static int echo(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    switch (ev->kind) {
    case LL_DATA_RECEIVED: {
        int rc = ll_transport_write(ev->transport, ev->data, ev->len);
        if (rc != 0 && write_errors++ == 0)
            fprintf(stderr, "%s server: ll_transport_write: %s (%d)\n", IMPL, ll_err_name(rc), rc);
        break;
    }
    case LL_EOF_RECEIVED:
        return 0; /* the client is gone: close */
    }
    return 0;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    fprintf(stderr, "%s server: lifetime limit reached, stopping\n", IMPL);
    ll_loop_stop(loop);
}

static void watchdog_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    fprintf(stderr, "%s W4: watchdog: not finished after %.0f s\n", IMPL, W4_TIMEOUT_S);
    exit(3);
}

/* ---- W4 client ---- */

static long w4_n, w4_done;
static bench_mark w4_t0, w4_t1;
static ll_transport w4_client;
static int w4_lost;

static int w4_client_proto(ll_loop loop, const ll_event *ev, void *arg) {
    (void)arg;
    int rc;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        w4_client = ev->transport;
        w4_t0 = bench_mark_now();
        if ((rc = ll_transport_write(ev->transport, w4_msg, W4_MSG)) != 0)
            die_rc("ll_transport_write", rc);
        break;
    case LL_DATA_RECEIVED:
        if (!w4_feed(IMPL, ev->data, ev->len))
            break;
        if (++w4_done == w4_n) {
            w4_t1 = bench_mark_now();
            ll_loop_stop(loop);
            break;
        }
        if ((rc = ll_transport_write(ev->transport, w4_msg, W4_MSG)) != 0)
            die_rc("ll_transport_write", rc);
        break;
    case LL_EOF_RECEIVED:
        return 0;
    case LL_CONNECTION_LOST:
        w4_lost = 1;
        if (w4_done < w4_n) {
            fprintf(stderr, "%s W4: client connection lost after %ld round trips (code %d)\n", IMPL, w4_done,
                    ev->code);
            exit(2);
        }
        break;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", ll_version_string());
        return 0;
    }
    long n = 0;
    int port = 0;
    double max_s = 0;
    int mode = net_args(argc, argv, &n, &port, &max_s);
    ll_loop loop;
    ll_server server;
    int rc;
    if ((rc = ll_loop_new(&loop)) != 0)
        die_rc("ll_loop_new", rc);
    if ((rc = ll_tcp_listen(loop, NET_HOST, mode == 4 ? 0 : port, NET_BACKLOG, 0, echo, NULL, &server)) != 0)
        die_rc("ll_tcp_listen", rc);
    if ((rc = ll_server_port(server, &port)) != 0)
        die_rc("ll_server_port", rc);

    if (mode == 1) {
        if ((rc = ll_call_later(loop, max_s, stop_cb, NULL, NULL)) != 0)
            die_rc("ll_call_later", rc);
        net_print_port(port);
        if ((rc = ll_loop_run_forever(loop)) != 0)
            die_rc("ll_loop_run_forever", rc);
        ll_release(server);
        ll_release(loop);
        return write_errors ? 1 : 0;
    }

    /* W4 */
    w4_msg_init();
    w4_n = n;
    ll_future connecting;
    ll_handle watchdog;
    if ((rc = ll_call_later(loop, W4_TIMEOUT_S, watchdog_cb, NULL, &watchdog)) != 0)
        die_rc("ll_call_later", rc);
    if ((rc = ll_tcp_connect(loop, NET_HOST, port, w4_client_proto, NULL, &connecting)) != 0)
        die_rc("ll_tcp_connect", rc);
    if ((rc = ll_loop_run_forever(loop)) != 0)
        die_rc("ll_loop_run_forever", rc);
    bench_check(w4_done == n, IMPL, "W4", "round trip count");
    uintptr_t connected = 0;
    if ((rc = ll_future_result(connecting, &connected)) != 0 || connected != w4_client)
        fprintf(stderr, "%s W4: the connect future: rc %d, transport %lu, expected %lu\n", IMPL, rc,
                (unsigned long)connected, (unsigned long)w4_client);
    w4_report(IMPL, n, w4_t0, w4_t1);

    /* Teardown: close the client; the server side sees EOF and closes too. */
    ll_release(connecting);
    ll_handle_cancel(watchdog);
    ll_release(watchdog);
    ll_transport_close(w4_client);
    for (int i = 0; i < 100 && !w4_lost; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    ll_release(server);
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    if ((rc = ll_release(loop)) != 0)
        die_rc("ll_release(loop)", rc);
    return write_errors ? 1 : 0;
}
