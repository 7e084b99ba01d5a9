/* SPDX-License-Identifier: MIT */
/*
 * udp_ll.c — the UDP workload's receiver on libloop (bench/udp_common.h):
 * one transport from ll_udp_open, datagrams through its protocol fn (each
 * readiness's datagrams reach C in one crossing, read with recvmmsg on
 * Linux), acks with ll_transport_sendto.
 */
#include <stdio.h>
#include <sys/socket.h>

#include "libloop.h"
#include "udp_common.h"

static int send_errors;

static int proto(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    unsigned char ack[UDP_ACK];
    if (ev->kind == LL_DATAGRAM_RECEIVED && udp_count(ev->data, ev->len, ack)) {
        if (ll_transport_sendto(ev->transport, ack, sizeof ack, ev->addr, ev->addrlen) != 0)
            send_errors++;
    }
    return 0;
}

static void stop_cb(ll_loop loop, void *arg) {
    (void)arg;
    fprintf(stderr, "libloop udp: lifetime limit reached, stopping\n");
    ll_loop_stop(loop);
}

static void die_rc(const char *what, int rc) {
    fprintf(stderr, "libloop udp: %s: %s (%d)\n", what, ll_err_name(rc), rc);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", ll_version_string());
        return 0;
    }
    int port;
    double max_s;
    udp_args(argc, argv, &port, &max_s);
    ll_loop loop;
    ll_transport t;
    int rc;
    if ((rc = ll_loop_new(&loop)) != 0)
        die_rc("ll_loop_new", rc);
    if ((rc = ll_udp_open(loop, UDP_HOST, port, NULL, 0, 0, proto, NULL, &t)) != 0)
        die_rc("ll_udp_open", rc);
    int rcvbuf = UDP_RCVBUF;
    setsockopt(ll_transport_fd(t), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    unsigned char sa[128];
    uint32_t salen = sizeof sa;
    if ((rc = ll_transport_sockname(t, sa, &salen)) != 0)
        die_rc("ll_transport_sockname", rc);
    if ((rc = ll_call_later(loop, max_s, stop_cb, NULL, NULL)) != 0)
        die_rc("ll_call_later", rc);
    udp_print_port(sa[2] << 8 | sa[3]);
    if ((rc = ll_loop_run_forever(loop)) != 0)
        die_rc("ll_loop_run_forever", rc);
    ll_transport_abort(t);
    ll_release(loop);
    return send_errors ? 1 : 0;
}
