/* SPDX-License-Identifier: MIT */
/* ll_call_soon_threadsafe's queue, the loop's side (postq.c is the
 * posters'): whether anything waits, what to do before sleeping (linger
 * for the next post, or settle a poster caught mid-post), taking the
 * filled slots, running them where they lie, and closing the queue. Loop
 * thread only. */
#include <stdlib.h>
#include "cloop.h"

/* The loop never reads the tail: the posters own its cache line, and the
 * loop finds the end of what it may take by the first slot not filled.
 * Its head never rests at a lap's non-slot position (it crosses to the
 * next chunk as soon as it has taken the last slot), so "anything to
 * take" is one load of the head slot (loops.go reads it). */
int ll__postq_pending(ll__postq *q) {
    ll__postchunk *c = q->head_chunk;
    return c != NULL && __atomic_load_n(&c->slots[q->head & LL__POSTQ_LAP_MASK].fn, __ATOMIC_ACQUIRE) != 0;
}

/* The loop, about to block, cleared the wake flag and found its head
 * slot empty, and either a slot reserved (a poster between reservation
 * and fill) or the bias on (the owner's fill has no barrier of its own).
 * Wait a little for a reserved slot's fill; then, where the fill is a
 * plain store, force a barrier on every thread, after which the head
 * slot's poster either has filled it or will read the cleared flag and
 * wake the loop. The bias is dropped once these barriers cost more than
 * they save (more than 64, and more than one per 1,024 posts taken).
 * 1 if the head slot is filled (take it), 0 if the loop may block. */
int ll__postq_settle(ll__postq *q) {
    if ((__atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) >> 1) != q->head)
        for (int i = 0; i < 256; i++) {
            if (ll__postq_pending(q))
                return 1;
            ll__postq_cpu_relax();
        }
    if (!ll__postq_fence_fill) {
        ll__postq_barrier_all();
        if (__atomic_load_n(&q->bias, __ATOMIC_ACQUIRE) == LL__BIAS_ON && ++q->fences > 64 &&
            q->fences * 1024 > q->taken)
            ll__postq_bias_drop(q);
    }
    return ll__postq_pending(q);
}

/* The loop, about to block without lingering (the read gate's blocking
 * poll, readgate.c): the wake protocol's loop side, as capi's Go
 * BeforeBlock (postsource.go) does it with Go's atomics. Clear the wake
 * flag, then look at the queue: 1 if a post is there or on its way (take
 * it, do not block), 0 if the loop may block (a poster that reserves from
 * now on sees the flag clear and wakes it). */
int ll__postq_before_block(ll__postq *q) {
    __atomic_store_n(&q->wake, 0, __ATOMIC_SEQ_CST);
    int32_t bias = __atomic_load_n(&q->bias, __ATOMIC_SEQ_CST);
    if (ll__postq_pending(q))
        return 1;
    if (bias == LL__BIAS_OFF && (__atomic_load_n(&q->tail, __ATOMIC_SEQ_CST) >> 1) == q->head)
        return 0;
    return ll__postq_settle(q);
}

/* How long the loop lingers for the next post before it sleeps, and how
 * often it looks meanwhile: each look pulls the cache line the poster is
 * filling, and the poster's next store then waits for it back, so the
 * loop looks seldom enough for a poster to fill a few lines in between. */
#define LINGER_NS 5000
#define LINGER_LOOK_NS 500

/* Wait up to LINGER_NS for the head slot to be filled, without arming the
 * wake flag (nobody wakes the loop for it meanwhile): 1 if it was. */
int ll__postq_linger(ll__postq *q) {
    int64_t now = ll__clock_raw(), until = now + LINGER_NS;
    for (;;) {
        if (ll__postq_pending(q))
            return 1;
        if (now > until)
            return 0;
        int64_t look = now + LINGER_LOOK_NS;
        do {
            for (int i = 0; i < 8; i++)
                ll__postq_cpu_relax();
            now = ll__clock_raw();
        } while (now < look);
    }
}

