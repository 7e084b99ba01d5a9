/* SPDX-License-Identifier: MIT */
/* ll_call_soon_threadsafe's queue, the posters' side: a lock-free MPSC
 * FIFO of chunks (postq.h has the layout; postq_loop.c the loop's side).
 * A post is one compare-and-swap on the tail and two stores into the slot
 * it reserved, or, while one thread posts alone, plain stores only. This
 * file only queues; Go decides when the loop takes and what runs. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "cloop.h"

_Static_assert(sizeof(ll__postslot) == sizeof(ll__soon), "a slot is run as an ll__soon");

/* What fills a slot a poster reserved in a queue that serves another loop
 * by now (the record was reused under it): the slot must be filled, the
 * call must not run. */
LL_TLS int ll__postq_wakefd = -1;

static void post_void(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

/* A short wait for another thread's few instructions (a poster linking
 * the next chunk, or filling the slot it reserved): spin a little, then
 * give the CPU away, in case that thread was preempted mid-way. */
void ll__postq_backoff(int *spins) {
    if (++*spins < 64) {
        ll__postq_cpu_relax();
        return;
    }
    sched_yield();
}

/* How a poster orders its fill before its look at the wake flag (the
 * wake protocol, ll__postq_push). 1: the fill is an exchange, a full
 * barrier, on every post. 0: a plain store; the loop, in the rare case it
 * must know whether a poster it caught between reservation and fill has
 * filled, forces a barrier on every thread of the process itself with
 * membarrier(2) (ll__postq_settle). 0 where the kernel offers it. */
int ll__postq_fence_fill = 1;
static pthread_once_t fence_once = PTHREAD_ONCE_INIT;

static void fence_setup(void) {
#if defined(__linux__) && defined(SYS_membarrier)
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0)
        ll__postq_fence_fill = 0;
#endif
}

/* A zeroed chunk: a spare one if the loop left any, else a new one. */
static ll__postchunk *chunk_get(ll__postq *q) {
    for (int i = 0; i < LL__POSTQ_SPARES; i++) {
        ll__postchunk *c = __atomic_load_n(&q->spare[i], __ATOMIC_RELAXED);
        if (c != NULL && (c = __atomic_exchange_n(&q->spare[i], NULL, __ATOMIC_ACQ_REL)) != NULL) {
            memset(c, 0, sizeof *c);
            return c;
        }
    }
    return calloc(1, sizeof(ll__postchunk));
}

