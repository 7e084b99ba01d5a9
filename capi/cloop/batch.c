/* SPDX-License-Identifier: MIT */
/* Running host callbacks for Go, many in one crossing: a batch of ready
 * callbacks, a detached call_soon queue, due handle timers. While they run,
 * this thread is marked as running the loop's batch (ll__batch, thread.c),
 * so that their own call_soon calls queue in C. Go decides what runs; this
 * file only calls. */
#include <stdlib.h>
#include "cloop.h"

void ll__run_batch(uint64_t loop, uintptr_t calls_addr, int n, uintptr_t pending_addr) {
    ll__call *calls = (ll__call *)calls_addr;
    ll__batch_ctx saved = ll__batch_enter(loop, (ll__pending *)pending_addr);
    for (int i = 0; i < n; i++) {
        /* Re-read the slot: a callback before it may have cancelled it. */
        volatile ll__call *c = &calls[i];
        uintptr_t fn = c->fn;
        if (fn == 0)
            continue;
        if (c->kind == 1)
            ((ll_io_callback)fn)(c->id, c->fd, (void *)c->arg);
        else
            ((ll_callback)fn)(c->id, (void *)c->arg);
    }
    ll__batch_leave(saved);
}

/* A detached call_soon queue (a HostBatch, or a run of posted calls): every
 * entry in order. */
void ll__run_soon_array(uint64_t loop, uintptr_t items_addr, int64_t n, uintptr_t pending_addr) {
    const ll__soon *items = (const ll__soon *)items_addr;
    ll__batch_ctx saved = ll__batch_enter(loop, (ll__pending *)pending_addr);
    for (int64_t i = 0; i < n; i++)
        ((ll_callback)items[i].fn)(loop, (void *)items[i].arg);
    ll__batch_leave(saved);
}

void ll__ts_fire_many(uint64_t loop, const uint32_t *slots, int64_t n, ll__pending *pending) {
    ll__batch_ctx saved = ll__batch_enter(loop, pending);
    for (int64_t i = 0; i < n; i++)
        ll__ts_fire(loop, (void *)(uintptr_t)slots[i]);
    ll__batch_leave(saved);
}

ll__call *ll__alloc_calls(int n) { return calloc((size_t)n, sizeof(ll__call)); }
