/* SPDX-License-Identifier: MIT */
/*
 * soak.c — a long run of the whole library at once, for `make soak`
 * (not part of `make test`): an echo server with SOAK_CONNS client
 * connections (default 1000) that ping it at random intervals and are
 * closed and reconnected at a steady rate, timers scheduled and cancelled
 * all the time, futures made and released, and subprocesses started (some
 * run to exit, some are killed). Every SOAK_INTERVAL seconds (default 60)
 * it writes one CSV row: RSS, open fds, threads and the work done so far.
 * It stops after SOAK_MINUTES (default 60) and prints a summary of the
 * RSS and fd curves. Exit status 1 if the work stalled or the counts
 * grew (see summarize()).
 *
 * Usage: soak [out.csv]   (environment: SOAK_MINUTES, SOAK_INTERVAL, SOAK_CONNS)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "soak_stats.h"

#define MSG_LEN 64
#define MAX_CONNS 4000
#define CHURN_PER_SEC 20    /* connections closed and reopened each second */
#define TIMERS_PER_TICK 50  /* timers scheduled every 10 ms tick; half are cancelled */
#define SPAWNS_PER_SEC 4    /* children started each second; every other one is killed */

struct client {
    int idx;
    ll_transport t;
    ll_future connecting;
    size_t got;           /* bytes of the current echo received */
    int closing;
    double sent_at;
};

static ll_loop loop;
static int nconns = 1000;
static struct client clients[MAX_CONNS];
static struct soak_counts counts;
static double t0, end_at, next_sample, interval = 60;
static FILE *csv;
static struct soak_series series;
static ll_server server;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rnd(double lo, double hi) { return lo + (hi - lo) * ((double)rand() / RAND_MAX); }

/* ---- the echo server ---- */

static int echo_proto(ll_loop l, const ll_event *ev, void *arg) {
    (void)l;
    (void)arg;
    if (ev->kind == LL_DATA_RECEIVED && ll_transport_write(ev->transport, ev->data, ev->len) != 0)
        counts.errors++;
    if (ev->kind == LL_CONNECTION_MADE)
        counts.accepted++;
    return 0;
}

/* ---- clients ---- */

static void connect_client(struct client *c);

static void ping(ll_loop l, void *arg) {
    (void)l;
    struct client *c = arg;
    if (c->t == 0 || c->closing)
        return;
    char msg[MSG_LEN];
    memset(msg, 'a' + c->idx % 26, sizeof msg);
    c->got = 0;
    c->sent_at = now_s();
    if (ll_transport_write(c->t, msg, sizeof msg) != 0)
        counts.errors++;
}

static void reconnect_later(ll_loop l, void *arg) {
    (void)l;
    connect_client(arg);
}

static int client_proto(ll_loop l, const ll_event *ev, void *arg) {
    struct client *c = arg;
    switch (ev->kind) {
    case LL_CONNECTION_MADE:
        c->t = ev->transport;
        c->closing = 0;
        ping(l, c);
        break;
    case LL_DATA_RECEIVED:
        c->got += ev->len;
        if (c->got >= MSG_LEN) {
            counts.roundtrips++;
            c->got = 0;
            if (ll_call_later(l, rnd(0.5, 1.5), ping, c, NULL) != 0)
                counts.errors++;
        }
        break;
    case LL_CONNECTION_LOST:
        if (ev->code != 0)
            counts.errors++;
        c->t = 0;
        counts.closed++;
        if (ll_call_later(l, 0.01, reconnect_later, c, NULL) != 0)
            counts.errors++;
        break;
    }
    return 0;
}

static void connected(ll_future f, void *arg) {
    struct client *c = arg;
    uintptr_t v = 0;
    if (ll_future_result(f, &v) != 0) {
        counts.errors++;
        ll_call_later(loop, 0.1, reconnect_later, c, NULL);
    } else {
        counts.connects++;
    }
    c->connecting = 0;
    ll_release(f);
}

static void connect_client(struct client *c) {
    int port = 0;
    ll_server_port(server, &port);
    if (ll_tcp_connect(loop, "127.0.0.1", port, client_proto, c, &c->connecting) != 0 ||
        ll_future_add_done_callback(c->connecting, connected, c) != 0)
        counts.errors++;
}

/* ---- churn: connections, timers, futures, processes ---- */

static void timer_fired(ll_loop l, void *arg) {
    (void)l;
    (void)arg;
    counts.timers++;
}

static int child_proto(ll_loop l, const ll_event *ev, void *arg) {
    (void)l;
    (void)arg;
    if (ev->kind == LL_PROCESS_EXITED) {
        counts.exits++;
        /* released here, from its own last event */
        if (ll_release(ev->transport) != 0)
            counts.errors++;
    }
    return 0;
}

