/* SPDX-License-Identifier: MIT */
/* The write fast path against a transport that Go ended on its own: a read
 * error in the I/O phase closes the fd at once, and the transport's
 * LL_CONNECTION_LOST is delivered later in the batch. A write to it from
 * another transport's callback in between must be dropped without a send
 * from C (the core turns the slot's direct flag off before it closes the
 * fd). send_counter.h counts the fast path's sends (Go writes with raw
 * system calls). */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "net_util.h"
#include "send_counter.h"


/* A connected TCP pair: *fd for a transport, *peer the other end. */
static void tcp_pair(int *fd, int *peer) {
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    CHECK_EQ_INT(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
    CHECK_EQ_INT(listen(ls, 1), 0);
    CHECK_EQ_INT(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
    *peer = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_EQ_INT(connect(*peer, (struct sockaddr *)&sa, sizeof sa), 0);
    *fd = accept(ls, NULL, NULL);
    CHECK(*fd >= 0);
    close(ls);
}

/* The peer of A resets while B's peer sends: Go reads both in one I/O
 * phase, ending A on its own (the read error closes A's fd at once) while
 * A's LL_CONNECTION_LOST waits behind B's data in the batch. B's protocol
 * then writes to A: dropped (0: A was lost, not closed by the host), or
 * LL_EBADHANDLE once A's id ended, never a send from C on A's closed,
 * perhaps reused, fd. */
struct cross {
    ll_transport a;
    struct conn *ca;
    int rc, sent, lost_first, ran;
};

static int write_to_a(struct conn *c, ll_loop loop, const ll_event *ev) {
    (void)loop;
    struct cross *x = c->user;
    if (ev->kind == LL_DATA_RECEIVED && !x->ran) {
        int s0 = c_sends;
        x->lost_first = x->ca->nlost;
        x->rc = ll_transport_write(x->a, "late", 4);
        x->sent = c_sends - s0;
        x->ran = 1;
    }
    return 0;
}

static void test_peer_reset_ends_before_lost(void) {
    int seen_window = 0;
    for (int round = 0; round < 20; round++) {
        ll_loop loop = new_loop();
        int fa, pa, fb, pb;
        tcp_pair(&fa, &pa);
        tcp_pair(&fb, &pb);
        struct conn ca, cb;
        conn_init(&ca);
        conn_init(&cb);
        struct cross x = {.ca = &ca};
        cb.hook = write_to_a;
        cb.user = &x;
        CHECK_EQ_INT(ll_transport_open(loop, fa, LL_STREAM, conn_proto, &ca, &ca.t), 0);
        CHECK_EQ_INT(ll_transport_open(loop, fb, LL_STREAM, conn_proto, &cb, &cb.t), 0);
        x.a = ca.t;
        RUN_UNTIL(loop, ca.nmade == 1 && cb.nmade == 1, 5.0);
        CHECK_EQ_INT(send(pb, "b", 1, 0), 1);
        struct linger lg = {1, 0};
        CHECK_EQ_INT(setsockopt(pa, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
        close(pa); /* RST */
        usleep(2000); /* both are in the kernel before the loop polls */
        RUN_UNTIL(loop, x.ran && ca.nlost == 1, 5.0);
        CHECK_EQ_INT(x.sent, 0);
        CHECK(x.rc == 0 || x.rc == LL_EBADHANDLE);
        CHECK(ca.lost_code == -ECONNRESET || ca.lost_code == -EPIPE);
        seen_window += x.rc == 0 && !x.lost_first;
        ll_transport_abort(cb.t);
        RUN_UNTIL(loop, cb.nlost == 1, 5.0);
        close(pb);
        STILL_RUNS(loop);
        ll_release(loop);
    }
    /* The case this is about: A closed, its LOST not yet delivered. */
    printf("  A's write dropped before its LOST in %d of 20 rounds\n", seen_window);
    CHECK(seen_window > 0);
}

int main(void) {
    main_thread = pthread_self();
    RUN_TEST(test_peer_reset_ends_before_lost);
    return CHECK_REPORT();
}
