/* SPDX-License-Identifier: MIT */
/* The network fault campaign (issue 13): peers that misbehave, and the
 * proof that nothing is lost for them or for anyone else.
 *  - a peer resets (SO_LINGER 0) while the server writes megabytes to it;
 *  - peers vanish mid-handshake (reset before accept) and mid-read (half a
 *    request, then a reset) while a bystander's echo goes on intact;
 *  - slowloris: peers dripping one byte per interval while 1,000 other
 *    connections are each served an echo;
 *  - a peer that never reads: the write buffer stops at the high-water
 *    mark (LL_PAUSE_WRITING), then the peer drains it, LL_RESUME_WRITING
 *    comes, and every byte arrives in order;
 *  - a peer that half-closes and keeps reading a large answer;
 *  - 10,000 connect/close cycles with the fd count flat.
 * (EMFILE on accept is test_tcp_faults.c's.) LIBLOOP_LONG_TESTS=1 runs the
 * long variants: 1 byte a second for 30 s, 100,000 cycles. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

static int long_mode;

/* A blocking socket connected to 127.0.0.1:port (the test plays the peer). */
static int raw_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void reset_close(int fd) {
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

static void fill_pattern(unsigned char *buf, size_t n, size_t offset) {
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)((offset + i) * 131 + 7);
}

/* A bystander: an echo round trip through the server, checked byte for byte. */
static void check_bystander_echo(ll_loop loop, struct conn *by) {
    size_t before = by->nbytes;
    uint32_t h = fnv(by->hash, "still-served", 12);
    CHECK_EQ_INT(ll_transport_write(by->t, "still-served", 12), 0);
    RUN_UNTIL(loop, by->nbytes == before + 12, 5.0);
    CHECK_EQ_INT(by->hash, h);
    CHECK_EQ_INT(by->nlost, 0);
}

/* ---- reset mid-write ---- */

static int big_writer_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    if (ev->kind == LL_DATA_RECEIVED && c->user == NULL) {
        /* the request: answer with 8 MiB (far more than the socket holds) */
        static unsigned char chunk[65536];
        fill_pattern(chunk, sizeof chunk, 0);
        c->user = c;
        for (int i = 0; i < 128; i++)
            if (ll_transport_write(ev->transport, chunk, sizeof chunk) != 0)
                break;
    }
    return 0;
}

