/* SPDX-License-Identifier: MIT */
/* names_listen.c — listening by name from a running loop: ll_tcp_listen
 * would have to block the loop on the lookup, so it answers LL_ENEEDASYNC;
 * ll_tcp_listen_ex resolves the name on the resolver pool and its future's
 * value is the server. */
#include <unistd.h>

#include "must.h"

static char name[256];
static ll_future listening;
static ll_loop the_loop;

static int quiet(ll_loop loop, const ll_event *ev, void *arg) {
    (void)loop, (void)ev, (void)arg;
    return 0;
}

static void listened(ll_future f, void *arg) {
    ll_loop loop = *(ll_loop *)arg;
    uintptr_t v;
    MUST(ll_future_result(f, &v));
    int port;
    MUST(ll_server_port((ll_server)v, &port));
    printf("listening on %s port %d\n", name, port);
    MUST(ll_release((ll_server)v));
    MUST(ll_loop_stop(loop));
}

static void start(ll_loop loop, void *arg) {
    (void)arg;
    ll_server srv;
    EXPECT(ll_tcp_listen(loop, name, 0, 0, 0, quiet, NULL, &srv) == LL_ENEEDASYNC);
    ll_listen_options o = {.size = sizeof o, .host = name, .port = 0};
    MUST(ll_tcp_listen_ex(loop, &o, quiet, NULL, &listening));
    MUST(ll_future_add_done_callback(listening, listened, &the_loop));
}

int main(void) {
    EXPECT(gethostname(name, sizeof name - 1) == 0); /* this machine's own name */
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    the_loop = loop;
    MUST(ll_call_soon(loop, start, NULL, NULL));
    MUST(ll_loop_run_forever(loop));
    MUST(ll_release(listening));
    MUST(ll_loop_close(loop));
    return 0;
}
