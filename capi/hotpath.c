/* SPDX-License-Identifier: MIT */
/* The C side of the hot paths: running a batch of host callbacks in one
 * crossing, and call_soon from a callback without entering Go. The Go side
 * decides what runs; this file only calls and queues. */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "forkguard.h"
#include "hotpath.h"
#include "postq.h"
#include "_cgo_export.h"

/* The loop whose batch is running on this thread, and its pending queue. */
static LL_TLS uint64_t tls_batch_loop;
static LL_TLS ll__pending *tls_pending;
/* The loop being run by ll_loop_run_* on this thread (0 if none); declared
 * in hotpath.h, read by loopthread.c's wrong-thread check. */
LL_TLS uint64_t ll__thread_loop;

void ll__set_thread_loop(uint64_t loop) { ll__thread_loop = loop; }
/* Its address names this thread to Go (loopGate) at no cost: each live
 * thread has its own. */
static LL_TLS char tls_token;
#define THREAD_TOKEN ((uintptr_t)&tls_token)

void ll__run_batch(uint64_t loop, uintptr_t calls_addr, int n, uintptr_t pending_addr) {
    ll__call *calls = (ll__call *)calls_addr;
    ll__pending *pending = (ll__pending *)pending_addr;
    uint64_t saved_loop = tls_batch_loop;
    ll__pending *saved_pending = tls_pending;
    tls_batch_loop = loop;
    tls_pending = pending;
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
    tls_batch_loop = saved_loop;
    tls_pending = saved_pending;
}

/* Whether the loop's next iteration is nothing but what the host queued
 * here with call_soon (libloop/chain.go lists the other cases). */
static int chain_may_go_on(const ll__pending *p, const ll__chain *c, uint64_t changes0) {
    if (p->len == 0 || p->ntimers > 0 || c->iterations >= c->max_iterations)
        return 0;
    if (*(const uint64_t *)c->changes != changes0 || *(const int64_t *)c->ready_len != 0)
        return 0;
    if (__atomic_load_n((const int32_t *)c->posted, __ATOMIC_ACQUIRE) != 0 ||
        (p->postq != NULL && ll__postq_pending(p->postq)))
        return 0;
    for (int64_t i = 0; i < p->len; i++)
        if (p->items[i].fn == LL__YIELD_MARK)
            return 0;
    return 1;
}

/* The iteration's poll, with a zero timeout: the event count, -1 on error.
 * On x86-64 the system call is made here, not through libc: a call
 * returns with the CPU's return predictions flushed (Spectre/SRSO
 * mitigations), so each frame it returns through costs ~6 ns, and libc's
 * epoll_wait is also a cancellation point (~15 ns more). */
static inline long chain_poll(const ll__chain *c) {
#if defined(__linux__) && defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = 0; /* timeout */
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_epoll_wait), "D"((long)c->epfd), "S"(c->events), "d"((long)c->max_events),
                       "r"(r10)
                     : "rcx", "r11", "memory");
    return ret < 0 ? -1 : ret;
#elif defined(__linux__)
    return syscall(SYS_epoll_pwait, c->epfd, (struct epoll_event *)c->events, c->max_events, 0, NULL, 0);
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
    uint64_t changes0 = *(const uint64_t *)c->changes;
    ll__run_batch(loop, calls_addr, n, pending_addr);
    c->iterations = c->calls = 0;
    c->polled = -1;
    while (chain_may_go_on(p, c, changes0)) {
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

/* A detached call_soon queue (a HostBatch): every entry in order, with this
 * thread marked as running the loop's batch so that their own handle-less
 * call_soon calls queue in C too. */
void ll__run_soon_array(uint64_t loop, uintptr_t items_addr, int64_t n, uintptr_t pending_addr) {
    const ll__soon *items = (const ll__soon *)items_addr;
    uint64_t saved_loop = tls_batch_loop;
    ll__pending *saved_pending = tls_pending;
    tls_batch_loop = loop;
    tls_pending = (ll__pending *)pending_addr;
    for (int64_t i = 0; i < n; i++)
        ((ll_callback)items[i].fn)(loop, (void *)items[i].arg);
    tls_batch_loop = saved_loop;
    tls_pending = saved_pending;
}

void ll__ts_fire_many(uint64_t loop, const uint32_t *slots, int64_t n, ll__pending *pending) {
    uint64_t saved_loop = tls_batch_loop;
    ll__pending *saved_pending = tls_pending;
    tls_batch_loop = loop;
    tls_pending = pending;
    for (int64_t i = 0; i < n; i++)
        ll__ts_fire(loop, (void *)(uintptr_t)slots[i]);
    tls_batch_loop = saved_loop;
    tls_pending = saved_pending;
}

ll__call *ll__alloc_calls(int n) { return calloc((size_t)n, sizeof(ll__call)); }

void ll__call_exception_handler(uintptr_t fn, uint64_t loop, ll_error_context *ctx, uintptr_t arg) {
    ((ll_exception_handler)fn)(loop, ctx, (void *)arg);
}

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

ll__pending *ll__batch_queue(uint64_t loop) { return loop != 0 && loop == tls_batch_loop ? tls_pending : NULL; }

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
        ll__pending *p = loop == tls_batch_loop ? tls_pending : ll__idle_queue(loop);
        if (p != NULL && pending_push(p, (uintptr_t)cb, (uintptr_t)arg) == 0)
            return 0;
    }
    return call_soon_go(loop, cb, arg, out);
}

