/* SPDX-License-Identifier: MIT */
/* Calls on one transport from another's callback, in the iteration that
 * read both: the events of one iteration reach C in one batch, so the
 * second transport's data was read before the first one's protocol ran.
 * After ll_transport_pause_reading, _close or _abort on it, it gets no
 * LL_DATA_RECEIVED (nor LL_EOF_RECEIVED), as asyncio's remove_reader
 * cancels the read callback already queued; a paused transport keeps what
 * was read and delivers it on resume, before anything read later. Both
 * ways of receiving events are covered: protocol fns and a batch sink (one
 * that tracks what it stopped, and one that asks ll_event_withhold). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

#define ROUNDS 10

enum { ACT_PAUSE = 1, ACT_CLOSE, ACT_ABORT };

/* One round's script: the first transport whose data arrives acts on the
 * other; every later read event of that other is counted. */
static struct {
    int action;
    int armed;
    struct conn *pair[2];
    struct conn *target; /* the transport acted upon this round */
    int late_data;       /* its LL_DATA_RECEIVED after the call (and before resume) */
    int late_eof;        /* its LL_EOF_RECEIVED after the call (and before resume) */
    int acted;
} R;

static void act_on(ll_transport t) {
    switch (R.action) {
    case ACT_PAUSE: CHECK_EQ_INT(ll_transport_pause_reading(t), 0); break;
    case ACT_CLOSE: CHECK_EQ_INT(ll_transport_close(t), 0); break;
    case ACT_ABORT: CHECK_EQ_INT(ll_transport_abort(t), 0); break;
    }
}

/* After recording (conn_proto), for both transports of the pair. */
static int cross_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    if (ev->kind != LL_DATA_RECEIVED && ev->kind != LL_EOF_RECEIVED)
        return c->eof_answer;
    if (c == R.target) {
        if (ev->kind == LL_DATA_RECEIVED)
            R.late_data++;
        else
            R.late_eof++;
    } else if (R.armed && ev->kind == LL_DATA_RECEIVED) {
        R.armed = 0;
        R.target = c == R.pair[0] ? R.pair[1] : R.pair[0];
        R.acted++;
        act_on(R.target->t);
    }
    return c->eof_answer;
}

/* A blocking client socket connected to 127.0.0.1:port. */
static int raw_client(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons((uint16_t)port);
    CHECK_EQ_INT(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    return fd;
}

/* Two accepted connections, srv->conns[0] fed by cl[0] and [1] by cl[1]
 * (accepts keep the clients' order: each waits for the last). */
static void accept_pair(ll_loop loop, struct server *srv, int cl[2]) {
    int base = srv->n;
    for (int i = 0; i < 2; i++) {
        cl[i] = raw_client(srv->port);
        RUN_UNTIL(loop, srv->n == base + i + 1, 5.0);
    }
    R.pair[0] = &srv->conns[base];
    R.pair[1] = &srv->conns[base + 1];
}

static int index_of(const struct conn *c) { return c == R.pair[0] ? 0 : 1; }

static void send_both(int cl[2], const char *a, const char *b) {
    CHECK_EQ_INT(send(cl[0], a, strlen(a), 0), (long long)strlen(a));
    CHECK_EQ_INT(send(cl[1], b, strlen(b), 0), (long long)strlen(b));
}

/* Pause from the other's callback: the bytes read in that iteration wait;
 * resume delivers them first, then what the peer sent meanwhile. */
static void test_pause_from_other(void) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 2);
    srv.tmpl.hook = cross_hook;
    server_listen(&srv, loop, 0);
    int cl[2];
    memset(&R, 0, sizeof R);
    accept_pair(loop, &srv, cl);
    size_t seen[2] = {0, 0};
    for (int round = 0; round < ROUNDS; round++) {
        R.action = ACT_PAUSE;
        R.armed = 1;
        R.target = NULL;
        R.late_data = R.late_eof = 0;
        char a[16], b[16];
        snprintf(a, sizeof a, "a%d.", round);
        snprintf(b, sizeof b, "b%d.", round);
        send_both(cl, a, b);
        RUN_UNTIL(loop, R.target != NULL, 5.0);
        if (R.target == NULL)
            break;
        spin(loop, 3);
        tick(loop);
        CHECK_EQ_INT(R.late_data, 0);
        CHECK_EQ_INT(ll_transport_is_reading(R.target->t), 0);
        struct conn *tg = R.target;
        int ti = index_of(tg);
        CHECK_EQ_INT(tg->nbytes, seen[ti]); /* nothing of this round yet */
        /* More from the peer while paused: the kernel keeps it. */
        char more[16];
        snprintf(more, sizeof more, "m%d.", round);
        CHECK_EQ_INT(send(cl[ti], more, strlen(more), 0), (long long)strlen(more));
        spin(loop, 2);
        CHECK_EQ_INT(R.late_data, 0);
        R.target = NULL; /* from here on its events are expected */
        CHECK_EQ_INT(ll_transport_resume_reading(tg->t), 0);
        const char *first = ti == 0 ? a : b;
        size_t want = seen[ti] + strlen(first) + strlen(more);
        RUN_UNTIL(loop, tg->nbytes == want, 5.0);
        /* In order: the withheld bytes, then the newer ones. */
        char expect[64];
        snprintf(expect, sizeof expect, "%s%s", first, more);
        CHECK(tg->nbuf >= want && memcmp(tg->buf + seen[ti], expect, strlen(expect)) == 0);
        struct conn *other = R.pair[1 - ti];
        seen[ti] = want;
        seen[1 - ti] += strlen(ti == 0 ? b : a);
        CHECK_EQ_INT(other->nbytes, seen[1 - ti]);
    }
    CHECK_EQ_INT(R.acted, ROUNDS);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(R.pair[i]->bad_order, 0);
        CHECK_EQ_INT(R.pair[i]->nlost, 0);
        close(cl[i]);
    }
    server_free(&srv, loop);
    ll_release(loop);
}

