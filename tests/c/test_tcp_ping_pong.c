/* SPDX-License-Identifier: MIT */
/* A ping-pong between two transports of one loop under
 * ll_loop_run_forever, where every iteration reads and writes (the shape
 * of a proxy or a test harness): every byte arrives once and in order; a
 * reader fd that a protocol's write made ready runs; pausing reading from
 * a callback (with the peer's bytes already on their way) and resuming it
 * later loses and reorders nothing, and nothing is delivered while paused;
 * a stop from a protocol ends the run after that iteration, and the next
 * run goes on exactly where it stopped. (The loop may run such iterations
 * in fewer crossings; this is what must not change.) */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

#define ROUNDS 3000
#define MSG 16

struct pp {
    ll_transport client;
    int sent, got;     /* messages sent, whole echoes received */
    char buf[MSG];     /* the echo being received */
    size_t have;
    int pause_every;   /* pause the client's reading every n echoes (0: never) */
    int paused;
    int paused_events; /* data events delivered while paused: must stay 0 */
    int sp[2];         /* each echo writes one byte to sp[0]; a reader watches sp[1] */
    int reader_bytes;
    int stop_at;       /* stop the loop at this many echoes (0: at ROUNDS) */
    int bad;           /* a wrong byte, or a failed call */
    int timed_out;
};

static void message(int i, char out[MSG]) {
    char tmp[MSG + 1];
    snprintf(tmp, sizeof tmp, "%0*d\n", MSG - 1, i);
    memcpy(out, tmp, MSG);
}

static void send_next(struct pp *p) {
    char m[MSG];
    message(p->sent, m);
    if (ll_transport_write(p->client, m, MSG) != 0)
        p->bad++;
    p->sent++;
}

static int echo(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop;
    (void)arg;
    if (ev->kind == LL_DATA_RECEIVED)
        ll_transport_write(ev->transport, ev->data, ev->len);
    return 0;
}

static void resume_cb(ll_loop loop, void *arg) {
    (void)loop;
    struct pp *p = arg;
    p->paused = 0;
    if (ll_transport_resume_reading(p->client) != 0)
        p->bad++;
}

static int client(ll_loop loop, const ll_event *ev, void *arg) {
    struct pp *p = arg;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        p->client = ev->transport;
        send_next(p);
        break;
    case LL_DATA_RECEIVED:
        if (p->paused)
            p->paused_events++;
        for (size_t i = 0; i < ev->len; i++) {
            char want[MSG];
            message(p->got, want);
            if (((const char *)ev->data)[i] != want[p->have])
                p->bad++;
            if (++p->have < MSG)
                continue;
            p->have = 0;
            p->got++;
            if (write(p->sp[0], "x", 1) != 1)
                p->bad++;
            if (p->got == ROUNDS || p->got == p->stop_at) {
                ll_loop_stop(loop);
                continue;
            }
            send_next(p);
            if (p->pause_every && p->got % p->pause_every == 0) {
                /* The echo of what was just sent is on its way: it must
                 * wait in the kernel until the resume. */
                p->paused = 1;
                if (ll_transport_pause_reading(p->client) != 0 ||
                    ll_call_later(loop, 0.0005, resume_cb, p, NULL) != 0)
                    p->bad++;
            }
        }
        break;
    }
    return 0;
}

static void on_reader(ll_loop loop, int fd, void *arg) {
    (void)loop;
    struct pp *p = arg;
    char b[256];
    ssize_t n = read(fd, b, sizeof b);
    if (n > 0)
        p->reader_bytes += (int)n;
}

static void watchdog(ll_loop loop, void *arg) {
    ((struct pp *)arg)->timed_out = 1;
    ll_loop_stop(loop);
}

/* Runs the ping-pong with p's settings; with p->stop_at, the protocol
 * stops the run there and a second run goes on to the end. */
static void ping_pong(struct pp *p) {
    ll_loop loop;
    ll_server server;
    ll_future connecting = 0;
    ll_handle dog = 0;
    int port = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p->sp), 0);
    CHECK_EQ_INT(ll_add_reader(loop, p->sp[1], on_reader, p), 0);
    CHECK_EQ_INT(ll_tcp_listen(loop, "127.0.0.1", 0, 16, 0, echo, NULL, &server), 0);
    CHECK_EQ_INT(ll_server_port(server, &port), 0);
    CHECK_EQ_INT(ll_call_later(loop, 30.0, watchdog, p, &dog), 0);
    CHECK_EQ_INT(ll_tcp_connect(loop, "127.0.0.1", port, client, p, &connecting), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    if (p->stop_at) {
        /* Stopped by the protocol: exactly there, nothing delivered after. */
        CHECK_EQ_INT(p->got, p->stop_at);
        CHECK_EQ_INT(p->sent, p->stop_at);
        p->stop_at = 0;
        send_next(p);
        CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    }
    CHECK_EQ_INT(p->timed_out, 0);
    CHECK_EQ_INT(p->got, ROUNDS);
    CHECK_EQ_INT(p->sent, ROUNDS);
    CHECK_EQ_INT(p->bad, 0);
    CHECK_EQ_INT(p->paused_events, 0);
    /* The last byte's reader runs in the next iteration. */
    for (int i = 0; i < 10 && p->reader_bytes < p->got; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    CHECK_EQ_INT(p->reader_bytes, p->got);
    ll_handle_cancel(dog);
    ll_release(dog);
    ll_release(connecting);
    ll_transport_close(p->client);
    for (int i = 0; i < 5; i++)
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
    ll_remove_reader(loop, p->sp[1]);
    ll_release(server);
    CHECK_EQ_INT(ll_release(loop), 0);
    close(p->sp[0]);
    close(p->sp[1]);
}

static void test_ping_pong_one_loop(void) {
    struct pp p = {0};
    ping_pong(&p);
}

static void test_pause_resume_from_callbacks(void) {
    struct pp p = {.pause_every = 7};
    ping_pong(&p);
}

static void test_stop_from_protocol_then_run_again(void) {
    struct pp p = {.stop_at = 1234, .pause_every = 50};
    ping_pong(&p);
}

int main(void) {
    RUN_TEST(test_ping_pong_one_loop);
    RUN_TEST(test_pause_resume_from_callbacks);
    RUN_TEST(test_stop_from_protocol_then_run_again);
    return CHECK_REPORT();
}
