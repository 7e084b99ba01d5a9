/* SPDX-License-Identifier: MIT */
/* A chain: a batch, then the loop's next iterations while each is only the
 * host's call_soon work, polled and run here without returning to Go
 * (libloop/chain.go says when Go allows it). */
#ifdef __linux__
#include <sys/epoll.h>
#endif
#include "cloop.h"

/* Whether the loop's next iteration is nothing but what the host queued
 * here with call_soon (libloop/chain.go lists the other cases). */
static int chain_may_go_on(const ll__pending *p, const ll__chain *c, const ll__chain_view *v,
                           uint64_t changes0) {
    if (p->len == 0 || p->ntimers > 0 || p->host_ready || c->iterations >= c->max_iterations)
        return 0;
    if (v->changes != changes0 || v->ready_len != 0)
        return 0;
    if (__atomic_load_n(&v->posted, __ATOMIC_ACQUIRE) != 0 ||
        (p->postq != NULL && ll__postq_pending(p->postq)))
        return 0;
    for (int64_t i = 0; i < p->len; i++)
        if (p->items[i].fn == LL__YIELD_MARK)
            return 0;
    return 1;
}

/* The iteration's poll, with a zero timeout (cloop.h's ll__poll_now):
 * the event count, -1 on error. */
static inline long chain_poll(const ll__chain *c) {
#if defined(__linux__)
    long got = ll__poll_now((int)c->epfd, (void *)c->events, (int)c->max_events);
    return got < 0 ? -1 : got;
#else
    (void)c;
    return -1; /* Go hands chains a poll only where the selector is epoll */
#endif
}

/* A batch, then the loop's next iterations while each is only the host's
 * call_soon work (libloop/chain.go): poll if an fd is watched (an event or
 * an error ends the chain, the events left for Go's next iteration), then
 * call what the previous iteration queued, in order. Go decided that the
 * loop allows it; this only checks that each iteration is still of that
 * kind and runs it. */
void ll__run_chain(uint64_t loop, uintptr_t calls_addr, int n, uintptr_t pending_addr) {
    ll__pending *p = (ll__pending *)pending_addr;
    ll__chain *c = &p->chain;
    const ll__chain_view *v = (const ll__chain_view *)c->view;
    uint64_t changes0 = v->changes;
    ll__run_batch(loop, calls_addr, n, pending_addr);
    c->iterations = c->calls = 0;
    c->polled = -1;
    if (v->version != LL__CHAIN_VIEW_VERSION)
        return; /* a layout this side does not know: the batch only */
    while (chain_may_go_on(p, c, v, changes0)) {
        if (c->epfd >= 0) {
            long got = chain_poll(c);
            if (got != 0) {
                c->polled = got < 0 ? -1 : got;
                return;
            }
        }
        ll__soon *items = p->items;
        int64_t len = p->len, cap = p->cap;
        p->items = p->spare, p->cap = p->spare_cap, p->len = 0;
        p->spare = items, p->spare_cap = cap;
        ll__run_soon_array(loop, (uintptr_t)items, len, pending_addr);
        c->iterations++;
        c->calls += len;
    }
}