/* Close or abort from the other's callback: the closed transport gets its
 * LL_CONNECTION_LOST (code 0) and nothing before it. */
static void close_or_abort_from_other(int action) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 2 * ROUNDS);
    srv.tmpl.hook = cross_hook;
    server_listen(&srv, loop, 0);
    memset(&R, 0, sizeof R);
    for (int round = 0; round < ROUNDS; round++) {
        int cl[2];
        accept_pair(loop, &srv, cl);
        R.action = action;
        R.armed = 1;
        R.target = NULL;
        R.late_data = R.late_eof = 0;
        send_both(cl, "first", "second");
        RUN_UNTIL(loop, R.target != NULL, 5.0);
        if (R.target == NULL)
            break;
        struct conn *tg = R.target;
        RUN_UNTIL(loop, tg->nlost == 1, 5.0);
        spin(loop, 2);
        CHECK_EQ_INT(R.late_data, 0);
        CHECK_EQ_INT(R.late_eof, 0);
        CHECK_EQ_INT(tg->ndata, 0);
        CHECK_EQ_INT(tg->nbytes, 0);
        CHECK_EQ_INT(tg->nev, 2); /* MADE, LOST */
        CHECK_EQ_INT(tg->lost_code, 0);
        CHECK_EQ_INT(tg->bad_order, 0);
        struct conn *other = R.pair[1 - index_of(tg)];
        CHECK_EQ_INT(other->ndata, 1);
        CHECK_EQ_INT(other->nlost, 0);
        R.target = NULL;
        ll_transport_close(other->t);
        RUN_UNTIL(loop, other->nlost == 1, 5.0);
        close(cl[0]);
        close(cl[1]);
    }
    CHECK_EQ_INT(R.acted, ROUNDS);
    server_free(&srv, loop);
    ll_release(loop);
}

static void test_close_from_other(void) { close_or_abort_from_other(ACT_CLOSE); }
static void test_abort_from_other(void) { close_or_abort_from_other(ACT_ABORT); }

/* The withheld event may be an EOF: it waits for resume too, and its
 * answer is applied only when the protocol has given it. */
static void test_pause_holds_eof(void) {
    ll_loop loop = new_loop();
    struct server srv;
    server_init(&srv, 2);
    srv.tmpl.hook = cross_hook;
    srv.tmpl.eof_answer = 1; /* keep open: write after EOF */
    server_listen(&srv, loop, 0);
    int cl[2];
    memset(&R, 0, sizeof R);
    accept_pair(loop, &srv, cl);
    R.action = ACT_PAUSE;
    /* conns[1]'s EOF and conns[0]'s data arrive together; only a data
     * event acts, so conns[0] pauses conns[1]. */
    R.armed = 1;
    /* epoll reports fds in the order they became ready: data first. */
    CHECK_EQ_INT(send(cl[0], "d", 1, 0), 1);
    CHECK_EQ_INT(shutdown(cl[1], SHUT_WR), 0);
    RUN_UNTIL(loop, R.target != NULL, 5.0);
    spin(loop, 3);
    tick(loop);
    if (R.target == R.pair[1]) {
        CHECK_EQ_INT(R.late_eof, 0);
        CHECK_EQ_INT(R.pair[1]->neof, 0);
        CHECK_EQ_INT(R.pair[1]->nlost, 0);
        R.target = NULL;
        CHECK_EQ_INT(ll_transport_resume_reading(R.pair[1]->t), 0);
        RUN_UNTIL(loop, R.pair[1]->neof == 1, 5.0);
        spin(loop, 2);
        /* Answered 1: still open for writing. */
        CHECK_EQ_INT(R.pair[1]->nlost, 0);
        CHECK_EQ_INT(ll_transport_write(R.pair[1]->t, "w", 1), 0);
        char c = 0;
        CHECK_EQ_INT(recv(cl[1], &c, 1, 0), 1);
        CHECK_EQ_INT(c, 'w');
    } else {
        CHECK(R.target == R.pair[1]); /* the EOF was read alone: no race to test */
    }
    close(cl[0]);
    close(cl[1]);
    server_free(&srv, loop);
    ll_release(loop);
}