static void test_reset_mid_write(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server s;
    server_init(&s, 4);
    s.tmpl.hook = big_writer_hook;
    server_listen(&s, loop, 16);
    struct conn by;
    conn_init(&by);
    /* the bystander echoes through a second server */
    struct server echo;
    server_init(&echo, 2);
    echo.tmpl.echo = 1;
    server_listen(&echo, loop, 16);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", echo.port, &by), 0);

    int peer = raw_connect(s.port);
    CHECK(peer >= 0);
    CHECK_EQ_INT(write(peer, "GET", 3), 3);
    RUN_UNTIL(loop, s.n == 1 && s.conns[0].user != NULL, 5.0);
    size_t buffered = 0;
    ll_transport_get_write_buffer_size(s.conns[0].t, &buffered);
    CHECK(buffered > 1 << 20); /* the server is mid-write */
    char junk[4096];
    CHECK(read(peer, junk, sizeof junk) > 0); /* read a little, then reset */
    reset_close(peer);
    RUN_UNTIL(loop, s.conns[0].nlost == 1, 5.0);
    CHECK(s.conns[0].lost_code == -ECONNRESET || s.conns[0].lost_code == -EPIPE);
    CHECK_EQ_INT(s.conns[0].bad_order, 0);
    spin(loop, 3);
    CHECK_EQ_INT(s.conns[0].nlost, 1); /* once */
    check_bystander_echo(loop, &by);
    ll_transport_close(by.t);
    RUN_UNTIL(loop, by.nlost == 1, 5.0);
    server_free(&s, loop);
    server_free(&echo, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* ---- vanish mid-handshake and mid-read ---- */

static void test_vanish_mid_handshake_and_read(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server s;
    server_init(&s, 64);
    s.tmpl.echo = 1;
    server_listen(&s, loop, 64);
    struct conn by;
    conn_init(&by);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", s.port, &by), 0);
    RUN_UNTIL(loop, s.n == 1, 5.0);
    /* 20 peers reset before the server has accepted them */
    for (int i = 0; i < 20; i++) {
        int fd = raw_connect(s.port);
        CHECK(fd >= 0);
        reset_close(fd);
    }
    /* 20 peers send half a request and reset while it is being read */
    for (int i = 0; i < 20; i++) {
        int fd = raw_connect(s.port);
        CHECK(fd >= 0);
        CHECK_EQ_INT(write(fd, "HALF-A-REQ", 10), 10);
        reset_close(fd);
    }
    /* every one of them ends (MADE then LOST, or never surfaces), and none
     * is left open */
    double dl = now_s() + 10;
    int open = 1;
    while (open && now_s() < dl) {
        tick(loop);
        open = 0;
        for (int i = 1; i < s.n; i++)
            open += s.conns[i].nlost == 0;
    }
    CHECK_EQ_INT(open, 0);
    for (int i = 1; i < s.n; i++) {
        CHECK_EQ_INT(s.conns[i].bad_order, 0);
        CHECK_EQ_INT(s.conns[i].nlost, 1);
        CHECK(s.conns[i].lost_code == 0 || s.conns[i].lost_code == -ECONNRESET || s.conns[i].lost_code == -EPIPE);
    }
    check_bystander_echo(loop, &by);
    /* the server still accepts */
    struct conn late;
    conn_init(&late);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", s.port, &late), 0);
    check_bystander_echo(loop, &late);
    ll_transport_close(by.t);
    ll_transport_close(late.t);
    RUN_UNTIL(loop, by.nlost == 1 && late.nlost == 1, 5.0);
    server_free(&s, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    ll_release(loop);
}

/* ---- slowloris while 1,000 others are served ---- */

#define SLOW_PEERS 8
struct drip {
    int fds[SLOW_PEERS];
    int nbytes;        /* bytes each peer sends */
    int interval_ms;
    int sent;          /* atomic: bytes sent by each, so far */
};

static void *drip_main(void *arg) {
    struct drip *d = arg;
    for (int b = 0; b < d->nbytes; b++) {
        usleep((useconds_t)d->interval_ms * 1000);
        for (int i = 0; i < SLOW_PEERS; i++) {
            char c = (char)('a' + b % 26);
            if (write(d->fds[i], &c, 1) != 1)
                return NULL;
        }
        __atomic_store_n(&d->sent, b + 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void test_slowloris_while_1000_served(void) {
    enum { N = 1000 };
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server s;
    server_init(&s, N + SLOW_PEERS + 4);
    s.tmpl.echo = 1;
    server_listen(&s, loop, 1024);
    struct drip d = {.nbytes = long_mode ? 30 : 4, .interval_ms = long_mode ? 1000 : 500};
    for (int i = 0; i < SLOW_PEERS; i++) {
        d.fds[i] = raw_connect(s.port);
        CHECK(d.fds[i] >= 0);
    }
    RUN_UNTIL(loop, s.n == SLOW_PEERS, 5.0);
    pthread_t th;
    pthread_create(&th, NULL, drip_main, &d);
    /* 1,000 clients connect and each gets one 64-byte echo back */
    struct conn *cl = calloc(N, sizeof *cl);
    ll_future *futs = calloc(N, sizeof *futs);
    double t0 = now_s();
    for (int i = 0; i < N; i++) {
        conn_init(&cl[i]);
        CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", s.port, conn_proto, &cl[i], &futs[i]), 0);
    }
    int made = 0;
    double dl = now_s() + 15;
    while (made < N && now_s() < dl) {
        tick(loop);
        made = 0;
        for (int i = 0; i < N; i++)
            if (cl[i].nmade && cl[i].nbytes == 0 && cl[i].user == NULL) {
                char msg[64];
                memset(msg, 'A' + i % 26, sizeof msg);
                ll_transport_write(cl[i].t, msg, sizeof msg);
                cl[i].user = &cl[i];
            }
        for (int i = 0; i < N; i++)
            made += cl[i].nbytes == 64;
    }
    double served_in = now_s() - t0;
    CHECK_EQ_INT(made, N);
    /* all served while the slow peers still had bytes to send */
    CHECK(__atomic_load_n(&d.sent, __ATOMIC_SEQ_CST) < d.nbytes);
    fprintf(stderr, "1000 echoes served in %.2f s beside %d slowloris peers\n", served_in, SLOW_PEERS);
    for (int i = 0; i < N; i++) {
        char want[64];
        memset(want, 'A' + i % 26, sizeof want);
        if (cl[i].nbuf != 64 || memcmp(cl[i].buf, want, 64) != 0) {
            CHECK_FAIL_AT(__FILE__, __LINE__, "client %d got the wrong echo", i);
            break;
        }
        ll_release(futs[i]);
        ll_transport_close(cl[i].t);
    }
    /* the slow peers' bytes all arrive, in order */
    pthread_join(th, NULL);
    for (int i = 0; i < SLOW_PEERS; i++) {
        RUN_UNTIL(loop, s.conns[i].nbytes == (size_t)d.nbytes, 5.0);
        int ok = 1;
        for (int b = 0; b < d.nbytes; b++)
            ok &= s.conns[i].buf[b] == 'a' + b % 26;
        CHECK(ok);
        close(d.fds[i]);
    }
    RUN_UNTIL(loop, ({
                  int lost = 0;
                  for (int i = 0; i < N; i++)
                      lost += cl[i].nlost;
                  lost == N;
              }),
              10.0);
    server_free(&s, loop);
    free(cl);
    free(futs);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    ll_release(loop);
}

/* ---- a peer that never reads, then drains ---- */

struct pump {
    size_t total, written;
    int paused;
};

static int pump_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    struct pump *p = c->user;
    if (ev->kind == LL_PAUSE_WRITING)
        p->paused = 1;
    if (ev->kind == LL_RESUME_WRITING)
        p->paused = 0;
    return 0;
}

/* Writes pattern bytes until paused or done. */
static void pump_some(struct conn *c, struct pump *p) {
    static unsigned char chunk[16384];
    while (!p->paused && p->written < p->total) {
        size_t n = p->total - p->written < sizeof chunk ? p->total - p->written : sizeof chunk;
        fill_pattern(chunk, n, p->written);
        size_t before = 0;
        ll_transport_get_write_buffer_size(c->t, &before);
        CHECK_EQ_INT(ll_transport_write(c->t, chunk, n), 0);
        p->written += n;
        size_t after = 0;
        ll_transport_get_write_buffer_size(c->t, &after);
        if (after > 64 * 1024) { /* above the default high-water mark */
            if (!p->paused)
                return; /* LL_PAUSE_WRITING arrives in a later callback */
        }
    }
}

static void test_never_reading_peer(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server s;
    server_init(&s, 2);
    server_listen(&s, loop, 4);
    int peer = raw_connect(s.port);
    CHECK(peer >= 0);
    RUN_UNTIL(loop, s.n == 1, 5.0);
    struct conn *c = &s.conns[0];
    struct pump p = {.total = 16u << 20};
    c->user = &p;
    c->hook = pump_hook;
    /* the peer reads nothing: writing stops at the mark and stays there */
    for (int i = 0; i < 200 && !p.paused; i++) {
        pump_some(c, &p);
        tick(loop);
    }
    CHECK_EQ_INT(p.paused, 1);
    CHECK_EQ_INT(c->npause, 1);
    size_t held = 0;
    ll_transport_get_write_buffer_size(c->t, &held);
    CHECK(held > 64 * 1024 && held < 4u << 20); /* bounded: the writer stopped */
    for (int i = 0; i < 20; i++)
        tick(loop);
    size_t later = 0;
    ll_transport_get_write_buffer_size(c->t, &later);
    CHECK(later >= held - 1); /* nothing drains while the peer does not read */
    CHECK_EQ_INT(c->nlost, 0);
    /* the peer reads everything; each resume lets the writer go on */
    unsigned char *got = malloc(p.total);
    size_t nread = 0;
    struct timeval tv = {0, 20000};
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    double dl = now_s() + 30;
    while (nread < p.total && now_s() < dl) {
        ssize_t k = read(peer, got + nread, p.total - nread);
        if (k > 0)
            nread += (size_t)k;
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
        pump_some(c, &p);
    }
    CHECK_EQ_INT(nread, p.total);
    CHECK(c->nresume >= 1);
    CHECK(c->npause >= 1);
    unsigned char *want = malloc(p.total);
    fill_pattern(want, p.total, 0);
    CHECK(memcmp(got, want, p.total) == 0); /* every byte, in order */
    free(got);
    free(want);
    close(peer);
    RUN_UNTIL(loop, c->nlost == 1, 5.0);
    server_free(&s, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    ll_release(loop);
}

/* ---- half-close and keep reading ---- */

static int answer_after_eof_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    if (ev->kind == LL_EOF_RECEIVED) {
        /* the request is complete: answer 4 MiB, then close */
        static unsigned char chunk[65536];
        for (size_t off = 0; off < (4u << 20); off += sizeof chunk) {
            fill_pattern(chunk, sizeof chunk, off);
            ll_transport_write(ev->transport, chunk, sizeof chunk);
        }
        ll_transport_close(ev->transport);
        c->user = c;
        return 1; /* keep the transport open to flush the answer */
    }
    return 0;
}

static void test_half_close_keep_reading(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server s;
    server_init(&s, 2);
    s.tmpl.hook = answer_after_eof_hook;
    server_listen(&s, loop, 4);
    int peer = raw_connect(s.port);
    CHECK(peer >= 0);
    CHECK_EQ_INT(write(peer, "REQUEST", 7), 7);
    CHECK_EQ_INT(shutdown(peer, SHUT_WR), 0);
    RUN_UNTIL(loop, s.n == 1 && s.conns[0].user != NULL, 5.0);
    size_t total = 4u << 20, nread = 0;
    unsigned char *got = malloc(total + 1);
    struct timeval tv = {0, 20000};
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    double dl = now_s() + 20;
    int eof = 0;
    while (!eof && now_s() < dl) {
        ssize_t k = read(peer, got + nread, total + 1 - nread);
        if (k > 0)
            nread += (size_t)k;
        else if (k == 0)
            eof = 1;
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    }
    CHECK_EQ_INT(eof, 1);
    CHECK_EQ_INT(nread, total);
    unsigned char *want = malloc(total);
    fill_pattern(want, total, 0);
    CHECK(nread == total && memcmp(got, want, total) == 0);
    free(got);
    free(want);
    RUN_UNTIL(loop, s.conns[0].nlost == 1, 5.0);
    CHECK_EQ_INT(s.conns[0].lost_code, 0);
    CHECK_EQ_INT(s.conns[0].nbytes, 7);
    CHECK_EQ_INT(s.conns[0].neof, 1);
    close(peer);
    server_free(&s, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    ll_release(loop);
}

/* ---- connect/close cycles ---- */

static void test_connect_close_cycles(void) {
    int cycles = long_mode ? 100000 : 10000, batch = 50;
    ll_loop loop = new_loop();
    struct server s;
    server_init(&s, batch);
    server_listen(&s, loop, 512);
    int fds0 = count_fds(), fds_mid = -1;
    struct conn *cl = calloc((size_t)batch, sizeof *cl);
    ll_future *futs = calloc((size_t)batch, sizeof *futs);
    int done = 0, failed = 0;
    double t0 = now_s();
    while (done < cycles && now_s() - t0 < 120) {
        s.n = 0; /* the server's conns are reused batch after batch */
        for (int i = 0; i < batch; i++) {
            conn_init(&cl[i]);
            if (ll_tcp_connect(loop, "127.0.0.1", s.port, conn_proto, &cl[i], &futs[i]) != 0)
                failed++;
        }
        RUN_UNTIL(loop, ({
                      int m = 0;
                      for (int i = 0; i < batch; i++)
                          m += cl[i].nmade;
                      m == batch && s.n == batch;
                  }),
                  10.0);
        for (int i = 0; i < batch; i++) {
            ll_release(futs[i]);
            ll_transport_close(cl[i].t);
        }
        RUN_UNTIL(loop, ({
                      int m = 0;
                      for (int i = 0; i < batch; i++)
                          m += cl[i].nlost + s.conns[i].nlost;
                      m == 2 * batch;
                  }),
                  10.0);
        done += batch;
        if (done == cycles / 2)
            fds_mid = count_fds();
    }
    fprintf(stderr, "%d connect/close cycles in %.1f s; fds %d -> %d -> %d\n", done, now_s() - t0, fds0, fds_mid,
            count_fds());
    CHECK_EQ_INT(done, cycles);
    CHECK_EQ_INT(failed, 0);
    CHECK_EQ_INT(fds_mid, fds0);
    CHECK_EQ_INT(count_fds(), fds0);
    free(cl);
    free(futs);
    s.n = 0;
    server_free(&s, loop);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    long_mode = getenv("LIBLOOP_LONG_TESTS") != NULL;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
        rl.rlim_cur = 4096;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    RUN_TEST(test_reset_mid_write);
    RUN_TEST(test_vanish_mid_handshake_and_read);
    RUN_TEST(test_slowloris_while_1000_served);
    RUN_TEST(test_never_reading_peer);
    RUN_TEST(test_half_close_keep_reading);
    RUN_TEST(test_connect_close_cycles);
    return CHECK_REPORT();
}
