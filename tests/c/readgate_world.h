/* SPDX-License-Identifier: MIT */
/* The ping-pong world of the read gate's tests (test_readgate.c,
 * test_readgate_peer.c): connections of one loop whose C protocols echo
 * fixed-size messages, with hooks a test sets to act at a given echo. */
#ifndef LL_TEST_READGATE_WORLD_H
#define LL_TEST_READGATE_WORLD_H
#include <string.h>

#include "libloop.h"
#include "check.h"

#define MSG 16
#define MAXC 2

struct world;

struct conn {
    struct world *w;
    ll_transport t;
    int sent, got; /* messages sent, whole echoes received */
    size_t have;   /* bytes of the echo being received */
    int rounds;    /* stop sending at this many echoes */
    int paused, paused_events;
    int closed, data_after_close, lost, lost_code;
};

struct world {
    ll_loop loop;
    ll_server server;
    ll_handle dog;
    struct conn c[MAXC];
    int nconn, done, bad, timed_out;
    long deliveries; /* LL_DATA_RECEIVED on either side */
    ll_transport srv[4];
    int nsrv, srv_lost, srv_lost_err;
    /* The scenario: called when c's echo completes, before it sends its
     * next message; returns 0 to send it, 1 not to. */
    int (*on_echo)(struct world *w, struct conn *c);
    void (*on_server_data)(struct world *w);
    /* scenario state */
    int n, m, k;
    long at, lag, late;
    double deadline;
    ll_handle h;
};

static volatile long deliveries_seen; /* for the posting thread */

static inline void message(int i, char out[MSG]) {
    char tmp[MSG + 1];
    snprintf(tmp, sizeof tmp, "%0*d\n", MSG - 1, i);
    memcpy(out, tmp, MSG);
}

static inline void send_next(struct conn *c) {
    char m[MSG];
    message(c->sent, m);
    if (ll_transport_write(c->t, m, MSG) != 0)
        c->w->bad++;
    c->sent++;
}

static inline void count_delivery(struct world *w) {
    w->deliveries++;
    __atomic_store_n(&deliveries_seen, w->deliveries, __ATOMIC_RELEASE);
}

static inline int echo(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    struct world *w = arg;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        if (w->nsrv < 4)
            w->srv[w->nsrv++] = ev->transport;
        break;
    case LL_DATA_RECEIVED:
        count_delivery(w);
        if (w->on_server_data)
            w->on_server_data(w);
        if (ll_transport_write(ev->transport, ev->data, ev->len) != 0)
            w->bad++;
        break;
    case LL_CONNECTION_LOST:
        w->srv_lost++;
        if (ev->code != 0)
            w->srv_lost_err++;
        break;
    }
    return 0; /* EOF: close */
}

static inline void all_done(struct world *w) {
    if (++w->done == w->nconn)
        ll_loop_stop(w->loop);
}

static inline int client(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    struct conn *c = arg;
    struct world *w = c->w;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        c->t = ev->transport;
        send_next(c);
        break;
    case LL_DATA_RECEIVED:
        count_delivery(w);
        if (c->paused)
            c->paused_events++;
        if (c->closed)
            c->data_after_close++;
        for (size_t i = 0; i < ev->len; i++) {
            char want[MSG];
            message(c->got, want);
            if (((const char *)ev->data)[i] != want[c->have])
                w->bad++;
            if (++c->have < MSG)
                continue;
            c->have = 0;
            c->got++;
            if (c->got == c->rounds) {
                all_done(w);
                continue;
            }
            if (c->got < c->sent)
                continue; /* more echoes on their way */
            if (w->on_echo && w->on_echo(w, c))
                continue;
            send_next(c);
        }
        break;
    case LL_CONNECTION_LOST:
        c->lost++;
        c->lost_code = ev->code;
        break;
    }
    return 1;
}

static inline void watchdog(ll_loop loop, void *arg) {
    ((struct world *)arg)->timed_out = 1;
    ll_loop_stop(loop);
}

/* A loop with the echo server and nconn clients of rounds each; the
 * clients connect during the first run. */
static inline void world_open(struct world *w, int nconn, int rounds) {
    int port = 0;
    w->nconn = nconn;
    CHECK_EQ_INT(ll_loop_new(&w->loop), 0);
    CHECK_EQ_INT(ll_tcp_listen(w->loop, "127.0.0.1", 0, 16, 0, echo, w, &w->server), 0);
    CHECK_EQ_INT(ll_server_port(w->server, &port), 0);
    CHECK_EQ_INT(ll_call_later(w->loop, 30.0, watchdog, w, &w->dog), 0);
    for (int i = 0; i < nconn; i++) {
        ll_future f = 0;
        w->c[i].w = w;
        w->c[i].rounds = rounds;
        CHECK_EQ_INT(ll_tcp_connect(w->loop, "127.0.0.1", port, client, &w->c[i], &f), 0);
        ll_release(f);
    }
}

static inline void world_close(struct world *w) {
    CHECK_EQ_INT(w->timed_out, 0);
    CHECK_EQ_INT(w->bad, 0);
    ll_handle_cancel(w->dog);
    ll_release(w->dog);
    for (int i = 0; i < w->nconn; i++)
        if (!w->c[i].closed)
            ll_transport_close(w->c[i].t);
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(w->loop, LL_RUN_NOWAIT);
    ll_release(w->server);
    CHECK_EQ_INT(ll_release(w->loop), 0);
}

#endif
