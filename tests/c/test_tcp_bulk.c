/* SPDX-License-Identifier: MIT */
/* Volume: 64 MiB through an echo server with a checksum, the client pacing
 * itself with LL_PAUSE_WRITING / LL_RESUME_WRITING; 1,000 concurrent
 * connections in one loop, each getting its own message back. */
#include <stdio.h>
#include <sys/resource.h>

#include "net_util.h"

#define TOTAL (64u << 20)
#define CHUNK (64u << 10)

struct pacer {
    ll_loop loop;
    size_t sent;
    uint32_t sent_hash;
    int paused;
    int pumps_queued;
    size_t max_buffered;
    unsigned char chunk[CHUNK];
};

static struct pacer P;

static void fill_chunk(size_t off) {
    for (size_t i = 0; i < CHUNK; i += 4) {
        uint32_t v = (uint32_t)((off + i) * 2654435761u);
        memcpy(P.chunk + i, &v, 4);
    }
}

static void pump_cb(ll_loop loop, void *arg);

/* Writes a few chunks unless paused; comes back next iteration until done. */
static void pump(struct conn *c) {
    for (int k = 0; k < 4 && !P.paused && P.sent < TOTAL; k++) {
        fill_chunk(P.sent);
        CHECK_EQ_INT(ll_transport_write(c->t, P.chunk, CHUNK), 0);
        P.sent_hash = fnv(P.sent_hash, P.chunk, CHUNK);
        P.sent += CHUNK;
        size_t b = 0;
        ll_transport_get_write_buffer_size(c->t, &b);
        if (b > P.max_buffered)
            P.max_buffered = b;
    }
    if (P.sent == TOTAL)
        CHECK_EQ_INT(ll_transport_write_eof(c->t), 0);
    else if (!P.paused && !P.pumps_queued) {
        P.pumps_queued = 1;
        ll_call_soon(P.loop, pump_cb, c, NULL);
    }
}

static void pump_cb(ll_loop loop, void *arg) {
    (void)loop;
    P.pumps_queued = 0;
    pump(arg);
}

static int client_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    switch (ev->kind) {
    case LL_CONNECTION_MADE: pump(c); break;
    case LL_PAUSE_WRITING: P.paused = 1; break;
    case LL_RESUME_WRITING:
        P.paused = 0;
        pump(c);
        break;
    }
    return 0;
}

static void test_64mib_echo(void) {
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server srv;
    server_init(&srv, 1);
    srv.tmpl.echo = 1;
    srv.tmpl.pause_on_pause = 1; /* the echo side applies back-pressure too */
    server_listen(&srv, loop, 0);

    memset(&P, 0, sizeof P);
    P.loop = loop;
    P.sent_hash = FNV_INIT;
    struct conn cl;
    conn_init(&cl);
    cl.hook = client_hook;
    double t0 = now_s();
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    RUN_UNTIL(loop, cl.nlost == 1 || cl.nbytes >= TOTAL, 20.0);
    CHECK_EQ_INT(cl.nbytes, TOTAL);
    CHECK_EQ_INT(cl.hash, P.sent_hash);
    /* The server answers our EOF by closing; we answer its EOF by closing. */
    RUN_UNTIL(loop, cl.nlost == 1 && srv.n == 1 && srv.conns[0].nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);
    CHECK_LIFECYCLE(&srv.conns[0], 0);
    CHECK_EQ_INT(srv.conns[0].nbytes, TOTAL);
    CHECK_EQ_INT(srv.conns[0].hash, P.sent_hash);
    /* Pacing happened, and kept the buffer near the high-water mark. */
    CHECK(cl.npause >= 1);
    CHECK(cl.npause - cl.nresume == 0 || cl.npause - cl.nresume == 1);
    CHECK(P.max_buffered < 4 * (64u << 10) + 4 * CHUNK + 65536);
    fprintf(stderr, "64 MiB echoed in %.2f s, %d pauses, max buffered %zu\n", now_s() - t0, cl.npause,
            P.max_buffered);
    server_free(&srv, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    STILL_RUNS(loop);
    ll_release(loop);
}

#define NCONN 1000

static int many_done;
static int many_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    if (ev->kind == LL_CONNECTION_MADE) {
        char msg[32];
        int n = snprintf(msg, sizeof msg, "message %ld", (long)(intptr_t)c->user);
        CHECK_EQ_INT(ll_transport_write(ev->transport, msg, (size_t)n), 0);
    } else if (ev->kind == LL_DATA_RECEIVED) {
        char msg[32];
        int n = snprintf(msg, sizeof msg, "message %ld", (long)(intptr_t)c->user);
        if (c->nbuf == (size_t)n) {
            CHECK(memcmp(c->buf, msg, (size_t)n) == 0);
            ll_transport_close(ev->transport);
        }
    } else if (ev->kind == LL_CONNECTION_LOST) {
        many_done++;
    }
    return 0;
}

static void test_1000_connections(void) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2 * NCONN + 64) {
        rl.rlim_cur = rl.rlim_max < 2 * NCONN + 64 ? rl.rlim_max : 2 * NCONN + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < 2 * NCONN + 64) {
            fprintf(stderr, "SKIP test_1000_connections: RLIMIT_NOFILE %lu\n", (unsigned long)rl.rlim_cur);
            return;
        }
    }
    ll_loop loop = new_loop();
    int fds0 = count_fds();
    struct server srv;
    server_init(&srv, NCONN);
    srv.tmpl.echo = 1;
    server_listen(&srv, loop, 1024);
    struct conn *cl = calloc(NCONN, sizeof *cl);
    many_done = 0;
    double t0 = now_s();
    for (int i = 0; i < NCONN; i++) {
        conn_init(&cl[i]);
        cl[i].hook = many_hook;
        cl[i].user = (void *)(intptr_t)i;
        ll_future f = 0;
        CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", srv.port, conn_proto, &cl[i], &f), 0);
        ll_release(f); /* the protocol hears everything */
    }
    RUN_UNTIL(loop, many_done == NCONN, 20.0);
    RUN_UNTIL(loop, srv.n == NCONN, 5.0);
    RUN_UNTIL(loop, ({
                  int k = 0;
                  for (int i = 0; i < srv.n; i++)
                      k += srv.conns[i].nlost;
                  k == srv.n;
              }),
              5.0);
    int bad = 0;
    for (int i = 0; i < NCONN; i++) {
        bad += cl[i].bad_order != 0 || cl[i].nlost != 1 || cl[i].lost_code != 0 || cl[i].nmade != 1;
        bad += srv.conns[i].bad_order != 0 || srv.conns[i].neof != 1 || srv.conns[i].lost_code != 0;
    }
    CHECK_EQ_INT(bad, 0);
    /* Every id is stale now, and every fd is back. */
    CHECK_EQ_INT(ll_transport_write(cl[NCONN - 1].t, "x", 1), LL_EBADHANDLE);
    fprintf(stderr, "%d connections echoed in %.2f s\n", NCONN, now_s() - t0);
    server_free(&srv, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    free(cl);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_64mib_echo);
    RUN_TEST(test_1000_connections);
    return CHECK_REPORT();
}
