/* SPDX-License-Identifier: MIT */
/* A loop's record in C (ll__pending, cloop.h): made with the loop, kept in
 * a small registry by loop id so that calls made while the loop is idle
 * (not running) find its queues, and retired (kept for reuse, never
 * freed) when the loop ends. */
#include <pthread.h>
#include <stdlib.h>
#include "cloop.h"

/* The idle loops' queues by loop id: direct-mapped on the id's low bits
 * (the id table's slot). Two live loops that collide leave the later one
 * out, and its calls take the Go path: slower, never wrong. */
ll__pending *ll__registry[LL__REG_SIZE];
static ll__pending *free_records;
static pthread_mutex_t free_mu = PTHREAD_MUTEX_INITIALIZER;

ll__pending *ll__pending_new(void) {
    pthread_mutex_lock(&free_mu);
    ll__pending *p = free_records;
    if (p != NULL)
        free_records = p->next_free;
    pthread_mutex_unlock(&free_mu);
    if (p == NULL) {
        p = calloc(1, sizeof(ll__pending));
        if (p != NULL) /* once: records are reused, never freed (NULL: posts take the Go path) */
            p->postq = ll__postq_new();
        return p;
    }
    p->next_free = NULL;
    return p;
}

void ll__pending_register(ll__pending *p, uint64_t loop) {
    if (p->postq != NULL)
        ll__postq_open(p->postq, loop); /* no memory: posts take the Go path */
    __atomic_store_n(&p->slab.loop, loop, __ATOMIC_RELEASE);
    __atomic_store_n(&p->loop_id, loop, __ATOMIC_RELEASE);
    __atomic_store_n(&p->open, 1, __ATOMIC_RELEASE);
    ll__pending *expected = NULL;
    p->registered = __atomic_compare_exchange_n(&ll__registry[loop % LL__REG_SIZE], &expected, p, 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE);
}

void ll__pending_set_open(ll__pending *p, int open) { __atomic_store_n(&p->open, open, __ATOMIC_RELEASE); }

void ll__pending_retire(ll__pending *p) {
    if (p == NULL)
        return;
    uint64_t loop = __atomic_load_n(&p->loop_id, __ATOMIC_ACQUIRE);
    __atomic_store_n(&p->open, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&p->loop_id, 0, __ATOMIC_RELEASE);
    if (p->registered) {
        ll__pending *expected = p;
        __atomic_compare_exchange_n(&ll__registry[loop % LL__REG_SIZE], &expected, NULL, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        p->registered = 0;
    }
    free(p->items);
    p->items = NULL;
    p->len = p->cap = 0;
    free(p->spare);
    p->spare = NULL;
    p->spare_cap = 0;
    free(p->timers);
    p->timers = NULL;
    p->ntimers = p->timers_cap = 0;
    ll__ts_retire(&p->slab);
    ll__tmap_free(p); /* freeNet dropped it already unless the loop had no net state */
    if (p->postq != NULL)
        ll__postq_close(p->postq);
    ll__fspool_close(p); /* closed already by a loop's close; not if it was never closed */
    p->step_task = 0;
    p->step_decided = 0;
    p->host_ready = 0;
    pthread_mutex_lock(&free_mu);
    p->next_free = free_records;
    free_records = p;
    pthread_mutex_unlock(&free_mu);
}

/* A registered loop's record, running or idle (posts need no thread). */
ll__pending *ll__loop_record(uint64_t loop) {
    ll__pending *p = __atomic_load_n(&ll__registry[loop % LL__REG_SIZE], __ATOMIC_ACQUIRE);
    return p != NULL && __atomic_load_n(&p->loop_id, __ATOMIC_ACQUIRE) == loop ? p : NULL;
}