/* A batch sink (protocol fn NULL) gets an array made before its call: the
 * library withholds what was stopped before the call, the sink what its
 * own calls stop (it sets their kind to 0, tracking them itself, or asks
 * ll_event_withhold for each event); either way a paused transport's bytes
 * come back on resume, in order, and a closed one's are dropped. */
static struct {
    int ask;              /* the sink asks ll_event_withhold instead of tracking */
    int action;           /* ACT_PAUSE or ACT_CLOSE (ACT_CLOSE: ask only) */
    ll_transport t[2];
    int nmade;
    int late;             /* read events of the paused transport in a later call */
    int own;              /* ... in the call that paused it (withheld by the sink) */
    int lost[2];
    int einval;           /* ll_event_withhold's refusals of what is not the array's */
    ll_transport target;  /* paused */
    int armed;
    char got[2][256];
    size_t ngot[2];
} B;

static int slot_of(ll_transport t) { return t == B.t[0] ? 0 : t == B.t[1] ? 1 : -1; }

/* ll_event_withhold refuses an event that is not one of the array's: a
 * copy, one past its end, a pointer into the middle of one. */
static void refusals(ll_event *evs, size_t n) {
    ll_event copy = evs[0];
    B.einval += ll_event_withhold(&copy) == LL_EINVAL && copy.kind == evs[0].kind;
    B.einval += ll_event_withhold(evs + n) == LL_EINVAL;
    B.einval += ll_event_withhold((ll_event *)((char *)evs + 8)) == LL_EINVAL;
}

static void sink(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    (void)loop;
    (void)arg;
    ll_transport paused_here = 0;
    if (B.ask)
        refusals(evs, n);
    for (size_t i = 0; i < n; i++) {
        ll_event *ev = &evs[i];
        if (B.ask) {
            int rc = ll_event_withhold(ev);
            CHECK(rc == 0 || rc == 1);
            if (rc == 1) {
                CHECK_EQ_INT(ev->kind, 0);
                CHECK_EQ_INT(ll_event_withhold(ev), 1); /* asked again */
                B.own++;
                continue;
            }
        }
        if (ev->kind == LL_CONNECTION_MADE && B.nmade < 2)
            B.t[B.nmade++] = ev->transport;
        int s = slot_of(ev->transport);
        if (ev->kind == LL_CONNECTION_LOST && s >= 0)
            B.lost[s]++;
        if (ev->kind != LL_DATA_RECEIVED || s < 0)
            continue;
        if (ev->transport == paused_here) {
            B.own++;
            ev->kind = 0; /* the contract: not delivered, kept for resume */
            continue;
        }
        if (ev->transport == B.target) {
            B.late++;
            continue;
        }
        if (B.ngot[s] + ev->len <= sizeof B.got[s]) {
            memcpy(B.got[s] + B.ngot[s], ev->data, ev->len);
            B.ngot[s] += ev->len;
        }
        if (B.armed) {
            B.armed = 0;
            B.target = B.t[1 - s];
            paused_here = B.ask ? 0 : B.target;
            if (B.action == ACT_CLOSE)
                CHECK_EQ_INT(ll_transport_close(B.target), 0);
            else
                CHECK_EQ_INT(ll_transport_pause_reading(B.target), 0);
        }
    }
}

/* A listener whose connections go to the sink, and two clients accepted. */
static ll_server sink_pair(ll_loop loop, int cl[2]) {
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, sink, NULL), 0);
    ll_server s = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, NULL, NULL, &s), 0);
    int port = 0;
    ll_server_port(s, &port);
    for (int i = 0; i < 2; i++) {
        cl[i] = raw_client(port);
        RUN_UNTIL(loop, B.nmade == i + 1, 5.0);
    }
    return s;
}

static void sink_pair_end(ll_loop loop, ll_server s, int cl[2]) {
    for (int i = 0; i < 2; i++) {
        ll_transport_abort(B.t[i]);
        close(cl[i]);
    }
    spin(loop, 3);
    ll_release(s);
    ll_release(loop);
}

