/* SPDX-License-Identifier: MIT */
/*
 * bench/net_common.h — shared helpers for the network benchmark programs
 * (net_uv.c, net_ev.c, net_ll.c; workloads W4, W5, W10; bench/loadgen.c is
 * the external client): the common modes, argument parsing, the result line
 * of W4, and the constants every implementation shares.
 *
 * Modes of every net_<impl> program:
 *   net_<impl> w4 [N]                 ping-pong: server and client in one loop on
 *                                     127.0.0.1, N round trips of W4_MSG bytes;
 *                                     prints one RESULT line
 *   net_<impl> server PORT [MAX_S]    echo server on 127.0.0.1:PORT (0 = a free
 *                                     port); prints "PORT <n>" when it listens,
 *                                     then echoes until killed, or until MAX_S
 *                                     seconds have passed (default 600: the loop
 *                                     stops itself, a stray server cannot linger)
 *   net_<impl> version
 *
 * W4 result line (stdout), parsed by bench/run_net.sh / bench/report.py:
 *   RESULT impl=<name> workload=W4 n=<N> per_s=<round trips/s>
 *          us_per_rt=<x> wall_s=<x> cpu_s=<x> user_us_per_rt=<x>
 *          sys_us_per_rt=<x> rss_mib=<x>
 * The measured region starts when the client's connection is made (its first
 * write) and ends when the Nth echo has fully arrived; connection setup and
 * teardown are outside it. cpu_s is user+sys of the whole process;
 * user_us_per_rt and sys_us_per_rt split it per round trip (the kernel's
 * share, the same system calls for every implementation, bounds what any
 * user-space saving can gain: bench/README.md).
 *
 * Every implementation: TCP_NODELAY on both ends (libloop sets it on every
 * TCP transport), listen backlog NET_BACKLOG, only 127.0.0.1, a watchdog
 * (W4_TIMEOUT_S) that exits with status 3 if the workload has not finished.
 */
#ifndef BENCH_NET_COMMON_H
#define BENCH_NET_COMMON_H

#include "common.h"
#include <errno.h>
#include <unistd.h>

#define W4_N 100000       /* round trips */
#define W4_MSG 64         /* bytes per message */
#define W4_TIMEOUT_S 60.0 /* watchdog of one W4 run */
#define NET_BACKLOG 4096  /* = net.core.somaxconn here */
#define NET_HOST "127.0.0.1"
#define NET_SERVER_MAX_S 600.0 /* default lifetime of a server */
#define NET_RBUF 65536         /* read buffer of the C rivals (one, shared) */

/* The W4 message: a fixed pattern, checked byte for byte on the way back. */
static unsigned char w4_msg[W4_MSG];

static inline void w4_msg_init(void) {
    for (int i = 0; i < W4_MSG; i++)
        w4_msg[i] = (unsigned char)('a' + i % 26);
}

/* Client side of W4: feed it the bytes received; returns 1 when a whole
 * echo has arrived (and resets), 0 while one is partial; exits on a wrong
 * byte or an overlong echo (the protocol never has two messages in flight). */
static size_t w4_got;

static inline int w4_feed(const char *impl, const void *data, size_t len) {
    if (w4_got + len > W4_MSG || memcmp(w4_msg + w4_got, data, len) != 0) {
        fprintf(stderr, "%s W4: wrong echo (%zu bytes at offset %zu)\n", impl, len, w4_got);
        exit(2);
    }
    w4_got += len;
    if (w4_got < W4_MSG)
        return 0;
    w4_got = 0;
    return 1;
}

static inline void w4_report(const char *impl, long n, bench_mark start, bench_mark end) {
    double wall = end.wall - start.wall;
    double user = end.user - start.user, sys = end.cpu - start.cpu - user;
    printf("RESULT impl=%s workload=W4 n=%ld per_s=%.0f us_per_rt=%.3f wall_s=%.4f cpu_s=%.4f user_us_per_rt=%.3f "
           "sys_us_per_rt=%.3f rss_mib=%.1f\n",
           impl, n, (double)n / wall, wall * 1e6 / (double)n, wall, end.cpu - start.cpu, user * 1e6 / (double)n,
           sys * 1e6 / (double)n, end.maxrss);
    fflush(stdout);
}

static inline void net_usage(const char *prog) {
    fprintf(stderr, "usage: %s w4 [N] | server PORT [MAX_SECONDS] | version\n", prog);
    exit(2);
}

/* Parse the mode's arguments: *n for w4 (default W4_N), *port and *max_s
 * for server. Returns 4 for w4, 1 for server. */
static inline int net_args(int argc, char **argv, long *n, int *port, double *max_s) {
    if (argc >= 2 && strcmp(argv[1], "w4") == 0) {
        *n = argc > 2 ? atol(argv[2]) : W4_N;
        if (*n < 1) {
            fprintf(stderr, "N must be >= 1\n");
            exit(2);
        }
        return 4;
    }
    if (argc >= 3 && strcmp(argv[1], "server") == 0) {
        *port = atoi(argv[2]);
        *max_s = argc > 3 ? atof(argv[3]) : NET_SERVER_MAX_S;
        if (*port < 0 || *port > 65535 || !(*max_s > 0)) {
            fprintf(stderr, "bad PORT or MAX_SECONDS\n");
            exit(2);
        }
        return 1;
    }
    net_usage(argv[0]);
    return 0;
}

static inline void net_print_port(int port) {
    printf("PORT %d\n", port);
    fflush(stdout);
}

#endif
