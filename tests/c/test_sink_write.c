/* SPDX-License-Identifier: MIT */
/* Writes from a batch sink (the Python binding's path): during the sink's
 * call ll_transport_write_async_size sends from C (as on the loop's thread
 * anywhere: test_direct_write.c), and so does ll_transport_write_async_packed
 * (every test runs with each). It must give the same results as the Go
 * path: the bytes in order, the buffer's size when the kernel refuses, 1
 * over the high-water mark, LL_ECLOSED after abort or close in the same
 * call, and transports with no event in the run written too. */
#include <stdio.h>

#include "net_util.h"

#define NB 8
#define BIG_CHUNK (256u << 10)
#define BIG_CHUNKS 64

enum { ECHO, BIG, ABORT_THEN_WRITE, CLOSE_THEN_WRITE, OTHERS };

struct wsink {
    int mode;
    int data;                 /* DATA events seen */
    int bad;                  /* an unexpected result */
    int rc1;                  /* results of 1 (over the high-water mark) */
    size_t max_buffered;
    size_t end_buffered, end_size; /* BIG: *buffered and get_write_buffer_size after the last write */
    int after;                /* ABORT/CLOSE_THEN_WRITE: the write's result */
    ll_transport accepted[NB];
    int naccepted;
};

static unsigned char big[BIG_CHUNK];

/* The write under test: ll_transport_write_async_size, or (packed set:
 * each test runs both ways) ll_transport_write_async_packed, its one
 * result split back into the result and *buffered. */
static int packed;

static int write_async(ll_transport t, const void *data, size_t len, size_t *buffered) {
    if (!packed)
        return ll_transport_write_async_size(t, data, len, buffered);
    int64_t r = ll_transport_write_async_packed(t, data, len);
    if (r < 0) {
        *buffered = 0;
        return (int)r;
    }
    *buffered = (size_t)(r >> 1);
    return (int)(r & 1);
}

static void wsink_fn(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    (void)loop;
    struct wsink *s = arg;
    for (size_t i = 0; i < n; i++) {
        if (evs[i].kind != LL_DATA_RECEIVED)
            continue;
        ll_transport t = evs[i].transport;
        size_t b = 99;
        int rc;
        s->data++;
        switch (s->mode) {
        case ECHO:
            rc = write_async(t, evs[i].data, evs[i].len, &b);
            if (rc != 0 || b != 0)
                s->bad++;
            break;
        case BIG:
            for (int k = 0; k < BIG_CHUNKS; k++) {
                rc = write_async(t, big, sizeof big, &b);
                if (rc != 0 && rc != 1)
                    s->bad++;
                s->rc1 += rc == 1;
                if (b > s->max_buffered)
                    s->max_buffered = b;
            }
            s->end_buffered = b;
            CHECK_EQ_INT(ll_transport_get_write_buffer_size(t, &s->end_size), 0);
            break;
        case ABORT_THEN_WRITE:
            CHECK_EQ_INT(ll_transport_abort(t), 0);
            s->after = write_async(t, "late", 4, &b);
            break;
        case CLOSE_THEN_WRITE:
            CHECK_EQ_INT(ll_transport_close(t), 0);
            s->after = write_async(t, "late", 4, &b);
            break;
        case OTHERS: /* write to every other accepted transport: not in this run */
            for (int k = 0; k < s->naccepted; k++)
                if (s->accepted[k] != t && write_async(s->accepted[k], "other", 5, &b) != 0)
                    s->bad++;
            break;
        }
    }
}

/* The listener: every accepted connection's later events go to the sink. */
static int accept_to_sink(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    struct wsink *s = arg;
    if (ev->kind == LL_CONNECTION_MADE) {
        if (s->naccepted < NB)
            s->accepted[s->naccepted++] = ev->transport;
        CHECK_EQ_INT(ll_transport_set_protocol(ev->transport, NULL, NULL), 0);
    }
    return 0;
}

/* A loop with the sink, a listener and nc connected clients. */
static ll_loop setup(struct wsink *s, int mode, struct conn *cl, int nc, ll_server *srv) {
    ll_loop loop = new_loop();
    memset(s, 0, sizeof *s);
    s->mode = mode;
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, wsink_fn, s), 0);
    int port = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, accept_to_sink, s, srv), 0);
    CHECK_EQ_INT(ll_server_port(*srv, &port), 0);
    for (int i = 0; i < nc; i++) {
        conn_init(&cl[i]);
        CHECK_EQ_INT(connect_tcp(loop, "127.0.0.1", port, &cl[i]), 0);
    }
    RUN_UNTIL(loop, s->naccepted == nc, 5.0);
    return loop;
}

