/* SPDX-License-Identifier: MIT */
/* ll_call_soon and a task's yield without entering Go: from a callback of
 * the loop's running batch, or while the loop is idle, the call is queued
 * in the loop's record (cloop.h, ll__pending); Go takes the queue into its
 * ready queue, in order, before it next touches that queue. */
#include <stdlib.h>
#include "cloop.h"

/* Append to the pending queue; 0 on success, -1 if memory ran out. */
static int pending_push(ll__pending *p, uintptr_t fn, uintptr_t arg) {
    if (p->len == p->cap) {
        int64_t ncap = p->cap ? p->cap * 2 : 256;
        ll__soon *items = realloc(p->items, (size_t)ncap * sizeof(ll__soon));
        if (items == NULL)
            return -1;
        p->items = items;
        p->cap = ncap;
    }
    p->items[p->len].fn = fn;
    p->items[p->len].arg = arg;
    p->len++;
    return 0;
}

/* ll_call_soon's way into Go, behind the fork guard. The fast paths stay
 * in C and unguarded (a fork child's queue is its own copy, and no run call
 * of the child runs it); out of line, so that they compile to the same
 * code as without the guard, and the guard is a tail call and one load
 * on a path that costs a crossing (~115 ns). */
static __attribute__((noinline)) int call_soon_go(ll_loop loop, ll_callback cb, void *arg, ll_handle *out) {
    LL__FORK_GUARD();
    return ll__call_soon_go(ll__thread_loop, loop, (uintptr_t)cb, (uintptr_t)arg, out);
}

int ll_call_soon(ll_loop loop, ll_callback cb, void *arg, ll_handle *out) {
    /* Fast paths, no handle wanted: a callback of this loop schedules
     * another (the loop is known valid and running on this thread), or
     * the loop is idle (Go moves the queue to the ready queue when the
     * loop next runs, or when any call first touches it). */
    if (out == NULL && cb != NULL && loop != 0) {
        ll__pending *p = loop == ll__batch.loop ? ll__batch.pending : ll__idle_queue(loop);
        if (p != NULL && pending_push(p, (uintptr_t)cb, (uintptr_t)arg) == 0)
            return 0;
    }
    return call_soon_go(loop, cb, arg, out);
}

/* A step yielding its own task: record it in the pending queue, in order
 * with the step's ll_call_soon calls, without entering Go. Anything else
 * (another task, a second outcome, no step running) goes through Go. */
static int yield_in_c(ll_task task) {
    ll__pending *p = ll__batch.pending;
    if (task == 0 || ll__batch.loop == 0 || p == NULL || p->step_task != task || p->step_decided)
        return -1;
    if (pending_push(p, LL__YIELD_MARK, 0) != 0)
        return -1;
    p->step_decided = 1;
    return 0;
}

int ll_task_yield(ll_task task) {
    if (yield_in_c(task) == 0)
        return 0;
    return ll__task_yield_go(task);
}

int ll_task_sleep(ll_task task, double delay) {
    if (delay <= 0 && yield_in_c(task) == 0) /* asyncio.sleep(0) is a bare yield */
        return 0;
    return ll__task_sleep_go(task, delay);
}

