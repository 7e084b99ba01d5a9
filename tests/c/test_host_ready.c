/* SPDX-License-Identifier: MIT */
/* ll_loop_host_ready called from inside the loop (a callback, a protocol's
 * event) as a binding's call_soon calls it: the host queue then runs in the
 * very next iteration, before that iteration's I/O and before the loop's
 * own callbacks queued after it, and the loop does not block in poll
 * meanwhile. From a callback of the running batch the call is answered in
 * C (capi/cloop/hostready.c) and Go takes it later; these are the orders a
 * host relies on either way: inside a callback chain run from C, and
 * inside a delivery that the read gate would otherwise follow with the
 * next reads. */
#include <sys/socket.h>
#include <unistd.h>

#include "net_util.h"

/* ---- from a plain callback: the next iteration runs the host queue ---- */

struct plain {
    int host_runs;
    int cb_ran;
};

static int plain_host_run(ll_loop loop, void *arg) {
    (void)loop;
    ((struct plain *)arg)->host_runs++;
    return 0;
}

static void plain_cb(ll_loop loop, void *arg) {
    ((struct plain *)arg)->cb_ran = 1;
    CHECK_EQ_INT(ll_loop_host_ready(loop), 0);
}

static void test_callback_marks_host_ready(void) {
    ll_loop loop = new_loop();
    struct plain s = {0};
    CHECK_EQ_INT(ll_loop_set_host_queue(loop, plain_host_run, &s), 0);
    ll_handle far = 0; /* what a blocking poll would wait for */
    CHECK_EQ_INT(ll_call_later(loop, 30.0, nop_cb, NULL, &far), 0);
    CHECK_EQ_INT(ll_call_soon(loop, plain_cb, &s, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0);
    CHECK_EQ_INT(s.cb_ran, 1);
    CHECK_EQ_INT(s.host_runs, 0);
    double t0 = now_s();
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), 0); /* must not wait for the timer */
    CHECK(now_s() - t0 < 5.0);
    CHECK_EQ_INT(s.host_runs, 1);
    /* The mark is taken once: a third iteration has nothing for the host. */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(s.host_runs, 1);
    ll_handle_cancel(far);
    ll_release(far);
    CHECK_EQ_INT(ll_loop_set_host_queue(loop, NULL, NULL), 0);
    ll_release(loop);
}

/* ---- inside a callback chain: the chain ends, the host queue runs next ---- */

#define CHAIN_STEPS 200
#define CHAIN_MARK 50

struct chain {
    int step;          /* chain callbacks run so far */
    int host_runs;
    int step_at_host;  /* step when the host queue ran */
};

static int chain_host_run(ll_loop loop, void *arg) {
    (void)loop;
    struct chain *c = arg;
    c->host_runs++;
    c->step_at_host = c->step;
    return 0;
}

static void chain_cb(ll_loop loop, void *arg) {
    struct chain *c = arg;
    c->step++;
    if (c->step == CHAIN_MARK)
        CHECK_EQ_INT(ll_loop_host_ready(loop), 0);
    if (c->step == CHAIN_STEPS)
        ll_loop_stop(loop);
    else
        ll_call_soon(loop, chain_cb, c, NULL);
}

static void test_chain_ends_at_host_ready(void) {
    ll_loop loop = new_loop();
    struct chain c = {0};
    CHECK_EQ_INT(ll_loop_set_host_queue(loop, chain_host_run, &c), 0);
    CHECK_EQ_INT(ll_call_soon(loop, chain_cb, &c, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(c.step, CHAIN_STEPS);
    CHECK_EQ_INT(c.host_runs, 1);
    /* asyncio's order: what the host queued in step 50's iteration runs in
     * the next iteration, before step 51 (queued in the same iteration). */
    CHECK_EQ_INT(c.step_at_host, CHAIN_MARK);
    CHECK_EQ_INT(ll_loop_set_host_queue(loop, NULL, NULL), 0);
    ll_release(loop);
}

/* ---- inside a delivery: the host queue runs before the next reads ---- */

#define ROUNDS 100

struct rr {
    struct conn c;
    ll_loop loop;
    int peer;
    int host_runs;
    int out_of_order;  /* a host run that saw a read of the next round */
};

/* The protocol's hook: each byte is a reply; the host queue must see it
 * before the next one arrives. The next reply is already in the socket
 * when this returns (as a fast server's is), so a loop that read on before
 * running the host queue would deliver it first. */
static int rr_hook(struct conn *c, ll_loop loop, const ll_event *ev) {
    struct rr *r = (struct rr *)c;
    if (ev->kind != LL_DATA_RECEIVED)
        return 0;
    CHECK_EQ_INT(ll_loop_host_ready(loop), 0);
    if (c->ndata < ROUNDS)
        CHECK_EQ_INT(write(r->peer, "r", 1), 1);
    return 0;
}

static int rr_host_run(ll_loop loop, void *arg) {
    struct rr *r = arg;
    r->host_runs++;
    if (r->c.ndata != r->host_runs)
        r->out_of_order++;
    if (r->c.ndata == ROUNDS)
        ll_loop_stop(loop);
    return 0;
}

static void test_delivery_marks_host_ready(void) {
    struct rr r;
    conn_init(&r.c);
    r.c.hook = rr_hook;
    r.host_runs = r.out_of_order = 0;
    r.loop = new_loop();
    int sv[2];
    CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    r.peer = sv[1];
    CHECK_EQ_INT(ll_transport_open(r.loop, sv[0], LL_STREAM, conn_proto, &r.c, &r.c.t), 0);
    RUN_UNTIL(r.loop, r.c.nmade == 1, 5.0);
    CHECK_EQ_INT(ll_loop_set_host_queue(r.loop, rr_host_run, &r), 0);
    CHECK_EQ_INT(write(r.peer, "r", 1), 1);
    CHECK_EQ_INT(ll_loop_run_forever(r.loop), 0);
    CHECK_EQ_INT(r.c.ndata, ROUNDS);
    CHECK_EQ_INT(r.host_runs, ROUNDS);
    CHECK_EQ_INT(r.out_of_order, 0);
    CHECK_EQ_INT(ll_loop_set_host_queue(r.loop, NULL, NULL), 0);
    ll_transport_abort(r.c.t);
    RUN_UNTIL(r.loop, r.c.nlost == 1, 5.0);
    close(r.peer);
    ll_release(r.loop);
}

int main(void) {
    RUN_TEST(test_callback_marks_host_ready);
    RUN_TEST(test_chain_ends_at_host_ready);
    RUN_TEST(test_delivery_marks_host_ready);
    return CHECK_REPORT();
}