/* Count the filled slots from the head. */
static int64_t count_filled(const ll__postq *q) {
    const ll__postchunk *c = q->head_chunk;
    uint64_t off = q->head & LL__POSTQ_LAP_MASK;
    int64_t k = 0;
    while (__atomic_load_n(&c->slots[off].fn, __ATOMIC_ACQUIRE) != 0) {
        k++;
        if (++off == LL__POSTQ_CAP) {
            c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE); /* linked before the last slot was filled */
            off = 0;
        }
    }
    return k;
}

int64_t ll__postq_take(ll__postq *q, ll__postchunk **chunk, uint64_t *off) {
    if (q->head_chunk == NULL)
        return 0;
    int64_t k = count_filled(q);
    if (k == 0)
        return 0;
    *chunk = q->head_chunk;
    *off = q->head & LL__POSTQ_LAP_MASK;
    /* Move the head past them (and past each lap's non-slot position);
     * the chunks behind it now belong to the batches taken. */
    ll__postchunk *c = q->head_chunk;
    uint64_t o = *off, pos = q->head;
    for (int64_t left = k; left > 0;) {
        int64_t run = (int64_t)(LL__POSTQ_CAP - o) < left ? (int64_t)(LL__POSTQ_CAP - o) : left;
        left -= run;
        o += (uint64_t)run;
        pos += (uint64_t)run;
        if (o == LL__POSTQ_CAP) {
            c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE); /* linked before its last slot was filled */
            o = 0;
            pos++;
        }
    }
    q->head_chunk = c;
    q->taken += (uint64_t)k;
    __atomic_store_n(&q->head, pos, __ATOMIC_RELEASE);
    return k;
}

void ll__postq_run(ll__postq *q, uint64_t loop, uintptr_t chunk, uint64_t off, int64_t n, uintptr_t pending,
                   int call) {
    ll__postchunk *c = (ll__postchunk *)chunk;
    while (n > 0) {
        int64_t run = (int64_t)(LL__POSTQ_CAP - off) < n ? (int64_t)(LL__POSTQ_CAP - off) : n;
        /* A slot is laid out as an ll__soon: the batch runner takes them
         * straight from the chunk. */
        if (call)
            ll__run_soon_array(loop, (uintptr_t)&c->slots[off], run, pending);
        n -= run;
        off += (uint64_t)run;
        if (off == LL__POSTQ_CAP) {
            /* Its last slot was this batch's: every batch before this one
             * has run (batches run in order), so c is done with. */
            ll__postchunk *nx = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
            ll__postq_chunk_put(q, c);
            c = nx;
            off = 0;
        }
    }
}

void ll__postq_close(ll__postq *q) {
    if (__atomic_load_n(&q->bias, __ATOMIC_ACQUIRE) != LL__BIAS_OFF)
        ll__postq_bias_drop(q); /* the owner stores the tail plainly: no owner from here on */
    uint64_t t = __atomic_fetch_or(&q->tail, LL__POSTQ_CLOSED, __ATOMIC_SEQ_CST);
    if (t & LL__POSTQ_CLOSED)
        return;
    /* Posters that reserved a slot before the close are filling it (a few
     * instructions): wait for each, so no chunk is freed under one. */
    uint64_t end = t >> 1, pos = q->head;
    ll__postchunk *c = q->head_chunk;
    while (pos < end) {
        uint64_t off = pos & LL__POSTQ_LAP_MASK;
        if (off == LL__POSTQ_CAP) {
            ll__postchunk *nx = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
            free(c);
            c = nx;
            pos++;
            continue;
        }
        for (int spins = 0; __atomic_load_n(&c->slots[off].fn, __ATOMIC_ACQUIRE) == 0;)
            ll__postq_backoff(&spins);
        pos++;
    }
    /* The slot before the tail is filled, so whoever took a chunk's last
     * slot has linked the next one: at most one, with nothing in it. */
    if (c != NULL) {
        free(__atomic_load_n(&c->next, __ATOMIC_ACQUIRE));
        free(c);
    }
    q->head_chunk = NULL;
    __atomic_store_n(&q->tail_chunk, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&q->head, __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) >> 1, __ATOMIC_RELEASE);
    __atomic_store_n(&q->loop, 0, __ATOMIC_RELEASE);
}

