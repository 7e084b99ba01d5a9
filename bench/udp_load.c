/* SPDX-License-Identifier: MIT */
/*
 * udp_load.c — the sender of the UDP workload, the same program for every
 * receiver (bench/udp_{ll,uv,ev}.c; protocol in bench/udp_common.h), so
 * only the receiving loop differs between the rows. One process, one
 * thread, one connected socket, sendmmsg; it refuses any HOST outside
 * 127.0.0.0/8.
 *
 *   udp_load HOST PORT SIZE TOTAL [WINDOW]
 *       sends TOTAL numbered datagrams of SIZE bytes (>= 8) in bursts of
 *       at most 32, the last of each asking for an ack, keeping at most
 *       WINDOW (default 256) unacknowledged. A window that gets no ack for
 *       UDP_ACK_WAIT_MS (default 50 ms; more for a receiver under valgrind)
 *       is taken as lost and reopened (drops are counted, not
 *       resent). The clock runs from the first send to the ack that
 *       accounts for the last datagram. Prints one line:
 *         RESULT impl=<UDP_IMPL> workload=<UDP_WORKLOAD> n=<TOTAL> size=<SIZE>
 *                per_s=<datagrams received/s> received=<n> lost=<n>
 *                misordered=<n> wall_s=<x> lg_cpu_s=<x>
 *
 * Environment: UDP_IMPL (the impl= label, default "receiver"), UDP_WORKLOAD
 * (default "UDP-<SIZE>"), UDP_TIMEOUT (seconds, default 120: then it exits
 * with status 3). Exit status: 0 done; 2 usage, socket or protocol error;
 * 3 the timeout; 4 more than 1% of the datagrams were lost.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "udp_common.h"

#define BURST 32

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_now(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static void die(const char *what) {
    fprintf(stderr, "udp_load: %s: %s\n", what, strerror(errno));
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: udp_load HOST PORT SIZE TOTAL [WINDOW]\n");
        return 2;
    }
    const char *impl = getenv("UDP_IMPL") ? getenv("UDP_IMPL") : "receiver";
    double timeout_s = getenv("UDP_TIMEOUT") ? atof(getenv("UDP_TIMEOUT")) : 120;
    int ack_wait_ms = getenv("UDP_ACK_WAIT_MS") ? atoi(getenv("UDP_ACK_WAIT_MS")) : 50;
    int port = atoi(argv[2]);
    long size = atol(argv[3]), total = atol(argv[4]);
    long window = argc > 5 ? atol(argv[5]) : 256;
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1 || (ntohl(dst.sin_addr.s_addr) >> 24) != 127) {
        fprintf(stderr, "udp_load: HOST must be an address in 127.0.0.0/8\n");
        return 2;
    }
    if (port < 1 || port > 65535 || size < UDP_HDR || size > 65507 || total < 1 || total > UINT32_MAX || window < BURST) {
        fprintf(stderr, "udp_load: bad PORT, SIZE (8..65507), TOTAL or WINDOW (>= %d)\n", BURST);
        return 2;
    }
    char wl[32];
    snprintf(wl, sizeof wl, "UDP-%ld", size);
    const char *workload = getenv("UDP_WORKLOAD") ? getenv("UDP_WORKLOAD") : wl;

    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&dst, sizeof dst) != 0)
        die("socket/connect");
    int sndbuf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);

    static unsigned char bufs[BURST][65536];
    struct mmsghdr msgs[BURST];
    struct iovec iov[BURST];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < BURST; i++) {
        memset(bufs[i], 'u', (size_t)size);
        iov[i] = (struct iovec){bufs[i], (size_t)size};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }

    long sent = 0, lost = 0;
    uint64_t received = 0, misordered = 0;
    double t0 = now(), c0 = cpu_now(), last_ack = t0;
    while ((long)received + lost < total) {
        if (now() - t0 > timeout_s) {
            fprintf(stderr, "udp_load: %s: not done after %.0f s (sent %ld, received %llu, lost %ld)\n", impl,
                    timeout_s, sent, (unsigned long long)received, lost);
            return 3;
        }
        long inflight = sent - (long)received - lost;
        while (inflight < window && sent < total) {
            long room = window - inflight, left = total - sent;
            int k = BURST;
            if (room < k)
                k = (int)room;
            if (left < k)
                k = (int)left;
            for (int i = 0; i < k; i++) {
                uint32_t seq = (uint32_t)(sent + i);
                memcpy(bufs[i], &seq, sizeof seq);
                bufs[i][4] = i == k - 1 ? UDP_FLAG_ACK : 0;
            }
            int r = sendmmsg(fd, msgs, (unsigned)k, 0);
            if (r < 0) {
                if (errno == EINTR || errno == ENOBUFS || errno == EAGAIN)
                    continue;
                die("sendmmsg");
            }
            sent += r; /* r < k: the flagged tail waits; a later burst's flag covers these */
            inflight += r;
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, ack_wait_ms);
        if (pr < 0 && errno != EINTR)
            die("poll");
        if (pr > 0) {
            unsigned char ack[UDP_ACK];
            ssize_t n;
            while ((n = recv(fd, ack, sizeof ack, MSG_DONTWAIT)) == UDP_ACK) {
                uint64_t got, mis;
                memcpy(&got, ack, 8);
                memcpy(&mis, ack + 8, 8);
                if (got > received)
                    received = got;
                misordered = mis;
                last_ack = now();
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                die("recv (is the receiver running?)");
        } else if (now() - last_ack > ack_wait_ms / 1000.0) {
            lost = sent - (long)received; /* whatever the window held is gone */
            last_ack = now();
        }
    }
    double wall = now() - t0, cpu = cpu_now() - c0;
    if ((long)received > total)
        received = (uint64_t)total;
    printf("RESULT impl=%s workload=%s n=%ld size=%ld per_s=%.0f received=%llu lost=%ld misordered=%llu wall_s=%.4f "
           "lg_cpu_s=%.3f\n",
           impl, workload, total, size, (double)received / wall, (unsigned long long)received, total - (long)received,
           (unsigned long long)misordered, wall, cpu);
    fflush(stdout);
    close(fd);
    return (total - (long)received) * 100 > total ? 4 : 0;
}
