/* SPDX-License-Identifier: MIT */
/*
 * udp_uv.c — the UDP workload's receiver on libuv (bench/udp_common.h):
 * uv_udp_init_ex with UV_UDP_RECVMMSG (libuv reads with recvmmsg into the
 * 64 KiB chunks of the buffer alloc_cb gives, 20 at most per call), acks
 * with uv_udp_try_send.
 */
#include <netinet/in.h>
#include <uv.h>

#include "udp_common.h"

#define CHUNKS 20 /* libuv's most per recvmmsg */
static char rbuf[CHUNKS * 64 * 1024];
static uv_udp_t udp;
static uv_timer_t limit;
static int send_errors;

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)h;
    (void)suggested;
    *buf = uv_buf_init(rbuf, sizeof rbuf);
}

static void recv_cb(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr, unsigned flags) {
    (void)flags;
    unsigned char ack[UDP_ACK];
    if (nread < 0 || addr == NULL)
        return; /* an error, or the end of a recvmmsg batch (UV_UDP_MMSG_FREE) */
    if (udp_count(buf->base, (size_t)nread, ack)) {
        uv_buf_t b = uv_buf_init((char *)ack, sizeof ack);
        if (uv_udp_try_send(h, &b, 1, addr) < 0)
            send_errors++;
    }
}

static void limit_cb(uv_timer_t *t) {
    fprintf(stderr, "libuv udp: lifetime limit reached, stopping\n");
    uv_stop(t->loop);
}

static void die_rc(const char *what, int rc) {
    fprintf(stderr, "libuv udp: %s: %s\n", what, uv_strerror(rc));
    exit(2);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", uv_version_string());
        return 0;
    }
    int port, rc;
    double max_s;
    udp_args(argc, argv, &port, &max_s);
    uv_loop_t *loop = uv_default_loop();
    if ((rc = uv_udp_init_ex(loop, &udp, AF_INET | UV_UDP_RECVMMSG)) != 0)
        die_rc("uv_udp_init_ex", rc);
    struct sockaddr_in sin;
    uv_ip4_addr(UDP_HOST, port, &sin);
    if ((rc = uv_udp_bind(&udp, (const struct sockaddr *)&sin, 0)) != 0)
        die_rc("uv_udp_bind", rc);
    int rcvbuf = UDP_RCVBUF;
    uv_recv_buffer_size((uv_handle_t *)&udp, &rcvbuf);
    int len = sizeof sin;
    uv_udp_getsockname(&udp, (struct sockaddr *)&sin, &len);
    if ((rc = uv_udp_recv_start(&udp, alloc_cb, recv_cb)) != 0)
        die_rc("uv_udp_recv_start", rc);
    if (!uv_udp_using_recvmmsg(&udp))
        fprintf(stderr, "libuv udp: not using recvmmsg\n");
    uv_timer_init(loop, &limit);
    uv_timer_start(&limit, limit_cb, (uint64_t)(max_s * 1000), 0);
    udp_print_port(ntohs(sin.sin_port));
    uv_run(loop, UV_RUN_DEFAULT);
    return send_errors ? 1 : 0;
}
