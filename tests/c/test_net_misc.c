/* SPDX-License-Identifier: MIT */
/* ll_transport_sendfile (whole file, a range, errors, a transport that ends
 * first), ll_getaddrinfo, and ll_loop_set_event_batch: arrays of events for
 * transports without a protocol fn, with their EOF answers honoured. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

#define FILE_SIZE (3u << 20)

static int temp_file(unsigned char **content) {
    char path[] = "/tmp/ll-sendfile-XXXXXX";
    int fd = mkstemp(path);
    unlink(path);
    unsigned char *c = malloc(FILE_SIZE);
    for (size_t i = 0; i < FILE_SIZE; i++)
        c[i] = (unsigned char)((i * 131) ^ (i >> 9));
    CHECK_EQ_INT(write(fd, c, FILE_SIZE), FILE_SIZE);
    *content = c;
    return fd;
}

/* Waits for a future and returns its value (or -1 and the code in *code). */
static long long await_future(ll_loop loop, ll_future f, int *code) {
    RUN_UNTIL(loop, ll_future_done(f) == 1, 10.0);
    uintptr_t v = 0;
    *code = ll_future_result(f, &v);
    ll_release(f);
    return *code == 0 ? (long long)v : -1;
}

static void test_sendfile(void) {
    ll_loop loop = new_loop();
    unsigned char *content;
    int fd = temp_file(&content);
    int fds0 = count_fds();
    struct server srv;
    server_init(&srv, 2);
    server_listen(&srv, loop, 0);
    struct conn cl;
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);

    /* Header, the whole file, trailer: in that order on the wire. */
    CHECK_EQ_INT(ll_transport_write(cl.t, "HDR", 3), 0);
    ll_future f = 0, f2 = 0;
    int code = 0;
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), 0);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f2), LL_ESTATE); /* one at a time */
    CHECK_EQ_INT(ll_transport_write(cl.t, "TRL", 3), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), FILE_SIZE);
    uint32_t want = fnv(fnv(fnv(FNV_INIT, "HDR", 3), content, FILE_SIZE), "TRL", 3);
    RUN_UNTIL(loop, srv.n == 1 && srv.conns[0].nbytes == FILE_SIZE + 6, 10.0);
    CHECK_EQ_INT(srv.conns[0].hash, want);

    /* A range: count bytes from offset. */
    struct conn *sc = &srv.conns[0];
    sc->nbytes = 0;
    sc->nbuf = 0;
    sc->hash = FNV_INIT;
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 100, 1000, &f), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), 1000);
    RUN_UNTIL(loop, sc->nbytes == 1000, 5.0);
    CHECK(memcmp(sc->buf, content + 100, 1000) == 0);
    /* Past the end: what there is. */
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, FILE_SIZE - 10, 1000, &f), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), 10);

    /* Bad arguments. */
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, -1, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, -5, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, -1, 0, 0, &f), -EBADF);
    CHECK_EQ_INT(ll_transport_sendfile(0, fd, 0, 0, &f), LL_EBADHANDLE);

    /* The transport ends first: the future fails with LL_ECLOSED. */
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), 0);
    CHECK_EQ_INT(ll_transport_abort(cl.t), 0);
    CHECK_EQ_INT(await_future(loop, f, &code), -1);
    CHECK_EQ_INT(code, LL_ECLOSED);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_LIFECYCLE(&cl, 0);

    /* After write_eof: LL_ESTATE. */
    conn_init(&cl);
    CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", srv.port, &cl), 0);
    CHECK_EQ_INT(ll_transport_write_eof(cl.t), 0);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), LL_ESTATE);
    ll_transport_close(cl.t);
    RUN_UNTIL(loop, cl.nlost == 1, 5.0);
    CHECK_EQ_INT(ll_transport_sendfile(cl.t, fd, 0, 0, &f), LL_EBADHANDLE);

    /* Datagram and read-pipe transports cannot send a file. */
    struct conn u;
    conn_init(&u);
    ll_transport ut = 0;
    CHECK_EQ_INT(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, conn_proto, &u, &ut), 0);
    CHECK_EQ_INT(ll_transport_sendfile(ut, fd, 0, 0, &f), LL_EINVAL);
    ll_transport_close(ut);
    RUN_UNTIL(loop, u.nlost == 1, 5.0);

    server_free(&srv, loop);
    spin(loop, 2);
    CHECK_EQ_INT(count_fds(), fds0);
    close(fd);
    free(content);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_getaddrinfo(void) {
    ll_loop loop = new_loop();
    ll_future f = 0;
    CHECK_EQ_INT(ll_getaddrinfo(loop, "localhost", "80", 0, SOCK_STREAM, 0, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    uintptr_t v = 0;
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    const struct addrinfo *ai = (const struct addrinfo *)v;
    int n = 0, ok = 1;
    for (; ai != NULL; ai = ai->ai_next, n++) {
        if (ai->ai_family == AF_INET)
            ok &= ntohs(((struct sockaddr_in *)ai->ai_addr)->sin_port) == 80;
        else if (ai->ai_family == AF_INET6)
            ok &= ntohs(((struct sockaddr_in6 *)ai->ai_addr)->sin6_port) == 80;
        else
            ok = 0;
        ok &= ai->ai_socktype == SOCK_STREAM;
    }
    CHECK(n >= 1);
    CHECK(ok);
    ll_release(f); /* frees the list */

    /* Numeric only, family given. */
    CHECK_EQ_INT(ll_getaddrinfo(loop, "::1", NULL, AF_INET6, SOCK_DGRAM, AI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, &v), 0);
    ai = (const struct addrinfo *)v;
    CHECK(ai != NULL && ai->ai_family == AF_INET6);
    ll_release(f);

    /* Failures (no name server is asked: numeric-only lookups). */
    CHECK_EQ_INT(ll_getaddrinfo(loop, "not-a-number", NULL, 0, 0, AI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, NULL), LL_ENONAME);
    ll_release(f);
    CHECK_EQ_INT(ll_getaddrinfo(loop, "127.0.0.1", "no-such-service-ll", 0, SOCK_STREAM, AI_NUMERICHOST, &f), 0);
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    CHECK_EQ_INT(ll_future_result(f, NULL), LL_EINVAL);
    ll_release(f);
    CHECK_EQ_INT(ll_getaddrinfo(loop, NULL, NULL, 0, 0, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_getaddrinfo(loop, "localhost", "80", 0, 0, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_getaddrinfo(0, "localhost", "80", 0, 0, 0, &f), LL_EBADHANDLE);
    STILL_RUNS(loop);
    ll_release(loop);
}

/* ---- the batch sink ---- */

struct sink {
    int calls, events, max_n;
    int made, data, eof, lost;
    int eof_answer;
    ll_transport last_lost;
};

static void sink_fn(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    (void)loop;
    struct sink *s = arg;
    s->calls++;
    s->events += (int)n;
    if ((int)n > s->max_n)
        s->max_n = (int)n;
    for (size_t i = 0; i < n; i++) {
        switch (evs[i].kind) {
        case LL_CONNECTION_MADE: s->made++; break;
        case LL_DATA_RECEIVED: s->data++; break;
        case LL_EOF_RECEIVED:
            s->eof++;
            evs[i].result = s->eof_answer;
            break;
        case LL_CONNECTION_LOST:
            s->lost++;
            s->last_lost = evs[i].transport;
            break;
        }
    }
}

/* The server hands every accepted connection to the sink. */
static int to_sink(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    CHECK_EQ_INT(ll_transport_set_protocol(ev->transport, NULL, NULL), 0);
    return 0;
}

#define NB 8

static void test_event_batch(void) {
    ll_loop loop = new_loop();
    struct sink sk = {0};
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, sink_fn, &sk), 0);
    ll_server srv = 0;
    int port = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, to_sink, NULL, &srv), 0);
    CHECK_EQ_INT(ll_server_port(srv, &port), 0);

    /* Clients without a protocol fn: their events go to the sink too. */
    ll_future f[NB];
    ll_transport ct[NB];
    for (int i = 0; i < NB; i++)
        CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", port, NULL, NULL, &f[i]), 0);
    RUN_UNTIL(loop, sk.made == NB, 5.0); /* the clients' MADE events */
    for (int i = 0; i < NB; i++) {
        uintptr_t v = 0;
        RUN_UNTIL(loop, ll_future_done(f[i]) == 1, 5.0);
        CHECK_EQ_INT(ll_future_result(f[i], &v), 0);
        ct[i] = (ll_transport)v;
        ll_release(f[i]);
    }
    /* Every client writes in the same iteration: the server side's reads
     * arrive together, as arrays. */
    sk.max_n = 0;
    int data0 = sk.data;
    for (int i = 0; i < NB; i++)
        CHECK_EQ_INT(ll_transport_write(ct[i], "batch", 5), 0);
    RUN_UNTIL(loop, sk.data - data0 == NB, 5.0);
    CHECK(sk.max_n >= 2);

    /* EOF answers: 1 keeps client 0 open for writing; 0 closes client 1. */
    int lost0 = sk.lost;
    sk.eof_answer = 1;
    CHECK_EQ_INT(ll_transport_write_eof(ct[0]), 0); /* server side: EOF, kept */
    RUN_UNTIL(loop, sk.eof == 1, 5.0);
    spin(loop, 3);
    CHECK_EQ_INT(sk.lost, lost0);
    CHECK_EQ_INT(ll_transport_is_closing(ct[0]), 0);
    sk.eof_answer = 0;
    CHECK_EQ_INT(ll_transport_write_eof(ct[1]), 0); /* server side: EOF, closes */
    /* ... which gives client 1 an EOF too, answered 0: it closes. */
    RUN_UNTIL(loop, sk.lost == lost0 + 2, 5.0);
    CHECK_EQ_INT(ll_transport_write(ct[1], "x", 1), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_transport_is_closing(ct[0]), 0);

    /* No sink: events are dropped and an unanswered EOF closes. */
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, NULL, NULL), 0);
    int calls = sk.calls;
    CHECK_EQ_INT(ll_transport_write_eof(ct[2]), 0);
    RUN_UNTIL(loop, ll_transport_is_closing(ct[2]) != 0, 5.0);
    CHECK_EQ_INT(sk.calls, calls);
    for (int i = 0; i < NB; i++)
        ll_transport_abort(ct[i]);
    spin(loop, 5);
    for (int i = 0; i < NB; i++)
        CHECK_EQ_INT(ll_transport_write(ct[i], "x", 1), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_release(srv), 0);
    STILL_RUNS(loop);
    ll_release(loop); /* the server-side transports go with the loop */
}

int main(void) {
    RUN_TEST(test_sendfile);
    RUN_TEST(test_getaddrinfo);
    RUN_TEST(test_event_batch);
    return CHECK_REPORT();
}
