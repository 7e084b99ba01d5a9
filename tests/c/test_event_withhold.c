/* SPDX-License-Identifier: MIT */
/* ll_event_withhold (libloop/transport.h): a batch sink that asks, for each
 * event as it reaches it, need not track what its own calls stopped. Two
 * clients send in one iteration, so both reads reach the sink in one
 * array; handling the first pauses (or closes) the other transport, whose
 * event the call then withholds: kind 0, redelivered after resume before
 * what the peer sent later (or dropped after close). And what the call
 * refuses: an event not of the array a sink holds now. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

#define ROUNDS 10

enum { ACT_PAUSE = 1, ACT_CLOSE };

static struct {
    int action;
    ll_transport t[2];
    int nmade;
    int armed;
    ll_transport target; /* stopped this round */
    int withheld;        /* events ll_event_withhold returned 1 for */
    int late;            /* read events of target delivered while stopped */
    int lost[2];
    int einval;          /* LL_EINVAL for a copy, past the end, misaligned */
    int others;          /* non-read events the call left alone (0) */
    char got[2][256];
    size_t ngot[2];
} S;

static int slot_of(ll_transport t) { return t == S.t[0] ? 0 : t == S.t[1] ? 1 : -1; }

/* The sink's own misuse checks, once per call with an event in hand. */
static void misuse(ll_event *evs, size_t n) {
    ll_event copy = evs[0];
    S.einval += ll_event_withhold(&copy) == LL_EINVAL;
    S.einval += ll_event_withhold(evs + n) == LL_EINVAL;
    S.einval += ll_event_withhold((ll_event *)((char *)evs + 8)) == LL_EINVAL;
}

static void sink(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    (void)loop;
    (void)arg;
    misuse(evs, n);
    for (size_t i = 0; i < n; i++) {
        ll_event *ev = &evs[i];
        int rc = ll_event_withhold(ev);
        if (rc == 1) {
            CHECK_EQ_INT(ev->kind, 0);
            CHECK_EQ_INT(ll_event_withhold(ev), 1); /* asked again: still withheld */
            S.withheld++;
            continue;
        }
        CHECK_EQ_INT(rc, 0);
        int s = slot_of(ev->transport);
        if (ev->kind == LL_CONNECTION_MADE && S.nmade < 2)
            S.t[S.nmade++] = ev->transport;
        if (ev->kind == LL_CONNECTION_LOST && s >= 0)
            S.lost[s]++;
        if (ev->kind != LL_DATA_RECEIVED) {
            S.others++;
            continue;
        }
        if (s < 0)
            continue;
        if (ev->transport == S.target) {
            S.late++;
            continue;
        }
        if (S.ngot[s] + ev->len <= sizeof S.got[s]) {
            memcpy(S.got[s] + S.ngot[s], ev->data, ev->len);
            S.ngot[s] += ev->len;
        }
        if (S.armed) {
            S.armed = 0;
            S.target = S.t[1 - s];
            if (S.action == ACT_PAUSE)
                CHECK_EQ_INT(ll_transport_pause_reading(S.target), 0);
            else
                CHECK_EQ_INT(ll_transport_close(S.target), 0);
        }
    }
}

static int raw_client(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {0};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons((uint16_t)port);
    CHECK_EQ_INT(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    return fd;
}

static void send_str(int fd, const char *s) {
    CHECK_EQ_INT(send(fd, s, strlen(s), 0), (long long)strlen(s));
}

/* A listener routing to the sink and two accepted clients. */
static ll_server open_pair(ll_loop loop, int cl[2]) {
    CHECK_EQ_INT(ll_loop_set_event_batch(loop, sink, NULL), 0);
    ll_server s = 0;
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 0, 0, NULL, NULL, &s), 0);
    int port = 0;
    ll_server_port(s, &port);
    for (int i = 0; i < 2; i++) {
        cl[i] = raw_client(port);
        RUN_UNTIL(loop, S.nmade == i + 1, 5.0);
    }
    return s;
}

/* Paused from the sink: the other's bytes of the same array are withheld
 * by the call and come back on resume, before the bytes sent meanwhile. */