void ll__postq_chunk_put(ll__postq *q, ll__postchunk *c) {
    for (int i = 0; q != NULL && i < LL__POSTQ_SPARES; i++) {
        ll__postchunk *none = NULL;
        if (__atomic_compare_exchange_n(&q->spare[i], &none, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return;
    }
    free(c);
}

ll__postq *ll__postq_new(void) {
    /* Before any queue exists: a poster reaches a queue only through the
     * registry, published after this. */
    pthread_once(&fence_once, fence_setup);
    ll__postq *q = aligned_alloc(_Alignof(ll__postq), sizeof(ll__postq));
    if (q == NULL)
        return NULL;
    memset(q, 0, sizeof *q);
    q->tail = LL__POSTQ_CLOSED;
    q->bias = LL__BIAS_OFF;
    return q;
}

int ll__postq_open(ll__postq *q, uint64_t loop) {
    ll__postchunk *c = chunk_get(q);
    if (c == NULL)
        return -1;
    /* The first position of the next lap: always beyond the old tail, so
     * a poster that read the tail before the close can never succeed. */
    uint64_t pos = ((__atomic_load_n(&q->tail, __ATOMIC_RELAXED) >> 1) / LL__POSTQ_LAP + 1) * LL__POSTQ_LAP;
    q->head_chunk = c;
    q->taken = q->fences = 0;
    __atomic_store_n(&q->head, pos, __ATOMIC_RELEASE);
    __atomic_store_n(&q->tail_chunk, c, __ATOMIC_RELEASE);
    /* Before the tail: a poster that reads the reopened tail sees the bias
     * (the shared path checks it again after reading the tail). The owner
     * stays: it is the record's, never reset, so that a thread that read
     * "I own it" before the close can only be the one owner after it. */
    __atomic_store_n(&q->bias, ll__postq_fence_fill ? LL__BIAS_OFF : LL__BIAS_ON, __ATOMIC_RELEASE);
    __atomic_store_n(&q->wake, 0, __ATOMIC_SEQ_CST);
    /* The loop before the tail: a poster whose reservation succeeds on the
     * reopened tail sees the new loop id (and fills its slot with
     * post_void if it posted for the old one). */
    __atomic_store_n(&q->loop, loop, __ATOMIC_RELEASE);
    __atomic_store_n(&q->tail, pos << 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* ---- One poster: the bias ------------------------------------------------
 * Most queues have one posting thread. The first thread to post after the
 * queue opens becomes its owner and posts with plain stores, no atomic
 * read-modify-write (on this kind of machine a locked instruction costs
 * as much as the rest of a post). The owner sets owner_busy around each
 * post and checks the bias inside; a second thread (or the loop, or
 * close) drops the bias: it marks it DROPPING, runs membarrier(2), which
 * puts a barrier on every thread of the process, so the owner either is
 * seen busy (and is waited for) or sees DROPPING and reserves like
 * everyone else from then on. Only where membarrier is available. */

/* This thread's token: the address of a thread-local (a new thread may
 * get a dead owner's; it is then the only one posting, which is all the
 * bias needs). The first poster claims the record once (owner 0 to its
 * token) and keeps it for every loop the record serves; only the owner
 * writes owner_busy. A dead owner costs the record's next loop one drop. */
static LL_TLS char tls_me;

/* Force a barrier on every thread of the process (membarrier registered). */
void ll__postq_barrier_all(void) {
#if defined(__linux__) && defined(SYS_membarrier)
    for (int spins = 0; syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) != 0;)
        ll__postq_backoff(&spins); /* cannot fail once registered */
#endif
}

/* Drop the bias, or wait until whoever is dropping it has. */
void ll__postq_bias_drop(ll__postq *q) {
    int32_t on = LL__BIAS_ON;
    int spins = 0;
    if (__atomic_compare_exchange_n(&q->bias, &on, LL__BIAS_DROPPING, 0, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE)) {
        ll__postq_barrier_all();
        while (__atomic_load_n(&q->owner_busy, __ATOMIC_ACQUIRE))
            ll__postq_backoff(&spins);
        __atomic_store_n(&q->bias, LL__BIAS_OFF, __ATOMIC_RELEASE);
        return;
    }
    /* Off, or on again: the queue closed and reopened meanwhile (the
     * caller starts over). */
    while (__atomic_load_n(&q->bias, __ATOMIC_ACQUIRE) == LL__BIAS_DROPPING)
        ll__postq_backoff(&spins);
}

/* The post's own steps, inlined into ll__postq_push. */
#define HOT static inline __attribute__((always_inline))

/* Fill slot off of chunk c for loop with fn(arg), or with post_void if the
 * queue serves another loop by now (stale: returns 1). */
HOT int fill(ll__postq *q, ll__postchunk *c, uint64_t off, uint64_t loop, uintptr_t fn, uintptr_t arg,
             uint64_t *serves) {
    *serves = __atomic_load_n(&q->loop, __ATOMIC_ACQUIRE);
    int stale = *serves != loop;
    c->slots[off].arg = stale ? 0 : arg;
    if (ll__postq_fence_fill)
        __atomic_exchange_n(&c->slots[off].fn, stale ? (uintptr_t)post_void : fn, __ATOMIC_SEQ_CST);
    else
        __atomic_store_n(&c->slots[off].fn, stale ? (uintptr_t)post_void : fn, __ATOMIC_RELEASE);
    return stale;
}

/* The wake protocol's poster side, after the fill: see ll__postq_push. A
 * plain read first: while the loop is awake the flag's line stays shared
 * and costs the poster no write. */
HOT void wake_if_asleep(ll__postq *q, uint64_t serves) {
    if (__atomic_load_n(&q->wake, __ATOMIC_SEQ_CST) == 0 && __atomic_exchange_n(&q->wake, 1, __ATOMIC_SEQ_CST) == 0) {
#ifdef __linux__
        if (ll__postq_wakefd >= 0) {
            uint64_t one = 1;
            /* A full counter (EAGAIN) has a wake-up pending anyway. */
            ssize_t rc = write(ll__postq_wakefd, &one, sizeof one);
            (void)rc;
            return;
        }
#endif
        ll_loop_wakeup(serves); /* a loop closed meanwhile drops the post, as any */
    }
}

/* The owner's post: nobody else moves the tail meanwhile (close drops the
 * bias first), so it is never on a non-slot position. The fill
 * comes before the tail moves: the loop never sees this slot reserved and
 * empty. The owner's fill and its read of the wake flag have no barrier
 * between them: the loop forces one before it sleeps (ll__postq_settle). */
HOT int push_alone(ll__postq *q, uint64_t loop, uintptr_t fn, uintptr_t arg) {
    uint64_t t = __atomic_load_n(&q->tail, __ATOMIC_RELAXED), nt = t + 2;
    if (t & LL__POSTQ_CLOSED) {
        /* The bias of a reopening queue, read before its tail opened: this
         * post is for the loop that closed (the new one's id is handed out
         * after its queue is open). The Go path refuses it. */
        __atomic_store_n(&q->owner_busy, 0, __ATOMIC_RELEASE);
        return -1;
    }
    uint64_t off = (t >> 1) & LL__POSTQ_LAP_MASK;
    ll__postchunk *c = __atomic_load_n(&q->tail_chunk, __ATOMIC_RELAXED);
    if (off + 1 == LL__POSTQ_CAP) {
        ll__postchunk *next = chunk_get(q);
        if (next == NULL) {
            __atomic_store_n(&q->owner_busy, 0, __ATOMIC_RELEASE);
            return -1;
        }
        __atomic_store_n(&c->next, next, __ATOMIC_RELEASE);
        __atomic_store_n(&q->tail_chunk, next, __ATOMIC_RELAXED); /* published by the tail's release */
        nt = t + 4;                                               /* past the lap's non-slot position */
    }
    uint64_t serves;
    int stale = fill(q, c, off, loop, fn, arg, &serves);
    __atomic_store_n(&q->tail, nt, __ATOMIC_RELEASE);
    __atomic_store_n(&q->owner_busy, 0, __ATOMIC_RELEASE);
    wake_if_asleep(q, serves);
    return stale ? -1 : 0;
}

/* The owner's post if this thread owns the queue (or now claims it) and
 * the bias holds: 0 or -1 as ll__postq_push; 1 if the caller must reserve
 * with the others (the bias is off by now). */
HOT int push_biased(ll__postq *q, uint64_t loop, uintptr_t fn, uintptr_t arg) {
    uintptr_t me = (uintptr_t)&tls_me, none = 0;
    uintptr_t owner = __atomic_load_n(&q->owner, __ATOMIC_RELAXED);
    if (owner == me ||
        (owner == 0 && __atomic_compare_exchange_n(&q->owner, &none, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))) {
        __atomic_store_n(&q->owner_busy, 1, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the CPU's order: bias_drop's membarrier */
        if (__atomic_load_n(&q->bias, __ATOMIC_ACQUIRE) == LL__BIAS_ON)
            return push_alone(q, loop, fn, arg);
        __atomic_store_n(&q->owner_busy, 0, __ATOMIC_RELEASE);
    }
    ll__postq_bias_drop(q);
    return 1;
}

int ll__postq_push(ll__postq *q, uint64_t loop, uintptr_t fn, uintptr_t arg) {
    ll__postchunk *next = NULL, *c;
    uint64_t off;
    int spins = 0;
again:
    if (__atomic_load_n(&q->bias, __ATOMIC_ACQUIRE) != LL__BIAS_OFF) {
        int rc = push_biased(q, loop, fn, arg);
        if (rc <= 0) {
            if (next != NULL)
                ll__postq_chunk_put(q, next);
            return rc;
        }
    }
    uint64_t t = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
    for (;;) {
        if (t & LL__POSTQ_CLOSED) {
            free(next);
            return -1;
        }
        /* A reopened queue sets its bias before its tail: read after the
         * tail, an ON here means an owner may be posting alone. */
        if (__atomic_load_n(&q->bias, __ATOMIC_ACQUIRE) != LL__BIAS_OFF)
            goto again;
        off = (t >> 1) & LL__POSTQ_LAP_MASK;
        if (off == LL__POSTQ_CAP) { /* another poster links the next chunk */
            ll__postq_backoff(&spins);
            t = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
            continue;
        }
        /* Read before the swap, dereferenced only after it succeeds: the
         * tail cannot have left this chunk then (it would have moved). */
        c = __atomic_load_n(&q->tail_chunk, __ATOMIC_ACQUIRE);
        if (off + 1 == LL__POSTQ_CAP && next == NULL) {
            next = chunk_get(q);
            if (next == NULL)
                return -1;
        }
        if (__atomic_compare_exchange_n(&q->tail, &t, t + 2, 1, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
            break;
    }
    if (off + 1 == LL__POSTQ_CAP) {
        /* The chunk's last slot: link the next chunk, then move the tail
         * past the lap's non-slot position (an add: it keeps a CLOSED bit
         * set meanwhile). Done before this slot is filled, so whoever has
         * seen it filled may cross to the next chunk and free this one. */
        __atomic_store_n(&c->next, next, __ATOMIC_RELEASE);
        __atomic_store_n(&q->tail_chunk, next, __ATOMIC_RELEASE);
        __atomic_fetch_add(&q->tail, 2, __ATOMIC_SEQ_CST);
        next = NULL;
    }
    if (next != NULL) /* got for a last slot another poster took */
        ll__postq_chunk_put(q, next);
    /* The wake protocol: the loop clears the wake flag, then reads its
     * head slot; this poster fills its slot, then reads the flag. With a
     * barrier between each pair (the loop's clear is an exchange; the
     * fill is one too, or membarrier stands in for it), either the loop
     * sees the slot filled or this poster sees the flag clear and wakes
     * it. A slot beyond the head may be filled while the loop sleeps: the
     * head slot's poster wakes it when that one fills, stale or not. */
    uint64_t serves;
    int stale = fill(q, c, off, loop, fn, arg, &serves);
    wake_if_asleep(q, serves);
    return stale ? -1 : 0;
}

/* Thread-safe, from any thread, the loop's own included: queued in C
 * without a lock, the loop woken (through Go, which knows the wakeup fd
 * and whether it is still open) only when it is asleep or about to be. */
int ll_call_soon_threadsafe(ll_loop loop, ll_callback cb, void *arg) {
    /* The queue this thread posted to last, if it still serves that loop
     * (queues are never freed; a record reused meanwhile is caught by the
     * check here, or by the push's own check after its reservation). */
    static LL_TLS uint64_t last_loop;
    static LL_TLS ll__postq *last_q;
    ll__postq *q = last_q;
    if (loop != last_loop || q == NULL || __atomic_load_n(&q->loop, __ATOMIC_ACQUIRE) != loop) {
        ll__pending *p = cb != NULL && loop != 0 ? ll__loop_record(loop) : NULL;
        q = p != NULL ? p->postq : NULL;
        last_loop = q != NULL ? loop : 0;
        last_q = q;
    }
    if (q != NULL && cb != NULL && ll__postq_push(q, loop, (uintptr_t)cb, (uintptr_t)arg) == 0)
        return 0;
    last_loop = 0;
    last_q = NULL;
    return ll__call_soon_threadsafe_go(loop, cb, arg);
}
