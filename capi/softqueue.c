/* SPDX-License-Identifier: MIT */
/* The C-side queues of a loop beyond its running batch: call_soon and
 * timers with no handle, made while the loop is idle (not running) or from
 * one of its batches, queued here without entering Go. Go moves them into
 * the loop (flushPending) when it next touches it, so one FIFO order and
 * one timer order hold. This file only queues; Go decides what runs. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "hotpath.h"
#include "postq.h"
#include "_cgo_export.h"

/* The idle loops' queues by loop id: direct-mapped on the id's low bits
 * (the id table's slot). Two live loops that collide leave the later one
 * out, and its calls take the Go path: slower, never wrong. */
#define REG_SIZE 64
static ll__pending *registry[REG_SIZE];
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
    p->registered = __atomic_compare_exchange_n(&registry[loop % REG_SIZE], &expected, p, 0, __ATOMIC_ACQ_REL,
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
        __atomic_compare_exchange_n(&registry[loop % REG_SIZE], &expected, NULL, 0, __ATOMIC_ACQ_REL,
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
    p->step_task = 0;
    p->step_decided = 0;
    pthread_mutex_lock(&free_mu);
    p->next_free = free_records;
    free_records = p;
    pthread_mutex_unlock(&free_mu);
}

/* The queue of an idle loop, or NULL (running, closed, unknown, or left
 * out of the registry). */
ll__pending *ll__idle_queue(uint64_t loop) {
    ll__pending *p = __atomic_load_n(&registry[loop % REG_SIZE], __ATOMIC_ACQUIRE);
    if (p == NULL || __atomic_load_n(&p->loop_id, __ATOMIC_ACQUIRE) != loop ||
        !__atomic_load_n(&p->open, __ATOMIC_ACQUIRE))
        return NULL;
    return p;
}

/* A registered loop's record, running or idle (posts need no thread). */
ll__pending *ll__loop_record(uint64_t loop) {
    ll__pending *p = __atomic_load_n(&registry[loop % REG_SIZE], __ATOMIC_ACQUIRE);
    return p != NULL && __atomic_load_n(&p->loop_id, __ATOMIC_ACQUIRE) == loop ? p : NULL;
}

/* The loop clock in C: CLOCK_MONOTONIC (Go's nanotime) minus the core's
 * own base, handed over once (ll__set_clock_base): C's "now" is the loop's
 * to the nanosecond, so a timer made here is neither early nor late. */
static int64_t clock_base;

void ll__set_clock_base(int64_t base) { __atomic_store_n(&clock_base, base, __ATOMIC_RELEASE); }

int64_t ll__clock_raw(void) {
    struct timespec ts;
#ifdef __APPLE__
    clock_gettime(CLOCK_UPTIME_RAW, &ts); /* Go's nanotime there: mach_absolute_time */
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Go's bound on delays (internal/timers.MaxDelay; deadline_rules_test.go checks this copy). */
#define MAX_DELAY (100.0 * 365 * 24 * 3600)

/* Queued timers are moved to Go once this many wait: one crossing per
 * TIMER_FLUSH calls, and C never holds more than this. */
#define TIMER_FLUSH 4096

static int later_push(ll__pending *p, int64_t when, uintptr_t fn, uintptr_t arg) {
    if (p->ntimers == p->timers_cap) {
        int64_t ncap = p->timers_cap ? p->timers_cap * 2 : 256;
        ll__later *t = realloc(p->timers, (size_t)ncap * sizeof(ll__later));
        if (t == NULL)
            return -1;
        p->timers = t;
        p->timers_cap = ncap;
    }
    p->timers[p->ntimers].when = when;
    p->timers[p->ntimers].fn = fn;
    p->timers[p->ntimers].arg = arg;
    p->ntimers++;
    return 0;
}

/* The loop's C-side queue when this thread may queue on it: the batch
 * running here, or the idle loop's; NULL: the call takes the Go path. */
static ll__pending *timer_queue(ll_loop loop) {
    ll__pending *p = ll__batch_queue(loop);
    return p != NULL ? p : ll__idle_queue(loop);
}

static void flush_if_full(ll_loop loop, ll__pending *p) {
    if (p->ntimers >= TIMER_FLUSH)
        ll__flush_pending_go(loop);
}

/* Queue a timer for an idle loop or from its batch; 0 if queued, -1 if
 * the call must take the Go path. With out, the timer gets a record in
 * the loop's slab and *out its id (timerslab.h): no Go crossing either. */
static int later_in_c(ll_loop loop, int64_t when, ll_callback cb, void *arg, ll_handle *out) {
    ll__pending *p = timer_queue(loop);
    if (p == NULL)
        return -1;
    if (out == NULL) {
        if (later_push(p, when, (uintptr_t)cb, (uintptr_t)arg) != 0)
            return -1;
        flush_if_full(loop, p);
        return 0;
    }
    uint32_t slot;
    ll__trec *r = ll__ts_alloc(&p->slab, &slot);
    if (r == NULL)
        return -1;
    r->when = when;
    r->fn = (uintptr_t)cb;
    r->arg = (uintptr_t)arg;
    if (later_push(p, when, 0, slot) != 0) {
        ll__ts_discard(slot);
        return -1;
    }
    *out = ll__ts_id(slot, r->tag);
    flush_if_full(loop, p);
    return 0;
}

int ll_call_later(ll_loop loop, double delay, ll_callback cb, void *arg, ll_handle *out) {
    /* The common delays only (as Go computes them: now + ceil(delay s in
     * ns)); NaN, negative and out-of-range ones go to Go. */
    if (cb != NULL && loop != 0 && delay >= 0 && delay <= MAX_DELAY) {
        int64_t now = ll__clock_raw() - __atomic_load_n(&clock_base, __ATOMIC_ACQUIRE);
        if (later_in_c(loop, now + (int64_t)ceil(delay * 1e9), cb, arg, out) == 0)
            return 0;
    }
    return ll__call_later_go(ll__thread_loop, loop, delay, cb, arg, out);
}

int ll_call_at(ll_loop loop, double when, ll_callback cb, void *arg, ll_handle *out) {
    if (cb != NULL && loop != 0 && when >= -MAX_DELAY && when <= MAX_DELAY &&
        later_in_c(loop, (int64_t)ceil(when * 1e9), cb, arg, out) == 0)
        return 0;
    return ll__call_at_go(ll__thread_loop, loop, when, cb, arg, out);
}

/* A handle timer of a loop this thread may act on without Go: the loop
 * runs its batch here, or is idle (not running, not closed). */
static int may_cancel_in_c(uint64_t id) {
    uint64_t loop = ll__ts_owner(id);
    return loop != 0 && timer_queue(loop) != NULL;
}

int ll_handle_cancel(ll_handle handle) {
    if ((handle & LL__TS_ID_BIT) && may_cancel_in_c(handle))
        return ll__ts_cancel(handle);
    return ll__handle_cancel_go(ll__thread_loop, handle);
}
