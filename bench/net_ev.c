/* SPDX-License-Identifier: MIT */
/*
 * net_ev.c — the libev rival for the network workloads W4 (ping-pong in one
 * loop) and the echo server of W5 and W10 (driven by bench/loadgen.c).
 * Modes: see bench/net_common.h. The loop is ev_loop_new(EVBACKEND_EPOLL).
 *
 * libev watches fds; the socket calls are the host's. Server: a
 * non-blocking socket bound to 127.0.0.1:PORT, listen(NET_BACKLOG), an
 * ev_io on it that accept4()s until EAGAIN. Each connection is one malloc'd
 * struct: its ev_io plus a pointer to a pending-output block (NULL almost
 * always), TCP_NODELAY. Read: read() into ONE static 64 KiB buffer until
 * EAGAIN (at most 16 reads per wakeup, for fairness between connections),
 * write() the bytes back at once; whatever the kernel does not take is
 * copied to a malloc'd block, reading stops and the watcher switches to
 * EV_WRITE until it is flushed (the same semantics as ll_transport_write,
 * with back-pressure). EOF or an error: ev_io_stop, close, free. An
 * ev_timer of MAX_S breaks the loop.
 * W4: the same server plus a client socket connect()ed in the same loop;
 *    when the connection is writable the clock starts and W4_MSG bytes are
 *    written; each complete echo writes the next; after N, ev_break. An
 *    ev_timer watchdog exits with status 3 after W4_TIMEOUT_S.
 */
#include "net_common.h"
#include <ev.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static const char *IMPL = "libev";
static struct ev_loop *loop;
static char rbuf[NET_RBUF];

typedef struct pending {
    size_t len, off;
    char data[];
} pending;

typedef struct conn {
    ev_io io;
    pending *out;
    int is_client; /* W4's client */
} conn;

static void die_errno(const char *what) {
    fprintf(stderr, "%s: %s failed: %s\n", IMPL, what, strerror(errno));
    exit(2);
}

static void conn_close(conn *c) {
    ev_io_stop(loop, &c->io);
    close(c->io.fd);
    free(c->out);
    free(c);
}

static void conn_io(struct ev_loop *l, ev_io *w, int revents);

/* Write len bytes (data may be reused after the call); the rest is kept
 * and the watcher waits for EV_WRITE. Returns -1 if the connection was
 * closed. */
static int conn_send(conn *c, const char *data, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(c->io.fd, data + done, len - done);
        if (k > 0) {
            done += (size_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            conn_close(c);
            return -1;
        }
    }
    if (done == len)
        return 0;
    pending *p = malloc(sizeof *p + (len - done));
    if (p == NULL) {
        fprintf(stderr, "%s: out of memory\n", IMPL);
        exit(2);
    }
    p->len = len - done;
    p->off = 0;
    memcpy(p->data, data + done, p->len);
    c->out = p;
    ev_io_stop(loop, &c->io);
    ev_io_set(&c->io, c->io.fd, EV_WRITE); /* stop reading until it drains */
    ev_io_start(loop, &c->io);
    return 0;
}

static void flush_out(conn *c) {
    pending *p = c->out;
    while (p->off < p->len) {
        ssize_t k = write(c->io.fd, p->data + p->off, p->len - p->off);
        if (k > 0)
            p->off += (size_t)k;
        else if (k < 0 && errno == EINTR)
            continue;
        else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        else {
            conn_close(c);
            return;
        }
    }
    free(p);
    c->out = NULL;
    ev_io_stop(loop, &c->io);
    ev_io_set(&c->io, c->io.fd, EV_READ);
    ev_io_start(loop, &c->io);
}

/* ---- W4 client state ---- */

static long w4_n, w4_done;
static bench_mark w4_t0, w4_t1;
static int w4_started;

