/* SPDX-License-Identifier: MIT */
/* udp_batch.c — datagrams in batches: a sender hands 100 datagrams to
 * ll_udp_sendmany in one call (sendmmsg on Linux); the receiver's batch
 * sink gets what one readiness read (recvmmsg) in one call, and counts
 * how many calls it took. */
#include <string.h>

#include "must.h"

struct receiver {
    int datagrams, calls, in_order;
};

static void on_batch(ll_loop loop, ll_event *evs, size_t n, void *arg) {
    struct receiver *r = arg;
    r->calls++;
    for (size_t i = 0; i < n; i++) {
        if (evs[i].kind != LL_DATAGRAM_RECEIVED)
            continue;
        int v;
        memcpy(&v, evs[i].data, sizeof v);
        r->in_order &= v == r->datagrams;
        r->datagrams++;
    }
    if (r->datagrams == 100)
        MUST(ll_loop_stop(loop));
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    struct receiver r = {.in_order = 1};
    MUST(ll_loop_set_event_batch(loop, on_batch, &r));
    ll_transport rx, tx;
    MUST(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, NULL, NULL, &rx)); /* NULL fn: the batch sink */
    unsigned char to[128];
    uint32_t tolen = sizeof to;
    MUST(ll_transport_sockname(rx, to, &tolen));
    MUST(ll_udp_open(loop, "127.0.0.1", 0, NULL, 0, 0, NULL, NULL, &tx));

    int values[100];
    ll_datagram d[100];
    for (int i = 0; i < 100; i++) {
        values[i] = i;
        d[i] = (ll_datagram){.data = &values[i], .len = sizeof values[i], .addr = to, .addrlen = tolen};
    }
    MUST(ll_udp_sendmany(tx, d, 100, 0)); /* the records may be reused at once */
    MUST(ll_loop_run_forever(loop));
    EXPECT(r.datagrams == 100 && r.in_order);
    EXPECT(r.calls <= 4); /* 100 datagrams waiting: read 64 at a time */
    printf("100 datagrams in order, in %d batch calls\n", r.calls);

    MUST(ll_transport_close(rx));
    MUST(ll_transport_close(tx));
    MUST(ll_loop_close(loop));
    return 0;
}
