/* SPDX-License-Identifier: MIT */
/*
 * net_uv.c — the libuv rival for the network workloads W4 (ping-pong in one
 * loop) and the echo server of W5 and W10 (driven by bench/loadgen.c).
 * Modes: see bench/net_common.h.
 *
 * Server: uv_tcp_bind(127.0.0.1:PORT) + uv_listen(NET_BACKLOG); each
 *    connection is one malloc'd uv_tcp_t (its only state), uv_tcp_nodelay,
 *    uv_read_start with an alloc_cb that hands out ONE static 64 KiB buffer
 *    (reads are consumed before the next one). The echo is libuv's cheapest
 *    idiom: uv_try_write of the bytes read; whatever the kernel did not take
 *    is copied into a malloc'd block and queued with uv_write (freed in its
 *    callback) — the same semantics as ll_transport_write. EOF or an error:
 *    uv_close and free. A uv_timer of MAX_S stops the loop.
 * W4: the same server plus a uv_tcp_connect client in the same loop; its
 *    connect callback starts the clock and writes W4_MSG bytes, each
 *    complete echo writes the next (uv_try_write, uv_write fallback on a
 *    static message); after N the loop is stopped. A uv_timer watchdog
 *    exits with status 3 after W4_TIMEOUT_S.
 */
#include "net_common.h"
#include <uv.h>

static const char *IMPL = "libuv";
static uv_loop_t loop;
static uv_tcp_t listener;
static char rbuf[NET_RBUF];

static void die_uv(const char *what, int rc) {
    fprintf(stderr, "%s: %s failed: %s\n", IMPL, what, uv_strerror(rc));
    exit(2);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)h;
    (void)suggested;
    *buf = uv_buf_init(rbuf, sizeof rbuf);
}

static void free_handle(uv_handle_t *h) { free(h); }

typedef struct wreq {
    uv_write_t req;
    char data[]; /* the bytes uv_try_write left over */
} wreq;

static void write_cb(uv_write_t *req, int status) {
    (void)status; /* an error also shows up in the next read */
    free(req);
}

/* Write len bytes of data (which may be reused after the call): what the
 * kernel takes now goes at once, the rest is copied and queued. */
static void send_bytes(uv_stream_t *s, const char *data, size_t len) {
    uv_buf_t b = uv_buf_init((char *)data, (unsigned)len);
    int n = uv_try_write(s, &b, 1);
    if (n == (int)len)
        return;
    if (n < 0 && n != UV_EAGAIN) {
        if (!uv_is_closing((uv_handle_t *)s))
            uv_close((uv_handle_t *)s, free_handle);
        return;
    }
    size_t done = n > 0 ? (size_t)n : 0;
    wreq *w = malloc(sizeof *w + (len - done));
    if (w == NULL) {
        fprintf(stderr, "%s: out of memory\n", IMPL);
        exit(2);
    }
    memcpy(w->data, data + done, len - done);
    b = uv_buf_init(w->data, (unsigned)(len - done));
    int rc = uv_write(&w->req, s, &b, 1, write_cb);
    if (rc != 0) {
        free(w);
        if (!uv_is_closing((uv_handle_t *)s))
            uv_close((uv_handle_t *)s, free_handle);
    }
}

static void echo_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    if (nread > 0) {
        send_bytes(s, buf->base, (size_t)nread);
    } else if (nread < 0) {
        if (!uv_is_closing((uv_handle_t *)s))
            uv_close((uv_handle_t *)s, free_handle);
    }
}

static void on_connection(uv_stream_t *server, int status) {
    if (status < 0) {
        fprintf(stderr, "%s server: connection error: %s\n", IMPL, uv_strerror(status));
        return;
    }
    uv_tcp_t *c = malloc(sizeof *c);
    if (c == NULL) {
        fprintf(stderr, "%s: out of memory\n", IMPL);
        exit(2);
    }
    uv_tcp_init(&loop, c);
    c->data = NULL;
    if (uv_accept(server, (uv_stream_t *)c) != 0) {
        uv_close((uv_handle_t *)c, free_handle);
        return;
    }
    uv_tcp_nodelay(c, 1);
    uv_read_start((uv_stream_t *)c, alloc_cb, echo_read);
}