static void client_data(conn *c, const char *data, size_t len) {
    if (!w4_feed(IMPL, data, len))
        return;
    if (++w4_done == w4_n) {
        w4_t1 = bench_mark_now();
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    conn_send(c, (const char *)w4_msg, W4_MSG);
}

static void conn_io(struct ev_loop *l, ev_io *w, int revents) {
    (void)l;
    conn *c = (conn *)w;
    if (revents & EV_WRITE) {
        if (c->is_client && !w4_started) { /* connect() finished */
            int err = 0;
            socklen_t el = sizeof err;
            getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &err, &el);
            if (err != 0) {
                errno = err;
                die_errno("connect");
            }
            w4_started = 1;
            ev_io_stop(loop, w);
            ev_io_set(w, w->fd, EV_READ);
            ev_io_start(loop, w);
            w4_t0 = bench_mark_now();
            conn_send(c, (const char *)w4_msg, W4_MSG);
            return;
        }
        flush_out(c);
        return;
    }
    for (int i = 0; i < 16; i++) {
        ssize_t k = read(w->fd, rbuf, sizeof rbuf);
        if (k > 0) {
            if (c->is_client) {
                client_data(c, rbuf, (size_t)k);
                return; /* one message in flight: nothing more to read */
            }
            if (conn_send(c, rbuf, (size_t)k) != 0 || c->out != NULL)
                return;
            if ((size_t)k < sizeof rbuf)
                return; /* drained */
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            if (c->is_client && w4_done < w4_n) {
                fprintf(stderr, "%s W4: client connection lost after %ld round trips\n", IMPL, w4_done);
                exit(2);
            }
            conn_close(c); /* EOF or error */
            return;
        }
    }
}

static void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void accept_cb(struct ev_loop *l, ev_io *w, int revents) {
    (void)l;
    (void)revents;
    for (;;) {
        int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fprintf(stderr, "%s server: accept: %s\n", IMPL, strerror(errno));
            return;
        }
        set_nodelay(fd);
        conn *c = calloc(1, sizeof *c);
        if (c == NULL) {
            fprintf(stderr, "%s: out of memory\n", IMPL);
            exit(2);
        }
        ev_io_init(&c->io, conn_io, fd, EV_READ);
        ev_io_start(loop, &c->io);
    }
}

static void stop_cb(struct ev_loop *l, ev_timer *t, int revents) {
    (void)t;
    (void)revents;
    fprintf(stderr, "%s server: lifetime limit reached, stopping\n", IMPL);
    ev_break(l, EVBREAK_ALL);
}

static void watchdog_cb(struct ev_loop *l, ev_timer *t, int revents) {
    (void)l;
    (void)t;
    (void)revents;
    fprintf(stderr, "%s W4: watchdog: not finished after %.0f s\n", IMPL, W4_TIMEOUT_S);
    exit(3);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%d.%d\n", ev_version_major(), ev_version_minor());
        return 0;
    }
    long n = 0;
    int port = 0;
    double max_s = 0;
    int mode = net_args(argc, argv, &n, &port, &max_s);
    loop = ev_loop_new(EVBACKEND_EPOLL);
    if (loop == NULL)
        die_errno("ev_loop_new");

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (lfd < 0)
        die_errno("socket");
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)(mode == 4 ? 0 : port));
    inet_pton(AF_INET, NET_HOST, &addr.sin_addr);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0)
        die_errno("bind");
    if (listen(lfd, NET_BACKLOG) != 0)
        die_errno("listen");
    socklen_t alen = sizeof addr;
    getsockname(lfd, (struct sockaddr *)&addr, &alen);
    port = ntohs(addr.sin_port);
    ev_io accept_w;
    ev_io_init(&accept_w, accept_cb, lfd, EV_READ);
    ev_io_start(loop, &accept_w);

    ev_timer timer; /* server: lifetime; W4: watchdog */
    if (mode == 1) {
        ev_timer_init(&timer, stop_cb, max_s, 0);
        ev_timer_start(loop, &timer);
        net_print_port(port);
        ev_run(loop, 0);
        ev_loop_destroy(loop);
        return 0;
    }

    /* W4 */
    w4_msg_init();
    w4_n = n;
    ev_timer_init(&timer, watchdog_cb, W4_TIMEOUT_S, 0);
    ev_timer_start(loop, &timer);
    int cfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (cfd < 0)
        die_errno("socket");
    set_nodelay(cfd);
    if (connect(cfd, (struct sockaddr *)&addr, sizeof addr) != 0 && errno != EINPROGRESS)
        die_errno("connect");
    conn *cl = calloc(1, sizeof *cl);
    cl->is_client = 1;
    ev_io_init(&cl->io, conn_io, cfd, EV_WRITE);
    ev_io_start(loop, &cl->io);
    ev_run(loop, 0);
    bench_check(w4_done == n, IMPL, "W4", "round trip count");
    w4_report(IMPL, n, w4_t0, w4_t1);
    ev_timer_stop(loop, &timer);
    conn_close(cl);
    ev_loop_destroy(loop);
    return 0;
}
