/* SPDX-License-Identifier: MIT */
/*
 * loadgen.c — the external client of the network workloads W5 and W10: one
 * process, one thread, epoll, plain sockets. It drives any echo server on
 * HOST:PORT (the C servers bench/net_{uv,ev,ll}, and later Python servers:
 * it only needs an address), and it refuses any HOST outside 127.0.0.0/8.
 *
 *   loadgen w5 HOST PORT CONNS MSGSIZE TOTAL
 *       W5, echo under load: CONNS connections (connected before the clock
 *       starts), each sends a MSGSIZE-byte message and sends its next one
 *       only when the whole echo has arrived (checked byte for byte), until
 *       TOTAL round trips are done. Prints one line:
 *         RESULT impl=<LOADGEN_IMPL> workload=W5 n=<TOTAL> per_s=<round trips/s>
 *                p50_us=<x> p99_us=<x> mean_us=<x> max_us=<x> wall_s=<x>
 *                conns=<CONNS> msg=<MSGSIZE> lg_cpu_s=<loadgen's own CPU>
 *       Latency = from the message's first write() to the arrival of its
 *       last echoed byte. With CONNS 1 and MSGSIZE 64 this is the ping-pong
 *       with client and server in two processes (bench/run_net.sh's W4-2p,
 *       LOADGEN_WORKLOAD=W4-2p): one common client for every server, so
 *       the client's cost is the same in every row and only the servers
 *       differ.
 *   loadgen w10 HOST PORT CONNS
 *       W10, idle connections: opens CONNS connections (at most 256 being
 *       set up at a time, so the server's backlog never overflows), sends 16
 *       bytes on each and waits for their echo; then prints
 *         READY conns=<CONNS> connect_s=<x>
 *       and holds every connection open and idle until killed or until
 *       LOADGEN_HOLD seconds (default 300) have passed. A connection the
 *       server closes meanwhile is reported on stderr (LOST ...).
 *
 * Environment: LOADGEN_IMPL (the impl= label, default "server"),
 * LOADGEN_WORKLOAD (the workload= label of w5's line, default "W5"),
 * LOADGEN_TIMEOUT (seconds W5 / the W10 setup may take, default 120: then it
 * exits with status 3), LOADGEN_HOLD (W10 hold, default 300 s). The soft fd
 * limit is raised to the hard one; CONNS must fit under it.
 * Exit status: 0 done; 2 a usage, socket or data error; 3 the timeout.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define W10_MSG 16
#define W10_INFLIGHT 256

static const char *label = "server";
static const char *workload = "W5";
static double timeout_s = 120, hold_s = 300;

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
    fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void usage(void) {
    fprintf(stderr, "usage: loadgen w5 HOST PORT CONNS MSGSIZE TOTAL\n"
                    "       loadgen w10 HOST PORT CONNS\n"
                    "  (HOST must be in 127.0.0.0/8)\n");
    exit(2);
}

static struct sockaddr_in target(const char *host, const char *port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    int p = atoi(port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1 || (ntohl(a.sin_addr.s_addr) >> 24) != 127 || p <= 0 ||
        p > 65535) {
        fprintf(stderr, "loadgen: %s:%s is not a loopback IPv4 address and port\n", host, port);
        exit(2);
    }
    a.sin_port = htons((uint16_t)p);
    return a;
}

static void raise_fd_limit(long need) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur < need) {
        fprintf(stderr, "loadgen: %ld connections need %ld fds, the limit is %ld (split them over processes)\n",
                need - 8, need, (long)rl.rlim_cur);
        exit(2);
    }
}

static void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void ep_ctl(int ep, int op, int fd, unsigned events, unsigned idx) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u32 = idx;
    if (epoll_ctl(ep, op, fd, &ev) != 0)
        die("epoll_ctl");
}

/* ---- W5 ---- */

typedef struct w5conn {
    int fd;
    size_t woff, roff;
    double t0;
} w5conn;

static unsigned char *msg;
static size_t msgsize;

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Write what is left of c's message; returns 1 when it is all written. */
static int w5_write(w5conn *c) {
    while (c->woff < msgsize) {
        ssize_t k = write(c->fd, msg + c->woff, msgsize - c->woff);
        if (k > 0)
            c->woff += (size_t)k;
        else if (k < 0 && errno == EINTR)
            continue;
        else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        else
            die("write");
    }
    return 1;
}

