/* SPDX-License-Identifier: MIT */
/*
 * net_floor.c — the kernel's floor under W4: W4's ping-pong (one process,
 * one loopback TCP connection, 64-byte messages, TCP_NODELAY) with no event
 * loop at all, in four shapes, to measure what the system calls cost by
 * themselves (user and kernel CPU apart). No loop can spend less kernel time
 * per round trip than the shape it makes, so these bound what any
 * user-space saving in libloop (or a rival) can gain. bench/README.md
 * ("What a user-space saving can gain") has the figures.
 *
 *   net_floor epoll N    epoll_wait + read + write per side: 6 system calls
 *                        a round trip, the shape of libev, libuv and libloop
 *   net_floor nopoll N   read + write per side, no poll (4 a round trip): the
 *                        floor of a program that knows which socket is ready
 *   net_floor uring N    io_uring: a recv posted on each socket; each
 *                        io_uring_enter submits the send and the next recv the
 *                        last completion asked for and waits for one (2 a
 *                        round trip)
 *   net_floor uring-defer N   the same with IORING_SETUP_SINGLE_ISSUER |
 *                        IORING_SETUP_DEFER_TASKRUN (Linux 6.1+)
 *
 * Result line: RESULT impl=floor-<shape> workload=W4 n=N us_per_rt=<x>
 * user_us_per_rt=<x> sys_us_per_rt=<x> syscalls_per_rt=<x>.
 * Build: gcc -O2 -Iinclude bench/net_floor.c -o build/bench/net_floor
 * (Linux only; io_uring through its system calls, no liburing).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MSG 64

static void die(const char *what) {
    fprintf(stderr, "net_floor: %s: %s\n", what, strerror(errno));
    exit(2);
}

/* A connected pair over 127.0.0.1: *cli and *srv, TCP_NODELAY both. */
static void connect_pair(int *cli, int *srv) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &alen) != 0)
        die("listen");
    *cli = socket(AF_INET, SOCK_STREAM, 0);
    if (*cli < 0 || connect(*cli, (struct sockaddr *)&a, sizeof a) != 0)
        die("connect");
    if ((*srv = accept(l, NULL, NULL)) < 0)
        die("accept");
    close(l);
    setsockopt(*cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(*srv, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static char msg[MSG], rbuf_cli[65536], rbuf_srv[65536];

/* epoll (poll = 1) or nopoll (poll = 0): level-triggered readiness, one
 * read and one write per ready socket; the server echoes what it read, the
 * client sends the next message once a whole echo has arrived. Returns the
 * system calls made. */
static long run_epoll(long n, int poll, int cli, int srv) {
    long calls = 0, done = 0;
    size_t got = 0;
    int turn_srv = 1;
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    if (ep < 0)
        die("epoll_create1");
    fcntl(cli, F_SETFL, O_NONBLOCK);
    fcntl(srv, F_SETFL, O_NONBLOCK);
    ev.data.fd = cli;
    epoll_ctl(ep, EPOLL_CTL_ADD, cli, &ev);
    ev.data.fd = srv;
    epoll_ctl(ep, EPOLL_CTL_ADD, srv, &ev);
    if (write(cli, msg, MSG) != MSG)
        die("write");
    while (done < n) {
        int fd;
        if (poll) {
            struct epoll_event evs[64];
            calls++;
            if (epoll_wait(ep, evs, 64, 1000) < 1)
                die("epoll_wait (nothing ready)");
            fd = evs[0].data.fd;
        } else {
            fd = turn_srv ? srv : cli; /* the socket the last write made ready */
        }
        calls++;
        ssize_t r = read(fd, fd == srv ? rbuf_srv : rbuf_cli, 65536);
        if (r <= 0) {
            if (r < 0 && errno == EAGAIN)
                continue;
            die("read");
        }
        if (fd == srv) {
            calls++;
            if (write(srv, rbuf_srv, (size_t)r) != r)
                die("write");
            turn_srv = 0;
            continue;
        }
        got += (size_t)r;
        if (got < MSG)
            continue;
        got = 0;
        if (++done < n) {
            calls++;
            if (write(cli, msg, MSG) != MSG)
                die("write");
        }
        turn_srv = 1;
    }
    close(ep);
    return calls;
}

/* ---- io_uring through its system calls ---- */

typedef struct ring {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    unsigned tail, queued;
    void *sq_map, *cq_map; /* the mappings, unmapped by ring_free */
    size_t sq_len, cq_len, sqes_len;
} ring;

static void ring_init(ring *r, unsigned flags) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = flags;
    r->fd = (int)syscall(__NR_io_uring_setup, 64, &p);
    if (r->fd < 0)
        die("io_uring_setup");
    r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    r->sq_map = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    r->cq_map = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
    r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    if (r->sq_map == MAP_FAILED || r->cq_map == MAP_FAILED || r->sqes == MAP_FAILED)
        die("mmap (io_uring)");
    char *sq = r->sq_map, *cq = r->cq_map;
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    r->tail = *r->sq_tail;
    r->queued = 0;
}

static void ring_free(ring *r) {
    munmap(r->sq_map, r->sq_len);
    munmap(r->cq_map, r->cq_len);
    munmap(r->sqes, r->sqes_len);
    close(r->fd);
}

/* Queue one operation (at most 4 wait between two enters: the ring has 64). */
static void ring_prep(ring *r, int op, int fd, void *buf, unsigned len, unsigned long long tag) {
    unsigned i = r->tail++ & *r->sq_mask;
    struct io_uring_sqe *s = &r->sqes[i];
    memset(s, 0, sizeof *s);
    s->opcode = (unsigned char)op;
    s->fd = fd;
    s->addr = (unsigned long long)(uintptr_t)buf;
    s->len = len;
    s->user_data = tag;
    r->sq_array[i] = i;
    r->queued++;
}

enum { TAG_RECV_SRV = 1, TAG_RECV_CLI, TAG_SEND };

static long run_uring(long n, unsigned flags, int cli, int srv) {
    ring r;
    long calls = 0, done = 0;
    size_t got = 0;
    ring_init(&r, flags);
    ring_prep(&r, IORING_OP_RECV, srv, rbuf_srv, sizeof rbuf_srv, TAG_RECV_SRV);
    ring_prep(&r, IORING_OP_RECV, cli, rbuf_cli, sizeof rbuf_cli, TAG_RECV_CLI);
    ring_prep(&r, IORING_OP_SEND, cli, msg, MSG, TAG_SEND);
    while (done < n) {
        __atomic_store_n(r.sq_tail, r.tail, __ATOMIC_RELEASE);
        calls++;
        if (syscall(__NR_io_uring_enter, r.fd, r.queued, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
            die("io_uring_enter");
        r.queued = 0;
        unsigned h = *r.cq_head, t = __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE);
        for (; h != t; h++) {
            const struct io_uring_cqe *e = &r.cqes[h & *r.cq_mask];
            if (e->res < 0 || (e->res == 0 && e->user_data != TAG_SEND)) {
                errno = e->res < 0 ? -e->res : ECONNRESET;
                die(e->user_data == TAG_SEND ? "send (io_uring)" : "recv (io_uring)");
            }
            if (e->user_data == TAG_RECV_SRV) {
                ring_prep(&r, IORING_OP_SEND, srv, rbuf_srv, (unsigned)e->res, TAG_SEND);
                ring_prep(&r, IORING_OP_RECV, srv, rbuf_srv, sizeof rbuf_srv, TAG_RECV_SRV);
            } else if (e->user_data == TAG_RECV_CLI) {
                ring_prep(&r, IORING_OP_RECV, cli, rbuf_cli, sizeof rbuf_cli, TAG_RECV_CLI);
                got += (size_t)e->res;
                if (got >= MSG) {
                    got = 0;
                    if (++done < n)
                        ring_prep(&r, IORING_OP_SEND, cli, msg, MSG, TAG_SEND);
                }
            }
        }
        __atomic_store_n(r.cq_head, h, __ATOMIC_RELEASE);
    }
    ring_free(&r);
    return calls;
}

static double seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

int main(int argc, char **argv) {
    long n = argc > 2 ? atol(argv[2]) : 0;
    if (argc < 3 || n < 1) {
        fprintf(stderr, "usage: %s epoll|nopoll|uring|uring-defer N\n", argv[0]);
        return 2;
    }
    const char *shape = argv[1];
    int cli, srv;
    connect_pair(&cli, &srv);
    memset(msg, 'a', sizeof msg);
    struct rusage r0, r1;
    struct timespec t0, t1;
    getrusage(RUSAGE_SELF, &r0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long calls;
    if (strcmp(shape, "epoll") == 0)
        calls = run_epoll(n, 1, cli, srv);
    else if (strcmp(shape, "nopoll") == 0)
        calls = run_epoll(n, 0, cli, srv);
    else if (strcmp(shape, "uring") == 0)
        calls = run_uring(n, 0, cli, srv);
    else if (strcmp(shape, "uring-defer") == 0)
        calls = run_uring(n, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, cli, srv);
    else {
        fprintf(stderr, "net_floor: unknown shape '%s' (epoll, nopoll, uring, uring-defer)\n", shape);
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &r1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    double user = seconds(r1.ru_utime) - seconds(r0.ru_utime), sys = seconds(r1.ru_stime) - seconds(r0.ru_stime);
    printf("RESULT impl=floor-%s workload=W4 n=%ld us_per_rt=%.3f user_us_per_rt=%.3f sys_us_per_rt=%.3f "
           "syscalls_per_rt=%.2f\n",
           shape, n, wall * 1e6 / (double)n, user * 1e6 / (double)n, sys * 1e6 / (double)n, (double)calls / (double)n);
    return 0;
}
