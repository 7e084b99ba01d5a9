/* SPDX-License-Identifier: MIT */
/* Handle timers' records (timerslab.h): allocation, the ids that name them,
 * cancel, release, and the callback that runs a due one. The order in which
 * they run is Go's (timerslab.go); this file keeps their state. */
#include <pthread.h>
#include <stdlib.h>
#include "cloop.h"

ll__tchunk *ll__ts_chunks[LL__TS_MAX_CHUNKS];
static int32_t nchunks_made;
static ll__tchunk *pool; /* chunks nothing holds, ready for any loop */
/* Guards the chunk table's growth, the pool, orphaned chunks and releases
 * (so that of racing releases of one id exactly one succeeds). */
static pthread_mutex_t ts_mu = PTHREAD_MUTEX_INITIALIZER;

/* A freed slot is reused only while more than this many are free: a
 * create/release cycle then walks a whole chunk before a slot comes back,
 * so its 39-bit generation wraps after 2^39 * 3840 cycles (the id table's
 * rule, ids.go). */
#define TS_RESERVE (LL__TS_CHUNK_LEN - 256)
#define TS_MASK (LL__TS_CHUNK_LEN - 1)

static ll__tchunk *chunk_of(uint32_t slot) {
    return __atomic_load_n(&ll__ts_chunks[slot >> LL__TS_CHUNK_BITS], __ATOMIC_ACQUIRE);
}

static uint64_t tag_load(const ll__trec *r) { return __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE); }
static void tag_store(ll__trec *r, uint64_t tag) { __atomic_store_n(&r->tag, tag, __ATOMIC_RELEASE); }

uint64_t ll__ts_id(uint32_t slot, uint64_t tag) {
    return LL__TS_ID_BIT | (tag >> LL__TS_GEN_SHIFT) << 24 | (uint64_t)(slot + 1);
}

/* Append slot to s's free FIFO. */
static void push_free(ll__tslab *s, uint32_t slot) {
    chunk_of(slot)->recs[slot & TS_MASK].seq = 0;
    if (s->free_n++ == 0)
        s->free_head = slot;
    else
        chunk_of(s->free_tail)->recs[s->free_tail & TS_MASK].seq = slot;
    s->free_tail = slot;
}

/* Free a record nobody holds: a new generation, so its ids go stale. An
 * orphaned chunk (its loop released) that empties goes back to the pool;
 * the caller then holds ts_mu. */
static void free_rec(ll__tchunk *c, uint32_t slot, ll__trec *r) {
    uint64_t gen = ((tag_load(r) >> LL__TS_GEN_SHIFT) + 1) & LL__TS_GEN_MASK;
    tag_store(r, (gen ? gen : 1) << LL__TS_GEN_SHIFT);
    c->live--;
    ll__tslab *owner = __atomic_load_n(&c->owner, __ATOMIC_ACQUIRE);
    if (owner != NULL)
        push_free(owner, slot);
    else if (c->live == 0) {
        c->next_pool = pool;
        pool = c;
    }
}

/* Give s one more chunk (from the pool, else a new one) as its fresh
 * records; -1 if there is none. */
static int grow(ll__tslab *s) {
    if (s->nchunks == s->chunks_cap) {
        int32_t ncap = s->chunks_cap ? s->chunks_cap * 2 : 8;
        ll__tchunk **cs = realloc(s->chunks, (size_t)ncap * sizeof *cs);
        if (cs == NULL)
            return -1;
        s->chunks = cs;
        s->chunks_cap = ncap;
    }
    pthread_mutex_lock(&ts_mu);
    ll__tchunk *c = pool;
    if (c != NULL)
        pool = c->next_pool;
    else if (nchunks_made < LL__TS_MAX_CHUNKS && (c = calloc(1, sizeof *c)) != NULL) {
        c->index = nchunks_made++;
        __atomic_store_n(&ll__ts_chunks[c->index], c, __ATOMIC_RELEASE);
    }
    if (c != NULL)
        __atomic_store_n(&c->owner, s, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ts_mu);
    if (c == NULL)
        return -1;
    c->next_pool = NULL;
    s->chunks[s->nchunks++] = c;
    s->fresh = (uint32_t)c->index << LL__TS_CHUNK_BITS;
    s->fresh_end = s->fresh + LL__TS_CHUNK_LEN;
    return 0;
}

/* A free slot: a freed one while more than TS_RESERVE wait, else a fresh
 * one, else a freed one after all; -1 if there is none. */
static int64_t take_slot(ll__tslab *s) {
    if (s->free_n <= TS_RESERVE && (s->fresh < s->fresh_end || grow(s) == 0))
        return s->fresh++;
    if (s->free_n == 0)
        return -1;
    uint32_t i = s->free_head;
    s->free_head = (uint32_t)chunk_of(i)->recs[i & TS_MASK].seq;
    s->free_n--;
    return i;
}

ll__trec *ll__ts_alloc(ll__tslab *s, uint32_t *slot) {
    int64_t i = take_slot(s);
    if (i < 0)
        return NULL;
    ll__tchunk *c = chunk_of((uint32_t)i);
    ll__trec *r = &c->recs[i & TS_MASK];
    uint64_t gen = 0;
    if ((int32_t)(i & TS_MASK) < c->touched)
        gen = tag_load(r) >> LL__TS_GEN_SHIFT;
    else
        c->touched = (int32_t)(i & TS_MASK) + 1; /* fresh slots go in order */
    c->live++;
    tag_store(r, (gen ? gen : 1) << LL__TS_GEN_SHIFT | LL__TS_HOST | LL__TS_LOOP);
    *slot = (uint32_t)i;
    return r;
}