static void teardown(ll_loop loop, ll_server srv, struct conn *cl, int nc) {
    for (int i = 0; i < nc; i++)
        if (cl[i].nlost == 0)
            ll_transport_abort(cl[i].t);
    for (int i = 0; i < nc; i++)
        RUN_UNTIL(loop, cl[i].nlost == 1, 5.0);
    ll_release(srv);
    spin(loop, 3);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_echo_in_one_run(void) {
    struct wsink s;
    struct conn cl[NB];
    ll_server srv = 0;
    ll_loop loop = setup(&s, ECHO, cl, NB, &srv);
    char msg[NB][16];
    for (int i = 0; i < NB; i++) {
        snprintf(msg[i], sizeof msg[i], "ping-%d", i);
        CHECK_EQ_INT(ll_transport_write(cl[i].t, msg[i], strlen(msg[i])), 0);
    }
    for (int i = 0; i < NB; i++) {
        RUN_UNTIL(loop, cl[i].nbytes == strlen(msg[i]), 5.0);
        CHECK_EQ_INT(memcmp(cl[i].buf, msg[i], strlen(msg[i])), 0);
    }
    CHECK_EQ_INT(s.data, NB);
    CHECK_EQ_INT(s.bad, 0);
    teardown(loop, srv, cl, NB);
}

/* The peer does not read: the kernel refuses, the rest is buffered, the
 * result turns 1 over the mark, and every byte arrives in order. */
static void test_big_write_buffers(void) {
    struct wsink s;
    struct conn cl[1];
    ll_server srv = 0;
    ll_loop loop = setup(&s, BIG, cl, 1, &srv);
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (unsigned char)(i * 7 + (i >> 11));
    uint32_t want = FNV_INIT;
    for (int k = 0; k < BIG_CHUNKS; k++)
        want = fnv(want, big, sizeof big);
    CHECK_EQ_INT(ll_transport_pause_reading(cl[0].t), 0);
    CHECK_EQ_INT(ll_transport_write(cl[0].t, "go", 2), 0);
    RUN_UNTIL(loop, s.data == 1, 5.0);
    CHECK_EQ_INT(s.bad, 0);
    CHECK(s.max_buffered > 0);
    CHECK(s.rc1 > 0);
    CHECK(s.end_buffered > (64u << 10));
    CHECK_EQ_INT(s.end_buffered, s.end_size);
    CHECK_EQ_INT(ll_transport_resume_reading(cl[0].t), 0);
    RUN_UNTIL(loop, cl[0].nbytes == (size_t)BIG_CHUNKS * sizeof big, 20.0);
    CHECK_EQ_INT(cl[0].hash, want);
    teardown(loop, srv, cl, 1);
}

/* abort or close (nothing buffered) inside the sink, then a write: refused
 * with LL_ECLOSED, nothing sent on the closed fd. */
static void test_write_after_abort_or_close(void) {
    for (int mode = ABORT_THEN_WRITE; mode <= CLOSE_THEN_WRITE; mode++) {
        struct wsink s;
        struct conn cl[1];
        ll_server srv = 0;
        int fds0 = count_fds();
        ll_loop loop = setup(&s, mode, cl, 1, &srv);
        CHECK_EQ_INT(ll_transport_write(cl[0].t, "x", 1), 0);
        RUN_UNTIL(loop, s.data == 1, 5.0);
        CHECK_EQ_INT(s.after, LL_ECLOSED);
        RUN_UNTIL(loop, cl[0].nlost == 1 || cl[0].neof == 1, 5.0);
        CHECK_EQ_INT(cl[0].nbytes, 0);
        teardown(loop, srv, cl, 1);
        CHECK_EQ_INT(count_fds(), fds0);
    }
}

/* A transport with no event in the run is written as well. */
static void test_write_outside_the_run(void) {
    struct wsink s;
    struct conn cl[3];
    ll_server srv = 0;
    ll_loop loop = setup(&s, OTHERS, cl, 3, &srv);
    CHECK_EQ_INT(ll_transport_write(cl[0].t, "hi", 2), 0);
    RUN_UNTIL(loop, cl[1].nbytes == 5 && cl[2].nbytes == 5, 5.0);
    CHECK_EQ_INT(memcmp(cl[1].buf, "other", 5), 0);
    CHECK_EQ_INT(memcmp(cl[2].buf, "other", 5), 0);
    CHECK_EQ_INT(cl[0].nbytes, 0);
    CHECK_EQ_INT(s.bad, 0);
    teardown(loop, srv, cl, 3);
}

int main(void) {
    for (packed = 0; packed <= 1; packed++) {
        RUN_TEST(test_echo_in_one_run);
        RUN_TEST(test_big_write_buffers);
        RUN_TEST(test_write_after_abort_or_close);
        RUN_TEST(test_write_outside_the_run);
    }
    return CHECK_REPORT();
}