static void stop_cb(uv_timer_t *t) {
    (void)t;
    fprintf(stderr, "%s server: lifetime limit reached, stopping\n", IMPL);
    uv_stop(&loop);
}

static void watchdog_cb(uv_timer_t *t) {
    (void)t;
    fprintf(stderr, "%s W4: watchdog: not finished after %.0f s\n", IMPL, W4_TIMEOUT_S);
    exit(3);
}

/* ---- W4 client ---- */

static long w4_n, w4_done;
static bench_mark w4_t0, w4_t1;
static uv_tcp_t client;
static uv_connect_t connect_req;

static void client_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    if (nread < 0) {
        if (w4_done < w4_n) {
            fprintf(stderr, "%s W4: client connection lost after %ld round trips (%s)\n", IMPL, w4_done,
                    uv_strerror((int)nread));
            exit(2);
        }
        return;
    }
    if (nread == 0 || !w4_feed(IMPL, buf->base, (size_t)nread))
        return;
    if (++w4_done == w4_n) {
        w4_t1 = bench_mark_now();
        uv_stop(&loop);
        return;
    }
    send_bytes(s, (const char *)w4_msg, W4_MSG);
}

static void on_connect(uv_connect_t *req, int status) {
    if (status != 0)
        die_uv("uv_tcp_connect", status);
    uv_tcp_nodelay(&client, 1);
    uv_read_start(req->handle, alloc_cb, client_read);
    w4_t0 = bench_mark_now();
    send_bytes(req->handle, (const char *)w4_msg, W4_MSG);
}

static void close_noop(uv_handle_t *h) { (void)h; }

static void close_walk(uv_handle_t *h, void *arg) {
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, h == (uv_handle_t *)&client || h == (uv_handle_t *)&listener || h->data == &loop
                        ? close_noop
                        : free_handle);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("%s\n", uv_version_string());
        return 0;
    }
    long n = 0;
    int port = 0;
    double max_s = 0;
    int mode = net_args(argc, argv, &n, &port, &max_s);
    int rc;
    struct sockaddr_in addr;
    if ((rc = uv_loop_init(&loop)) != 0)
        die_uv("uv_loop_init", rc);
    uv_tcp_init(&loop, &listener);
    uv_ip4_addr(NET_HOST, mode == 4 ? 0 : port, &addr);
    if ((rc = uv_tcp_bind(&listener, (const struct sockaddr *)&addr, 0)) != 0)
        die_uv("uv_tcp_bind", rc);
    if ((rc = uv_listen((uv_stream_t *)&listener, NET_BACKLOG, on_connection)) != 0)
        die_uv("uv_listen", rc);
    int alen = sizeof addr;
    uv_tcp_getsockname(&listener, (struct sockaddr *)&addr, &alen);
    port = ntohs(addr.sin_port);

    uv_timer_t timer; /* server: lifetime; W4: watchdog */
    uv_timer_init(&loop, &timer);
    timer.data = &loop; /* marks a static handle for close_walk */
    uv_unref((uv_handle_t *)&timer);

    if (mode == 1) {
        uv_timer_start(&timer, stop_cb, (uint64_t)(max_s * 1000), 0);
        net_print_port(port);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_walk(&loop, close_walk, NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        return 0;
    }

    /* W4 */
    w4_msg_init();
    w4_n = n;
    uv_timer_start(&timer, watchdog_cb, (uint64_t)(W4_TIMEOUT_S * 1000), 0);
    uv_tcp_init(&loop, &client);
    uv_ip4_addr(NET_HOST, port, &addr);
    if ((rc = uv_tcp_connect(&connect_req, &client, (const struct sockaddr *)&addr, on_connect)) != 0)
        die_uv("uv_tcp_connect", rc);
    uv_run(&loop, UV_RUN_DEFAULT);
    bench_check(w4_done == n, IMPL, "W4", "round trip count");
    w4_report(IMPL, n, w4_t0, w4_t1);
    uv_walk(&loop, close_walk, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    bench_check(uv_loop_close(&loop) == 0, IMPL, "W4", "uv_loop_close");
    return 0;
}