static void w5_start(int ep, w5conn *c, unsigned idx) {
    c->woff = c->roff = 0;
    c->t0 = now();
    if (!w5_write(c))
        ep_ctl(ep, EPOLL_CTL_MOD, c->fd, EPOLLIN | EPOLLOUT, idx);
}

static int w5(struct sockaddr_in addr, long conns, long size, long total) {
    if (conns < 1 || size < 1 || total < 1)
        usage();
    raise_fd_limit(conns + 8);
    msgsize = (size_t)size;
    msg = malloc(msgsize);
    unsigned char *rbuf = malloc(msgsize);
    float *lat = malloc((size_t)total * sizeof *lat);
    w5conn *cs = calloc((size_t)conns, sizeof *cs);
    if (!msg || !rbuf || !lat || !cs)
        die("malloc");
    for (size_t i = 0; i < msgsize; i++)
        msg[i] = (unsigned char)(i * 131 + 7);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1");
    for (long i = 0; i < conns; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            die("socket");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
            die("connect");
        set_nodelay(fd);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        cs[i].fd = fd;
        ep_ctl(ep, EPOLL_CTL_ADD, fd, EPOLLIN, (unsigned)i);
    }
    double cpu0 = cpu_now();
    double t_start = now(), deadline = t_start + timeout_s;
    long started = 0, done = 0;
    for (long i = 0; i < conns && started < total; i++, started++)
        w5_start(ep, &cs[i], (unsigned)i);
    struct epoll_event evs[256];
    while (done < total) {
        int ne = epoll_wait(ep, evs, 256, 1000);
        if (ne < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        if (now() > deadline) {
            fprintf(stderr, "loadgen w5: timeout after %.0f s: %ld of %ld round trips done\n", timeout_s, done,
                    total);
            exit(3);
        }
        for (int e = 0; e < ne; e++) {
            unsigned idx = evs[e].data.u32;
            w5conn *c = &cs[idx];
            if (evs[e].events & EPOLLOUT) {
                if (w5_write(c))
                    ep_ctl(ep, EPOLL_CTL_MOD, c->fd, EPOLLIN, idx);
            }
            if (!(evs[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
                continue;
            ssize_t k = read(c->fd, rbuf, msgsize - c->roff);
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                continue;
            if (k <= 0) {
                fprintf(stderr, "loadgen w5: connection %u %s after %ld round trips\n", idx,
                        k == 0 ? "closed by the server" : strerror(errno), done);
                exit(2);
            }
            if (c->roff + (size_t)k > c->woff || memcmp(rbuf, msg + c->roff, (size_t)k) != 0) {
                fprintf(stderr, "loadgen w5: connection %u: wrong echo (%zd bytes at offset %zu)\n", idx, k,
                        c->roff);
                exit(2);
            }
            c->roff += (size_t)k;
            if (c->roff < msgsize)
                continue;
            lat[done++] = (float)((now() - c->t0) * 1e6);
            if (started < total) {
                started++;
                w5_start(ep, c, idx);
            }
        }
    }
    double wall = now() - t_start;
    double lg_cpu = cpu_now() - cpu0;
    double sum = 0;
    for (long i = 0; i < total; i++)
        sum += lat[i];
    qsort(lat, (size_t)total, sizeof *lat, cmp_float);
    printf("RESULT impl=%s workload=%s n=%ld per_s=%.0f us_per_rt=%.3f p50_us=%.1f p99_us=%.1f mean_us=%.1f "
           "max_us=%.1f wall_s=%.4f conns=%ld msg=%ld lg_cpu_s=%.4f\n",
           label, workload, total, (double)total / wall, wall * 1e6 / (double)total, lat[total / 2],
           lat[(total * 99) / 100], sum / (double)total, lat[total - 1], wall, conns, size, lg_cpu);
    fflush(stdout);
    for (long i = 0; i < conns; i++)
        close(cs[i].fd);
    return 0;
}

/* ---- W10 ---- */

enum { C_NONE, C_CONNECTING, C_WAITING, C_HELD, C_LOST };

typedef struct w10conn {
    int fd;
    unsigned char state;
    unsigned char got;
} w10conn;

static int w10(struct sockaddr_in addr, long conns) {
    if (conns < 1)
        usage();
    raise_fd_limit(conns + 8);
    static const char m16[W10_MSG] = "0123456789abcdef";
    w10conn *cs = calloc((size_t)conns, sizeof *cs);
    if (!cs)
        die("calloc");
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1");
    double t_start = now(), deadline = t_start + timeout_s;
    long opened = 0, inflight = 0, held = 0, lost = 0;
    struct epoll_event evs[256];
    char buf[64];
    while (held < conns) {
        while (inflight < W10_INFLIGHT && opened < conns) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0)
                die("socket");
            set_nodelay(fd);
            if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 && errno != EINPROGRESS)
                die("connect");
            cs[opened].fd = fd;
            cs[opened].state = C_CONNECTING;
            ep_ctl(ep, EPOLL_CTL_ADD, fd, EPOLLOUT, (unsigned)opened);
            opened++;
            inflight++;
        }
        int ne = epoll_wait(ep, evs, 256, 1000);
        if (ne < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        if (now() > deadline) {
            fprintf(stderr, "loadgen w10: timeout after %.0f s: %ld of %ld connections echoed (%ld opened)\n",
                    timeout_s, held, conns, opened);
            exit(3);
        }
        for (int e = 0; e < ne; e++) {
            unsigned idx = evs[e].data.u32;
            w10conn *c = &cs[idx];
            if (c->state == C_CONNECTING) {
                int err = 0;
                socklen_t el = sizeof err;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (err != 0) {
                    errno = err;
                    die("connect (w10)");
                }
                if (write(c->fd, m16, W10_MSG) != W10_MSG) /* an empty new socket takes 16 bytes */
                    die("write (w10)");
                c->state = C_WAITING;
                ep_ctl(ep, EPOLL_CTL_MOD, c->fd, EPOLLIN, idx);
                continue;
            }
            ssize_t k = read(c->fd, buf, sizeof buf);
            if (k < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (k <= 0 || c->state != C_WAITING || c->got + k > W10_MSG ||
                memcmp(buf, m16 + c->got, (size_t)k) != 0) {
                fprintf(stderr, "loadgen w10: connection %u: %s during setup\n", idx,
                        k == 0 ? "closed by the server" : k < 0 ? strerror(errno) : "wrong echo");
                exit(2);
            }
            c->got += (unsigned char)k;
            if (c->got == W10_MSG) {
                c->state = C_HELD;
                held++;
                inflight--;
            }
        }
    }
    printf("READY conns=%ld connect_s=%.3f\n", conns, now() - t_start);
    fflush(stdout);
    /* Hold: nothing should happen on any connection. */
    double hold_end = now() + hold_s;
    while (now() < hold_end) {
        int ne = epoll_wait(ep, evs, 256, 1000);
        if (ne < 0 && errno != EINTR)
            die("epoll_wait");
        for (int e = 0; e < ne; e++) {
            w10conn *c = &cs[evs[e].data.u32];
            ssize_t k = read(c->fd, buf, sizeof buf);
            if (k < 0 && errno == EAGAIN)
                continue;
            if (c->state == C_HELD && lost++ < 5)
                fprintf(stderr, "LOST connection %u during the hold (%s)\n", evs[e].data.u32,
                        k == 0 ? "closed by the server" : k < 0 ? strerror(errno) : "unexpected data");
            c->state = C_LOST;
            epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        }
    }
    if (lost)
        fprintf(stderr, "loadgen w10: %ld connections lost during the hold\n", lost);
    return lost ? 2 : 0;
}

int main(int argc, char **argv) {
    const char *v;
    if ((v = getenv("LOADGEN_IMPL")) && *v)
        label = v;
    if ((v = getenv("LOADGEN_WORKLOAD")) && *v)
        workload = v;
    if ((v = getenv("LOADGEN_TIMEOUT")) && atof(v) > 0)
        timeout_s = atof(v);
    if ((v = getenv("LOADGEN_HOLD")) && atof(v) > 0)
        hold_s = atof(v);
    if (argc == 7 && strcmp(argv[1], "w5") == 0)
        return w5(target(argv[2], argv[3]), atol(argv[4]), atol(argv[5]), atol(argv[6]));
    if (argc == 5 && strcmp(argv[1], "w10") == 0)
        return w10(target(argv[2], argv[3]), atol(argv[4]));
    usage();
    return 2;
}