/* A step yielding its own task: record it in the pending queue, in order
 * with the step's ll_call_soon calls, without entering Go. Anything else
 * (another task, a second outcome, no step running) goes through Go. */
static int yield_in_c(ll_task task) {
    ll__pending *p = tls_pending;
    if (task == 0 || tls_batch_loop == 0 || p == NULL || p->step_task != task || p->step_decided)
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

/* The run entry points refuse to nest: asyncio forbids running a loop while
 * another runs on the same thread, and so do we. A fork child is refused
 * first: forked by a callback, it still has this thread's marker set. */
static int run_guarded(ll_loop loop, int mode) {
    LL__FORK_GUARD();
    if (ll__thread_loop != 0)
        return LL_ERUNNING;
    ll__thread_loop = loop;
    int rc = ll__loop_run_go(loop, mode, THREAD_TOKEN);
    ll__thread_loop = 0;
    return rc;
}

int ll_loop_run_forever(ll_loop loop) { return run_guarded(loop, -1); }

int ll_loop_run_once(ll_loop loop, int mode) {
    if (mode != LL_RUN_ONCE && mode != LL_RUN_NOWAIT)
        return LL_EINVAL;
    return run_guarded(loop, mode);
}

void ll__call_free(uintptr_t fn, uintptr_t value) { ((ll_free_fn)fn)(value); }

uintptr_t ll__call_work(uintptr_t fn, uintptr_t arg, int *err) {
    *err = 0;
    return ((ll_work_fn)fn)((void *)arg, err);
}

void ll__call_queued_work(uintptr_t fn, uintptr_t arg) { ((ll_queue_work_fn)fn)((void *)arg); }

int ll_loop_run_until_complete(ll_loop loop, ll_future fut) {
    LL__FORK_GUARD();
    if (ll__thread_loop != 0)
        return LL_ERUNNING;
    ll__thread_loop = loop;
    int rc = ll__run_until_complete_go(loop, fut, THREAD_TOKEN);
    ll__thread_loop = 0;
    return rc;
}

int ll_run(ll_step_fn main_step, void *arg, uintptr_t *result) {
    /* It makes a loop: the same check as ll_loop_new's (forkguard.c). */
    if (ll__forked_child())
        return LL_EFORKED;
    if (ll__thread_loop != 0)
        return LL_ERUNNING;
    /* No id yet; any non-zero marks "running". Go sets the id once the
     * loop exists, before any of its callbacks can run. */
    ll__thread_loop = (uint64_t)-1;
    int rc = ll__run_go((uintptr_t)main_step, (uintptr_t)arg, result, THREAD_TOKEN);
    ll__thread_loop = 0;
    return rc;
}

/* Thread-safe calls that must know which thread calls them. A handle
 * timer's id released from a callback of its own loop is released in C:
 * this thread runs the loop, so no other may act on it (the gate would
 * refuse them), and ll__ts_release's mutex decides between racing calls. */
int ll_release(uint64_t id) {
    /* First: the C path below takes a mutex that a thread gone in a fork
     * child may have held. */
    LL__FORK_GUARD();
    if ((id & LL__TS_ID_BIT) && tls_batch_loop != 0 && ll__ts_owner(id) == tls_batch_loop)
        return ll__ts_release(id);
    return ll__release_go(id, THREAD_TOKEN);
}

int ll_loop_close(ll_loop loop) {
    LL__FORK_GUARD();
    return ll__loop_close_go(loop, THREAD_TOKEN);
}

int ll__call_host_run(uintptr_t fn, uint64_t loop, uintptr_t arg) {
    return ((ll_host_run_fn)fn)(loop, (void *)arg);
}

/* The protocol slot of transport t if this thread runs t's loop, else NULL
 * (another thread, no loop running here, an unknown or ended id): the
 * write fast path's lookup, valid at any time on the loop's thread. The
 * slot's direct flag is exact there (hotpath.h, ll__proto), and Go runs
 * nothing of this loop on another thread meanwhile. */
static inline ll__proto *direct_slot(uint64_t t) {
    uint64_t loop = ll__thread_loop;
    if (loop == 0 || t == 0)
        return NULL;
    const ll__pending *p = loop == tls_batch_loop ? tls_pending : ll__loop_record(loop);
    return p != NULL ? ll__tmap_get(p, t) : NULL;
}

/* Send what a direct slot's socket takes now. Returns 1 when all of it
 * went; otherwise *data and *len are what is left for Go, which buffers it
 * behind nothing (the flag said nothing was buffered) or ends the
 * transport on an error, as a write through Go does. */
static inline int send_direct(const ll__proto *p, const void **data, size_t *len) {
    ssize_t n = send(p->fd, *data, *len, MSG_NOSIGNAL);
    if (n == (ssize_t)*len)
        return 1;
    if (n > 0) {
        *data = (const char *)*data + n;
        *len -= (size_t)n;
    }
    return 0;
}

/* A write on the loop's thread to an open stream socket with nothing
 * buffered: sent here, without entering Go. Anything else goes to Go. */
int ll_transport_write(ll_transport t, const void *data, size_t len) {
    if (len > 0 && data != NULL) {
        const ll__proto *p = direct_slot(t);
        if (p != NULL && p->direct && send_direct(p, &data, &len))
            return 0;
    }
    return ll__transport_write_go(t, (void *)data, len);
}

/* asyncio's write (a binding's): the same fast path; when the kernel takes
 * it all the buffer stays empty (*buffered 0, result 0: not paused). */
int ll_transport_write_async_size(ll_transport t, const void *data, size_t len, size_t *buffered) {
    if (len > 0 && data != NULL) {
        const ll__proto *p = direct_slot(t);
        if (p != NULL && p->direct && send_direct(p, &data, &len)) {
            if (buffered != NULL)
                *buffered = 0;
            return 0;
        }
    }
    return ll__transport_write_async_size_go(t, data, len, buffered);
}

/* ll_transport_write_async_size with its two results in one int64, so a
 * ctypes binding makes a 3-argument call with no out-parameter (ctypes'
 * POINTER argument and the size object it fills cost ~170 ns a write in
 * Python, bench/python/README.md). A negative result is the error code
 * (the buffer's size is then not reported); otherwise bit 0 is the status
 * (1: paused) and the rest is the buffer's size. */
int64_t ll_transport_write_async_packed(ll_transport t, const void *data, size_t len) {
    if (len > 0 && data != NULL) {
        const ll__proto *p = direct_slot(t);
        if (p != NULL && p->direct && send_direct(p, &data, &len))
            return 0;
    }
    size_t buffered = 0;
    int rc = ll__transport_write_async_size_go(t, data, len, &buffered);
    if (rc < 0)
        return rc;
    if (buffered > (size_t)(INT64_MAX >> 1))
        buffered = (size_t)(INT64_MAX >> 1); /* (no buffer gets near 2^62 bytes) */
    return (int64_t)buffered << 1 | (rc & 1);
}

void ll__deliver_events(uint64_t loop, uintptr_t events_addr, uintptr_t protos_addr, int n, uintptr_t pending_addr,
                        uintptr_t batch_fn, uintptr_t batch_arg) {
    ll_event *evs = (ll_event *)events_addr;
    ll__proto *const *protos = (ll__proto *const *)protos_addr;
    uint64_t saved_loop = tls_batch_loop;
    ll__pending *saved_pending = tls_pending;
    tls_batch_loop = loop;
    tls_pending = (ll__pending *)pending_addr;
    int i = 0;
    while (i < n) {
        /* An earlier event may have paused, closed or aborted this one's
         * transport: then it gets no read event (ll__withhold). */
        if (ll__withhold(&evs[i], protos[i])) {
            i++;
            continue;
        }
        /* Read the protocol now: an earlier event may have changed it. */
        volatile ll__proto *p = protos[i];
        uintptr_t fn = p ? p->fn : 0;
        if (fn != 0) {
            evs[i].arg = (void *)p->arg;
            evs[i].result = ((ll_protocol_fn)fn)(loop, &evs[i], (void *)p->arg);
            i++;
            continue;
        }
        /* A run for the batch sink: it ends before an event withheld now;
         * the sink itself withholds (kind 0) what its own calls stop. */
        int j = i;
        while (j < n && (protos[j] == NULL || ((volatile ll__proto *)protos[j])->fn == 0)) {
            if (j > i && ll__is_read_event(evs[j].kind) && protos[j] != NULL &&
                ((volatile ll__proto *)protos[j])->held != 0)
                break;
            evs[j].arg = protos[j] ? (void *)((volatile ll__proto *)protos[j])->arg : NULL;
            j++;
        }
        if (batch_fn != 0)
            ((ll_event_batch_fn)batch_fn)(loop, &evs[i], (size_t)(j - i), (void *)batch_arg);
        for (int k = i; k < j; k++)
            if (evs[k].kind == 0 && protos[k] != NULL)
                ((volatile ll__proto *)protos[k])->held |= LL__HELD_BATCH;
        i = j;
    }
    tls_batch_loop = saved_loop;
    tls_pending = saved_pending;
}

ll__proto *ll__delivering_slot(uint64_t t) {
    const ll__pending *p = tls_pending;
    return p != NULL && t != 0 ? ll__tmap_get(p, t) : NULL;
}
