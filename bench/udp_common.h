/* SPDX-License-Identifier: MIT */
/*
 * bench/udp_common.h — the receiving side of the UDP workload, shared by
 * bench/udp_{ll,uv,ev}.c so that only the loop differs between them.
 *
 *   udp_<impl> PORT [MAX_S]   receive on 127.0.0.1:PORT (0 = a free port);
 *                             print "PORT <n>" once bound; stop after MAX_S
 *                             seconds (default 600) or when killed
 *   udp_<impl> version
 *
 * The load generator (bench/udp_load.c) sends numbered datagrams in bursts;
 * the last of a burst has UDP_FLAG_ACK set. The receiver counts every
 * datagram, checks the numbers only rise (loopback keeps order; a drop is a
 * gap, not a fault), and answers each flagged one with an ack datagram to its
 * sender: the datagrams received so far and the ones out of order. The
 * sender's window of unacknowledged datagrams then paces it to what the
 * receiver takes, so the socket buffer rarely overflows and the rate
 * measured is the receiving loop's.
 *
 * Every receiver asks for a UDP_RCVBUF socket receive buffer (the kernel caps
 * it at net.core.rmem_max, the same for every row).
 */
#ifndef BENCH_UDP_COMMON_H
#define BENCH_UDP_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UDP_HOST "127.0.0.1"
#define UDP_MAX_S 600.0
#define UDP_RCVBUF (4 << 20)
#define UDP_FLAG_ACK 1
#define UDP_HDR 8 /* u32 sequence number, u8 flags, 3 bytes unused */
#define UDP_ACK 16 /* u64 received, u64 out of order */

static uint64_t udp_received, udp_misordered;
static uint32_t udp_next;

/* Count one datagram; return 1 when it asks for an ack, which is then in
 * ack[UDP_ACK]. */
static inline int udp_count(const void *data, size_t len, unsigned char *ack) {
    if (len < UDP_HDR)
        return 0;
    const unsigned char *p = data;
    uint32_t seq;
    memcpy(&seq, p, sizeof seq);
    if (seq < udp_next)
        udp_misordered++;
    udp_next = seq + 1;
    udp_received++;
    if (!(p[4] & UDP_FLAG_ACK))
        return 0;
    memcpy(ack, &udp_received, 8);
    memcpy(ack + 8, &udp_misordered, 8);
    return 1;
}

static inline void udp_args(int argc, char **argv, int *port, double *max_s) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [MAX_SECONDS] | version\n", argv[0]);
        exit(2);
    }
    *port = atoi(argv[1]);
    *max_s = argc > 2 ? atof(argv[2]) : UDP_MAX_S;
    if (*port < 0 || *port > 65535 || !(*max_s > 0)) {
        fprintf(stderr, "bad PORT or MAX_SECONDS\n");
        exit(2);
    }
}

static inline void udp_print_port(int port) {
    printf("PORT %d\n", port);
    fflush(stdout);
}

#endif
