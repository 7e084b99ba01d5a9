/* SPDX-License-Identifier: MIT */
/* ll_call_later, ll_call_at and ll_handle_cancel without entering Go: from
 * a callback of the loop's running batch, or while the loop is idle, a
 * timer is queued in the loop's record (a handle timer gets a record in
 * the loop's slab, timerslab.h); Go takes the queue into its timer heap
 * before it next touches the loop, so one timer order holds. */
#include <math.h>
#include <stdlib.h>
#include "cloop.h"

/* Go's bound on delays (internal/timers.MaxDelay; deadline_rules_test.go checks this copy). */
#define MAX_DELAY (100.0 * 365 * 24 * 3600)

/* Queued timers are moved to Go once this many wait: one crossing per
 * TIMER_FLUSH calls, and C never holds more than this. */
#define TIMER_FLUSH 4096

/* Room for more timers in p's queue: 0, or -1 if memory ran out. */
static __attribute__((noinline, cold)) int later_grow(ll__pending *p) {
    int64_t ncap = p->timers_cap ? p->timers_cap * 2 : 256;
    ll__later *t = realloc(p->timers, (size_t)ncap * sizeof(ll__later));
    if (t == NULL)
        return -1;
    p->timers = t;
    p->timers_cap = ncap;
    return 0;
}

static inline int later_push(ll__pending *p, int64_t when, uintptr_t fn, uintptr_t arg) {
    if (p->ntimers == p->timers_cap && later_grow(p) != 0)
        return -1;
    ll__later *t = &p->timers[p->ntimers++];
    t->when = when;
    t->fn = fn;
    t->arg = arg;
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
 * the loop's slab and *out its id (timerslab.h): no Go crossing either.
 * Inline in both callers, with later_push (its growth out of line): as
 * calls, with ll__batch_queue's, they cost ~50 instructions a timer more
 * (callgrind). */
static inline __attribute__((always_inline)) int later_in_c(ll_loop loop, int64_t when, ll_callback cb,
                                                            void *arg, ll_handle *out) {
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
        int64_t now = ll__clock_now();
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
