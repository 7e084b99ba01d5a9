/* SPDX-License-Identifier: MIT */
/*
 * udp_ev.c — the UDP workload's receiver on libev (bench/udp_common.h):
 * an ev_io watcher that reads with recvmmsg, 32 datagrams a call (libev
 * leaves the reading to its user; this is what a careful one writes), acks
 * with sendto.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udp_common.h"

#define BATCH 32
#define SLOT (64 * 1024)
static char slots[BATCH][SLOT];
static struct mmsghdr msgs[BATCH];
static struct iovec iovs[BATCH];
static struct sockaddr_storage names[BATCH];
static int send_errors;

static void read_cb(struct ev_loop *loop, ev_io *w, int revents) {
    (void)loop;
    (void)revents;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < BATCH; i++)
            msgs[i].msg_hdr.msg_namelen = sizeof names[i];
        int n = recvmmsg(w->fd, msgs, BATCH, 0, NULL);
        if (n <= 0)
            return;
        for (int i = 0; i < n; i++) {
            unsigned char ack[UDP_ACK];
            if (udp_count(slots[i], msgs[i].msg_len, ack) &&
                sendto(w->fd, ack, sizeof ack, 0, (struct sockaddr *)&names[i], msgs[i].msg_hdr.msg_namelen) < 0)
                send_errors++;
        }
        if (n < BATCH)
            return;
    }
}

static void limit_cb(struct ev_loop *loop, ev_timer *t, int revents) {
    (void)t;
    (void)revents;
    fprintf(stderr, "libev udp: lifetime limit reached, stopping\n");
    ev_break(loop, EVBREAK_ALL);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%d.%d\n", ev_version_major(), ev_version_minor());
        return 0;
    }
    int port;
    double max_s;
    udp_args(argc, argv, &port, &max_s);
    for (int i = 0; i < BATCH; i++) {
        iovs[i] = (struct iovec){slots[i], SLOT};
        msgs[i].msg_hdr.msg_iov = &iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &names[i];
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, UDP_HOST, &sin.sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        perror("libev udp: socket/bind");
        return 2;
    }
    int rcvbuf = UDP_RCVBUF;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    socklen_t len = sizeof sin;
    getsockname(fd, (struct sockaddr *)&sin, &len);
    struct ev_loop *loop = EV_DEFAULT;
    ev_io w;
    ev_io_init(&w, read_cb, fd, EV_READ);
    ev_io_start(loop, &w);
    ev_timer limit;
    ev_timer_init(&limit, limit_cb, max_s, 0);
    ev_timer_start(loop, &limit);
    udp_print_port(ntohs(sin.sin_port));
    ev_run(loop, 0);
    close(fd);
    return send_errors ? 1 : 0;
}