static void kill_child(ll_loop l, void *arg) {
    (void)l;
    ll_process p = (ll_process)(uintptr_t)arg;
    int rc = ll_process_kill(p);
    if (rc != 0 && rc != -ESRCH /* already gone */ && rc != LL_EBADHANDLE)
        counts.errors++;
}

static void spawn_one(int kill_it) {
    static const char *const true_argv[] = {"true", NULL};
    static const char *const sleep_argv[] = {"sleep", "5", NULL};
    ll_process_options o;
    memset(&o, 0, sizeof o);
    o.argv = kill_it ? sleep_argv : true_argv;
    o.file = o.argv[0];
    o.stdio[0] = LL_STDIO_DEVNULL;
    o.stdio[1] = LL_STDIO_PIPE;
    o.stdio[2] = LL_STDIO_DEVNULL;
    ll_process p = 0;
    if (ll_spawn(loop, &o, child_proto, NULL, &p) != 0) {
        counts.errors++;
        return;
    }
    counts.spawns++;
    if (kill_it)
        ll_call_later(loop, rnd(0.01, 0.2), kill_child, (void *)(uintptr_t)p, NULL);
}

static void sample(void);

static void every_second(ll_loop l, void *arg) {
    (void)arg;
    for (int i = 0; i < CHURN_PER_SEC; i++) {
        struct client *c = &clients[rand() % nconns];
        if (c->t != 0 && !c->closing) {
            c->closing = 1;
            ll_transport_close(c->t);
        }
    }
    for (int i = 0; i < SPAWNS_PER_SEC; i++)
        spawn_one(i % 2);
    if (now_s() >= next_sample)
        sample();
    if (now_s() >= end_at)
        ll_loop_stop(l);
    else
        ll_call_later(l, 1.0, every_second, NULL, NULL);
}

static void every_tick(ll_loop l, void *arg) {
    (void)arg;
    ll_handle hs[TIMERS_PER_TICK];
    for (int i = 0; i < TIMERS_PER_TICK; i++) {
        hs[i] = 0;
        if (ll_call_later(l, rnd(0, 0.05), timer_fired, NULL, &hs[i]) != 0)
            counts.errors++;
    }
    for (int i = 0; i < TIMERS_PER_TICK; i++) {
        if (i % 2)
            ll_handle_cancel(hs[i]);
        ll_release(hs[i]);
    }
    /* futures: made, finished, released */
    for (int i = 0; i < 20; i++) {
        ll_future f = 0;
        if (ll_future_new(l, &f) != 0 || ll_future_set_result(f, 1, NULL) != 0 || ll_release(f) != 0)
            counts.errors++;
        else
            counts.futures++;
    }
    ll_call_later(l, 0.01, every_tick, NULL, NULL);
}

static void sample(void) {
    struct soak_row r;
    r.elapsed = now_s() - t0;
    r.rss_kb = soak_rss_kb();
    r.fds = soak_count_fds();
    r.threads = soak_threads();
    int live = 0;
    for (int i = 0; i < nconns; i++)
        live += clients[i].t != 0;
    r.live_conns = live;
    r.c = counts;
    soak_write_row(csv, &r);
    soak_series_add(&series, &r);
    next_sample += interval;
}

int main(int argc, char **argv) {
    double minutes = getenv("SOAK_MINUTES") ? atof(getenv("SOAK_MINUTES")) : 60;
    if (getenv("SOAK_INTERVAL"))
        interval = atof(getenv("SOAK_INTERVAL"));
    if (getenv("SOAK_CONNS"))
        nconns = atoi(getenv("SOAK_CONNS"));
    if (nconns < 1 || nconns > MAX_CONNS || !(minutes > 0) || !(interval > 0)) {
        fprintf(stderr, "soak: bad SOAK_MINUTES / SOAK_INTERVAL / SOAK_CONNS\n");
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)(3 * nconns + 200)) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    csv = fopen(argc > 1 ? argv[1] : "soak.csv", "w");
    if (csv == NULL) {
        perror("soak: csv");
        return 2;
    }
    soak_write_header(csv);
    srand(12345);
    if (ll_loop_new(&loop) != 0 || ll_tcp_listen(loop, "127.0.0.1", 0, 1024, 0, echo_proto, NULL, &server) != 0) {
        fprintf(stderr, "soak: cannot listen\n");
        return 2;
    }
    t0 = now_s();
    end_at = t0 + minutes * 60;
    next_sample = t0;
    for (int i = 0; i < nconns; i++) {
        clients[i].idx = i;
        connect_client(&clients[i]);
    }
    ll_call_soon(loop, every_tick, NULL, NULL);
    ll_call_later(loop, 1.0, every_second, NULL, NULL);
    int rc = ll_loop_run_forever(loop);
    sample();
    fclose(csv);
    ll_release(server);
    ll_release(loop);
    if (rc != 0) {
        fprintf(stderr, "soak: run_forever: %s\n", ll_strerror(rc));
        return 1;
    }
    return soak_summarize(&series, stdout) ? 0 : 1;
}