/* Undo ll__ts_alloc (the timer could not be queued). */
void ll__ts_discard(uint32_t slot) {
    ll__tchunk *c = chunk_of(slot);
    free_rec(c, slot, &c->recs[slot & TS_MASK]);
}

ll__trec *ll__ts_lookup(uint64_t id, uint32_t *slot) {
    uint32_t s1 = (uint32_t)(id & 0xFFFFFF);
    if (!(id & LL__TS_ID_BIT) || s1 == 0 || ((s1 - 1) >> LL__TS_CHUNK_BITS) >= LL__TS_MAX_CHUNKS)
        return NULL;
    ll__tchunk *c = chunk_of(s1 - 1);
    if (c == NULL)
        return NULL;
    *slot = s1 - 1;
    return &c->recs[(s1 - 1) & TS_MASK];
}

/* Whether tag is the live (host-held) record of id. */
static int names(uint64_t id, uint64_t tag) {
    return (tag & LL__TS_HOST) && (tag >> LL__TS_GEN_SHIFT) == ((id >> 24) & LL__TS_GEN_MASK);
}

int ll__ts_valid(uint64_t id) {
    uint32_t slot;
    ll__trec *r = ll__ts_lookup(id, &slot);
    return r != NULL && names(id, tag_load(r));
}

uint64_t ll__ts_owner(uint64_t id) {
    uint32_t slot;
    ll__trec *r = ll__ts_lookup(id, &slot);
    if (r == NULL || !names(id, tag_load(r)))
        return 0;
    ll__tslab *s = __atomic_load_n(&chunk_of(slot)->owner, __ATOMIC_ACQUIRE);
    return s != NULL ? __atomic_load_n(&s->loop, __ATOMIC_ACQUIRE) : 0;
}

int ll__ts_cancel(uint64_t id) {
    uint32_t slot;
    ll__trec *r = ll__ts_lookup(id, &slot);
    uint64_t tag = r != NULL ? tag_load(r) : 0;
    if (r == NULL || !names(id, tag))
        return LL_EBADHANDLE;
    if (tag & LL__TS_CANCELLED)
        return 0;
    tag_store(r, tag | LL__TS_CANCELLED);
    if (tag & LL__TS_INQ) /* counted for the purge (timerslab.go) */
        chunk_of(slot)->owner->cancelled++;
    return 0;
}

int ll__ts_release(uint64_t id) {
    uint32_t slot;
    int rc = LL_EBADHANDLE;
    pthread_mutex_lock(&ts_mu);
    ll__trec *r = ll__ts_lookup(id, &slot);
    uint64_t tag = r != NULL ? tag_load(r) : 0;
    if (r != NULL && names(id, tag)) {
        tag &= ~(uint64_t)LL__TS_HOST;
        tag_store(r, tag);
        if (!(tag & LL__TS_LOOP))
            free_rec(chunk_of(slot), slot, r);
        rc = 0;
    }
    pthread_mutex_unlock(&ts_mu);
    return rc;
}

/* Drop the loop's reference to r (no longer scheduled). */
static void unloop(uint32_t slot, ll__trec *r) {
    uint64_t tag = tag_load(r) & ~(uint64_t)(LL__TS_LOOP | LL__TS_INQ);
    tag_store(r, tag);
    if (!(tag & LL__TS_HOST))
        free_rec(chunk_of(slot), slot, r);
}

/* ids: records Go's queue dropped, named with their generation so that an
 * entry never touches a later record of its slot. */
void ll__ts_unloop_many(const uint64_t *ids, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t slot;
        ll__trec *r = ll__ts_lookup(ids[i], &slot);
        uint64_t tag = r != NULL ? tag_load(r) : 0;
        if (r != NULL && (tag & LL__TS_LOOP) && (tag >> LL__TS_GEN_SHIFT) == ((ids[i] >> 24) & LL__TS_GEN_MASK))
            unloop(slot, r);
    }
}

void ll__ts_drop_all(ll__tslab *s) {
    for (int32_t k = 0; k < s->nchunks; k++) {
        ll__tchunk *c = s->chunks[k];
        uint32_t base = (uint32_t)c->index << LL__TS_CHUNK_BITS;
        for (uint32_t i = 0; i < LL__TS_CHUNK_LEN; i++)
            if (tag_load(&c->recs[i]) & LL__TS_LOOP)
                unloop(base + i, &c->recs[i]);
    }
    s->cancelled = 0;
}

void ll__ts_retire(ll__tslab *s) {
    ll__ts_drop_all(s);
    pthread_mutex_lock(&ts_mu);
    for (int32_t k = 0; k < s->nchunks; k++) {
        ll__tchunk *c = s->chunks[k];
        __atomic_store_n(&c->owner, NULL, __ATOMIC_RELEASE);
        if (c->live == 0) {
            c->next_pool = pool;
            pool = c;
        } /* else orphaned: the last release of its records pools it */
    }
    pthread_mutex_unlock(&ts_mu);
    free(s->chunks);
    *s = (ll__tslab){0};
}

void ll__ts_fire(uint64_t loop, void *arg) {
    uint32_t slot = (uint32_t)(uintptr_t)arg;
    ll__trec *r = &chunk_of(slot)->recs[slot & TS_MASK];
    uint64_t tag = tag_load(r);
    ll_callback fn = (ll_callback)r->fn;
    void *a = (void *)r->arg;
    unloop(slot, r); /* it has run (or was cancelled): cancel now does nothing */
    if (!(tag & LL__TS_CANCELLED))
        fn(loop, a);
}