static void test_pause_in_the_same_array(void) {
    ll_loop loop = new_loop();
    memset(&S, 0, sizeof S);
    S.action = ACT_PAUSE;
    int cl[2];
    ll_server s = open_pair(loop, cl);
    char want[2][256] = {"", ""};
    for (int round = 0; round < ROUNDS; round++) {
        S.armed = 1;
        S.target = 0;
        S.late = 0;
        char a[16], b[16], more[16];
        snprintf(a, sizeof a, "x%d.", round);
        snprintf(b, sizeof b, "y%d.", round);
        send_str(cl[0], a);
        send_str(cl[1], b);
        RUN_UNTIL(loop, S.target != 0, 5.0);
        if (S.target == 0)
            break;
        int ti = slot_of(S.target);
        snprintf(more, sizeof more, "m%d.", round);
        send_str(cl[ti], more);
        spin(loop, 3);
        tick(loop);
        CHECK_EQ_INT(S.late, 0);
        strcat(want[ti], ti == 0 ? a : b);
        strcat(want[ti], more);
        strcat(want[1 - ti], ti == 0 ? b : a);
        ll_transport tg = S.target;
        S.target = 0;
        CHECK_EQ_INT(ll_transport_resume_reading(tg), 0);
        RUN_UNTIL(loop, S.ngot[ti] == strlen(want[ti]), 5.0);
        CHECK(S.ngot[ti] == strlen(want[ti]) && memcmp(S.got[ti], want[ti], S.ngot[ti]) == 0);
        CHECK(S.ngot[1 - ti] == strlen(want[1 - ti]) &&
              memcmp(S.got[1 - ti], want[1 - ti], S.ngot[1 - ti]) == 0);
    }
    /* Both reads came in one iteration: the call withheld one a round. */
    CHECK_EQ_INT(S.withheld, ROUNDS);
    CHECK(S.einval > 0 && S.einval % 3 == 0);
    CHECK(S.others >= 2); /* the two LL_CONNECTION_MADE, left alone */
    for (int i = 0; i < 2; i++) {
        ll_transport_abort(S.t[i]);
        close(cl[i]);
    }
    spin(loop, 3);
    ll_release(s);
    ll_release(loop);
}

/* Closed from the sink: the other's bytes of the same array are withheld
 * and dropped; its LL_CONNECTION_LOST still comes, once. */
static void test_close_in_the_same_array(void) {
    ll_loop loop = new_loop();
    memset(&S, 0, sizeof S);
    S.action = ACT_CLOSE;
    int cl[2];
    ll_server s = open_pair(loop, cl);
    S.armed = 1;
    send_str(cl[0], "a.");
    send_str(cl[1], "b.");
    RUN_UNTIL(loop, S.target != 0, 5.0);
    int ti = slot_of(S.target);
    if (ti >= 0) {
        RUN_UNTIL(loop, S.lost[ti] == 1, 5.0);
        spin(loop, 3);
        CHECK_EQ_INT(S.withheld, 1);
        CHECK_EQ_INT(S.late, 0);
        CHECK_EQ_INT(S.ngot[ti], 0);
        CHECK_EQ_INT(S.lost[ti], 1);
    }
    for (int i = 0; i < 2; i++) {
        ll_transport_abort(S.t[i]);
        close(cl[i]);
    }
    spin(loop, 3);
    ll_release(s);
    ll_release(loop);
}

/* Outside a batch sink's call there is no array: LL_EINVAL, kind kept;
 * from a protocol fn too (the library withholds before calling one). */
static int proto_einval, proto_calls;
static int proto_fn(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    ll_event copy = *ev;
    proto_einval += ll_event_withhold(&copy) == LL_EINVAL && copy.kind == ev->kind;
    proto_calls++;
    return 0;
}

static void test_refused_outside_a_sink(void) {
    CHECK_EQ_INT(ll_event_withhold(NULL), LL_EINVAL);
    ll_event ev = {0};
    ev.kind = LL_DATA_RECEIVED;
    CHECK_EQ_INT(ll_event_withhold(&ev), LL_EINVAL);
    CHECK_EQ_INT(ev.kind, LL_DATA_RECEIVED);

    ll_loop loop = new_loop();
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_transport_open(loop, sv[0], LL_STREAM, proto_fn, NULL, &t), 0);
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
    RUN_TEST(test_pause_in_the_same_array);
    RUN_TEST(test_close_in_the_same_array);
    RUN_TEST(test_refused_outside_a_sink);
    return CHECK_REPORT();
}