static void batch_sink_pause(int ask) {
    ll_loop loop = new_loop();
    memset(&B, 0, sizeof B);
    B.ask = ask;
    B.action = ACT_PAUSE;
    int cl[2];
    ll_server s = sink_pair(loop, cl);
    char want[2][256] = {"", ""};
    for (int round = 0; round < ROUNDS; round++) {
        B.armed = 1;
        B.target = 0;
        B.late = 0;
        char a[16], b[16], more[16];
        snprintf(a, sizeof a, "x%d.", round);
        snprintf(b, sizeof b, "y%d.", round);
        send_both(cl, a, b);
        RUN_UNTIL(loop, B.target != 0, 5.0);
        if (B.target == 0)
            break;
        int ti = slot_of(B.target);
        snprintf(more, sizeof more, "m%d.", round);
        CHECK_EQ_INT(send(cl[ti], more, strlen(more), 0), (long long)strlen(more));
        spin(loop, 3);
        tick(loop);
        CHECK_EQ_INT(B.late, 0);
        strcat(want[ti], ti == 0 ? a : b);
        strcat(want[ti], more);
        strcat(want[1 - ti], ti == 0 ? b : a);
        ll_transport tg = B.target;
        B.target = 0;
        CHECK_EQ_INT(ll_transport_resume_reading(tg), 0);
        RUN_UNTIL(loop, B.ngot[ti] == strlen(want[ti]), 5.0);
        CHECK(B.ngot[ti] == strlen(want[ti]) && memcmp(B.got[ti], want[ti], B.ngot[ti]) == 0);
        CHECK(B.ngot[1 - ti] == strlen(want[1 - ti]) && memcmp(B.got[1 - ti], want[1 - ti], B.ngot[1 - ti]) == 0);
    }
    /* Both reads came in one iteration, so one array: the sink withheld. */
    CHECK_EQ_INT(B.own, ROUNDS);
    CHECK(ask ? B.einval > 0 && B.einval % 3 == 0 : B.einval == 0);
    sink_pair_end(loop, s, cl);
}

static void test_batch_sink_pause(void) { batch_sink_pause(0); }

/* The same, the sink asking ll_event_withhold for each event as it
 * reaches it rather than tracking what it paused. */
static void test_batch_sink_pause_withhold_call(void) { batch_sink_pause(1); }

/* Closed by the sink, asking ll_event_withhold: the other's bytes of the
 * same array are withheld and dropped; its LL_CONNECTION_LOST comes once. */
static void test_batch_sink_close_withhold_call(void) {
    ll_loop loop = new_loop();
    memset(&B, 0, sizeof B);
    B.ask = 1;
    B.action = ACT_CLOSE;
    int cl[2];
    ll_server s = sink_pair(loop, cl);
    B.armed = 1;
    send_both(cl, "a.", "b.");
    RUN_UNTIL(loop, B.target != 0, 5.0);
    int ti = slot_of(B.target);
    if (ti >= 0) {
        RUN_UNTIL(loop, B.lost[ti] == 1, 5.0);
        spin(loop, 3);
        CHECK_EQ_INT(B.own, 1);
        CHECK_EQ_INT(B.late, 0);
        CHECK_EQ_INT(B.ngot[ti], 0);
        CHECK_EQ_INT(B.lost[ti], 1);
    }
    sink_pair_end(loop, s, cl);
}

/* Outside a batch sink's call there is no array: LL_EINVAL, the kind
 * kept; in a protocol fn too (the library withholds before calling one). */
static int proto_einval, proto_calls;
static int refusing_proto(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    ll_event copy = *ev;
    proto_einval += ll_event_withhold(&copy) == LL_EINVAL && copy.kind == ev->kind;
    proto_calls++;
    return 0;
}

static void test_withhold_call_outside_a_sink(void) {
    CHECK_EQ_INT(ll_event_withhold(NULL), LL_EINVAL);
    ll_event ev = {0};
    ev.kind = LL_DATA_RECEIVED;
    CHECK_EQ_INT(ll_event_withhold(&ev), LL_EINVAL);
    CHECK_EQ_INT(ev.kind, LL_DATA_RECEIVED);
    ll_loop loop = new_loop();
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, refusing_proto, NULL, &t), 0);
    CHECK_EQ_INT(write(sv[1], "z", 1), 1);
    RUN_UNTIL(loop, proto_calls >= 2, 5.0); /* made, data */
    CHECK_EQ_INT(proto_einval, proto_calls);
    ll_transport_abort(t);
    spin(loop, 3);
    close(sv[1]);
    ll_release(loop);
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    RUN_TEST(test_pause_from_other);
    RUN_TEST(test_close_from_other);
    RUN_TEST(test_abort_from_other);
    RUN_TEST(test_pause_holds_eof);
    RUN_TEST(test_batch_sink_pause);
    RUN_TEST(test_batch_sink_pause_withhold_call);
    RUN_TEST(test_batch_sink_close_withhold_call);
    RUN_TEST(test_withhold_call_outside_a_sink);
    return CHECK_REPORT();
}
