/* SPDX-License-Identifier: MIT */
/*
 * net_util.h — helpers shared by the transport tests (include after check.h).
 *
 *   struct conn, conn_proto   a protocol that records every event of one
 *                             transport and checks their order as they come
 *   struct server, server_proto  a listener protocol: gives each accepted
 *                             transport a struct conn of its own with
 *                             ll_transport_set_protocol
 *   RUN_UNTIL(loop, cond, s)  iterates the loop until cond holds or s
 *                             seconds pass (a failed check, never a hang)
 *   count_fds()               entries of /proc/self/fd (leak checks)
 *   connect_tcp(...)          ll_tcp_connect and wait for its future
 */
#ifndef LIBLOOP_TEST_NET_UTIL_H
#define LIBLOOP_TEST_NET_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void nop_cb(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

/* One blocking iteration that returns within 20 ms even when nothing happens. */
static inline void tick(ll_loop loop) {
    ll_handle h = 0;
    ll_call_later(loop, 0.02, nop_cb, NULL, &h);
    ll_loop_run_once(loop, LL_RUN_ONCE);
    if (h) {
        ll_handle_cancel(h);
        ll_release(h);
    }
}

#define RUN_UNTIL(loop, cond, secs)                                                     \
    __extension__({                                                                     \
        double run_dl_ = now_s() + (secs);                                              \
        int run_ok_ = 0;                                                                \
        for (;;) {                                                                      \
            if (cond) {                                                                 \
                run_ok_ = 1;                                                            \
                break;                                                                  \
            }                                                                           \
            if (now_s() > run_dl_)                                                      \
                break;                                                                  \
            tick(loop);                                                                 \
        }                                                                               \
        if (run_ok_)                                                                    \
            check_passed++;                                                             \
        else                                                                            \
            CHECK_FAIL_AT(__FILE__, __LINE__, "timed out waiting for %s", #cond);       \
        run_ok_;                                                                        \
    })

/* Runs a few non-blocking iterations (to show that nothing more happens). */
static inline void spin(ll_loop loop, int n) {
    for (int i = 0; i < n; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
}

static inline int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return -1;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

/* The Go runtime opens its own poller (an epoll fd and an eventfd, kept
 * for the life of the process) the first time it needs one: a name lookup,
 * or a runtime timer, which can happen at any moment. Make it happen before
 * any test counts fds, with a lookup that fails locally (no DNS query). */
static inline void warm_up_go_poller(ll_loop loop) {
    static int done;
    if (done++)
        return;
    ll_future f = 0;
    if (ll_tcp_connect(loop, "no..such..host", 1, NULL, NULL, &f) != 0)
        return;
    for (double dl = now_s() + 5; ll_future_done(f) != 1 && now_s() < dl;)
        tick(loop);
    ll_future_exception(f, NULL, NULL, NULL); /* retrieved: no warning */
    ll_release(f);
}

static inline ll_loop new_loop(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    warm_up_go_poller(loop);
    return loop;
}

/* ---- a recording protocol ---- */

#define CONN_MAX_KINDS 32
#define CONN_BUF 8192

struct conn {
    ll_transport t;
    int kinds[CONN_MAX_KINDS]; /* the first events, in order */
    int nev;                   /* every event */
    int nmade, ndata, neof, nlost, npause, nresume, nerr, ndgram;
    int lost_code, err_code;
    int bad_order;             /* an event before MADE or after LOST, or a foreign transport id */
    size_t nbytes;             /* bytes received */
    uint32_t hash;             /* FNV-1a of every byte received */
    char buf[CONN_BUF];        /* the first bytes received */
    size_t nbuf;
    unsigned char addr[128];   /* the last datagram's sender */
    uint32_t addrlen;
    /* behaviour */
    int echo;                  /* write back what arrives */
    int eof_answer;            /* LL_EOF_RECEIVED's return */
    int close_on_eof_write;    /* write this many bytes then answer */
    int pause_on_pause;        /* pause reading on LL_PAUSE_WRITING, resume on RESUME */
    ll_loop stop_on_lost;      /* ll_loop_stop it on LL_CONNECTION_LOST */
    int (*hook)(struct conn *c, ll_loop loop, const ll_event *ev); /* extra behaviour, after recording */
    void *user;
};

static inline uint32_t fnv(uint32_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}
#define FNV_INIT 2166136261u

static inline void conn_init(struct conn *c) {
    memset(c, 0, sizeof *c);
    c->hash = FNV_INIT;
}

static inline int conn_proto(ll_loop loop, const ll_event *ev, void *arg) {
    struct conn *c = arg;
    if (c->nev < CONN_MAX_KINDS)
        c->kinds[c->nev] = ev->kind;
    if ((c->nev == 0) != (ev->kind == LL_CONNECTION_MADE) || c->nlost > 0)
        c->bad_order++;
    if (c->t != 0 && ev->transport != c->t)
        c->bad_order++;
    c->nev++;
    c->t = ev->transport;
    switch (ev->kind) {
    case LL_CONNECTION_MADE: c->nmade++; break;
    case LL_DATA_RECEIVED:
    case LL_DATAGRAM_RECEIVED:
        if (ev->kind == LL_DATA_RECEIVED)
            c->ndata++;
        else
            c->ndgram++;
        if (ev->len > 0 && ev->data == NULL)
            c->bad_order++;
        c->nbytes += ev->len;
        c->hash = fnv(c->hash, ev->data, ev->len);
        if (c->nbuf < CONN_BUF && ev->len > 0) {
            size_t k = ev->len < CONN_BUF - c->nbuf ? ev->len : CONN_BUF - c->nbuf;
            memcpy(c->buf + c->nbuf, ev->data, k);
            c->nbuf += k;
        }
        if (ev->addr != NULL && ev->addrlen <= sizeof c->addr) {
            memcpy(c->addr, ev->addr, ev->addrlen);
            c->addrlen = ev->addrlen;
        }
        if (c->echo) {
            if (ev->kind == LL_DATA_RECEIVED)
                ll_transport_write(ev->transport, ev->data, ev->len);
            else
                ll_transport_sendto(ev->transport, ev->data, ev->len, ev->addr, ev->addrlen);
        }
        break;
    case LL_EOF_RECEIVED: c->neof++; break;
    case LL_CONNECTION_LOST:
        c->nlost++;
        c->lost_code = ev->code;
        break;
    case LL_PAUSE_WRITING:
        c->npause++;
        if (c->pause_on_pause)
            ll_transport_pause_reading(ev->transport);
        break;
    case LL_RESUME_WRITING:
        c->nresume++;
        if (c->pause_on_pause)
            ll_transport_resume_reading(ev->transport);
        break;
    case LL_ERROR_RECEIVED:
        c->nerr++;
        c->err_code = ev->code;
        break;
    default: c->bad_order++; break;
    }
    int rc = ev->kind == LL_EOF_RECEIVED ? c->eof_answer : 0;
    if (c->hook != NULL)
        rc = c->hook(c, loop, ev);
    if (ev->kind == LL_CONNECTION_LOST && c->stop_on_lost)
        ll_loop_stop(c->stop_on_lost);
    return rc;
}

/* The checks every finished transport must pass: MADE first, LOST once and
 * last with the expected code, and the id stale afterwards. */
#define CHECK_LIFECYCLE(c, code)                                                        \
    do {                                                                                \
        CHECK_EQ_INT((c)->bad_order, 0);                                                \
        CHECK_EQ_INT((c)->nmade, 1);                                                    \
        CHECK_EQ_INT((c)->nlost, 1);                                                    \
        CHECK_EQ_INT((c)->lost_code, (code));                                           \
        CHECK_EQ_INT((c)->kinds[0], LL_CONNECTION_MADE);                                \
        CHECK_EQ_INT(ll_transport_write((c)->t, "x", 1), LL_EBADHANDLE);                \
        CHECK_EQ_INT(ll_transport_is_closing((c)->t), LL_EBADHANDLE);                   \
    } while (0)

/* ---- a server giving each connection a struct conn ---- */

struct server {
    struct conn *conns;       /* room for max */
    int max, n;               /* accepted so far */
    struct conn tmpl;         /* behaviour copied into each new conn */
    ll_server id;
    int port;
};

static inline int server_proto(ll_loop loop, const ll_event *ev, void *arg) {
    struct server *s = arg;
    if (ev->kind != LL_CONNECTION_MADE || s->n >= s->max) {
        if (ev->kind == LL_CONNECTION_MADE)
            ll_transport_abort(ev->transport);
        return 0;
    }
    struct conn *c = &s->conns[s->n++];
    *c = s->tmpl;
    c->hash = FNV_INIT;
    CHECK_EQ_INT(ll_transport_set_protocol(ev->transport, conn_proto, c), 0);
    return conn_proto(loop, ev, c);
}

static inline void server_init(struct server *s, int max) {
    memset(s, 0, sizeof *s);
    s->conns = calloc((size_t)max, sizeof *s->conns);
    s->max = max;
    conn_init(&s->tmpl);
}

/* Listen on 127.0.0.1, any port. */
static inline int server_listen(struct server *s, ll_loop loop, int backlog) {
    int rc = ll_tcp_listen(loop, "127.0.0.1", 0, backlog, 0, server_proto, s, &s->id);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0)
        CHECK_EQ_INT(ll_server_port(s->id, &s->port), 0);
    return rc;
}

/* Aborts the connections still open, waits for their LL_CONNECTION_LOST
 * (their protocol state lives in s->conns), and releases the server. */
static inline void server_free(struct server *s, ll_loop loop) {
    for (int i = 0; i < s->n; i++)
        if (s->conns[i].nlost == 0 && s->conns[i].t != 0)
            ll_transport_abort(s->conns[i].t);
    for (int i = 0; i < s->n; i++)
        if (s->conns[i].t != 0)
            RUN_UNTIL(loop, s->conns[i].nlost > 0, 5.0);
    if (s->id)
        ll_release(s->id);
    free(s->conns);
}

/* Connect to host:port with protocol conn_proto on c and wait for the
 * outcome: 0 and c->t set, or the future's error code. */
struct connect_wait {
    struct conn *c;
    int done;
    int made_before; /* c->nmade when the done callback ran */
};

static inline void connect_done(ll_future f, void *arg) {
    (void)f;
    struct connect_wait *w = arg;
    w->done = 1;
    w->made_before = w->c->nmade;
}

static inline int connect_tcp(ll_loop loop, const char *host, int port, struct conn *c) {
    ll_future f = 0;
    struct connect_wait w = {c, 0, 0};
    int rc = ll_tcp_connect(loop, host, port, conn_proto, c, &f);
    if (rc != 0)
        return rc;
    CHECK_EQ_INT(ll_future_add_done_callback(f, connect_done, &w), 0);
    RUN_UNTIL(loop, w.done, 5.0);
    uintptr_t v = 0;
    rc = ll_future_result(f, &v);
    if (rc == 0) {
        CHECK_EQ_INT(w.made_before, 1); /* MADE runs before the future's done callbacks */
        CHECK_EQ_INT(v, c->t);
    } else {
        CHECK_EQ_INT(c->nev, 0); /* a failed connect has no events */
    }
    ll_release(f);
    return rc;
}

#endif /* LIBLOOP_TEST_NET_UTIL_H */
