/* SPDX-License-Identifier: MIT */
/* ll_loop_set_event_batch: arrays of events for transports without a
 * protocol fn, with their EOF answers honoured. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"


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
    RUN_TEST(test_event_batch);
    return CHECK_REPORT();
}
