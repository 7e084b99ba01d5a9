/* SPDX-License-Identifier: MIT */
/* Internal: ll_call_soon_threadsafe's queue (postq.c). Not installed.
 *
 * A lock-free multi-producer, single-consumer FIFO of fixed-size chunks.
 * A poster reserves a slot with one compare-and-swap on `tail` and fills
 * it; the loop takes every filled slot in order (one linearizable order:
 * a post that happens before another runs before it, across threads too).
 * No poster ever waits for the loop, and the loop never waits for a
 * poster (it stops at the first reserved slot not yet filled). */
#ifndef LIBLOOP_POSTQ_H
#define LIBLOOP_POSTQ_H

#include <stdint.h>

/* Slots per chunk + 1: position p is slot p % LL__POSTQ_LAP of its chunk,
 * and the last position of a lap (LL__POSTQ_CAP) is no slot: while `tail`
 * stands there, the poster that took slot CAP - 1 is linking the next
 * chunk and the others wait for it. A power of two, so % is a mask. */
#define LL__POSTQ_LAP 256
#define LL__POSTQ_CAP (LL__POSTQ_LAP - 1)
/* Finished chunks a queue keeps for reuse (32 KiB at most). */
#define LL__POSTQ_SPARES 8

typedef struct ll__postslot {
    uintptr_t fn; /* 0 until the poster has filled the slot (release) */
    uintptr_t arg;
} ll__postslot;

typedef struct ll__postchunk {
    ll__postslot slots[LL__POSTQ_CAP];
    struct ll__postchunk *next; /* set before tail leaves this chunk */
} ll__postchunk;

/* The three parts sit on their own cache lines: the posters write the
 * first, the loop the last, and the wake flag changes only when the loop
 * goes to sleep or is woken. */
typedef struct ll__postq {
    /* (position << 1) | LL__POSTQ_CLOSED; positions only grow (the
     * queue reopens a lap further on), so a poster's stale compare-and-
     * swap can never succeed. */
    _Alignas(64) uint64_t tail;
    ll__postchunk *tail_chunk; /* the chunk of tail's position */
    uint64_t loop;             /* the loop id the queue serves (0: none) */
    /* The bias (postq.c, "one poster"): while bias is LL__BIAS_ON, only
     * owner (a thread's token, claimed once, never reset) posts, with
     * plain stores, owner_busy set around each post. */
    uintptr_t owner;
    int32_t owner_busy;
    /* 0 while the loop is asleep or about to be (it cleared it before its
     * last look at the queue): the next poster to see 0 sets it and wakes
     * the loop. 1 while the loop is awake or already woken. Beside it the
     * bias, which posters read as often and the loop reads when it arms
     * the flag: neither touches the posters' line. */
    _Alignas(64) int32_t wake;
    int32_t bias;
    /* The loop's side: the next position to take, and its chunk; how many
     * posts it took and how many barriers it forced since the queue
     * opened (it drops the bias when they cost more than they save). */
    _Alignas(64) uint64_t head;
    ll__postchunk *head_chunk;
    uint64_t taken;
    uint64_t fences;
    /* Chunks the loop is done with, for the posters that need one (each
     * cell changes hands by compare-and-swap or exchange, so each side
     * owns what it took): in steady posting no malloc, no free and no
     * fresh pages, even while the loop lags a few chunks behind (one
     * spare was not enough: page faults took ~8% of a poster thread's time). */
    _Alignas(64) ll__postchunk *spare[LL__POSTQ_SPARES];
} ll__postq;

#define LL__POSTQ_CLOSED ((uint64_t)1)
#define LL__POSTQ_LAP_MASK ((uint64_t)LL__POSTQ_LAP - 1)
/* ll__postq.bias: one poster may post alone / the bias is being dropped /
 * every poster reserves with a compare-and-swap. */
#define LL__BIAS_ON 0
#define LL__BIAS_DROPPING 1
#define LL__BIAS_OFF 2

/* A closed queue for no loop, or NULL (no memory). Never freed: a poster
 * may still read a record it looked up after its loop went away. */
ll__postq *ll__postq_new(void);
/* Open q for loop (the loop's thread, q closed); -1 if memory ran out. */
int ll__postq_open(ll__postq *q, uint64_t loop);
/* Queue fn(arg) for loop, waking the loop if it may be asleep: 0, or -1
 * if the post was not queued (q closed, or serving another loop by now,
 * or no memory): the caller's Go path answers then. */
int ll__postq_push(ll__postq *q, uint64_t loop, uintptr_t fn, uintptr_t arg);
/* Whether the next slot to take is filled (loop thread; loops.go reads
 * the same words with Go's atomics). */
int ll__postq_pending(ll__postq *q);
/* The loop, about to block with its head slot reserved and not filled:
 * 1 if it is filled now, 0 if the loop may block (its poster will wake
 * it). Loop thread. */
int ll__postq_settle(ll__postq *q);
/* The loop, about to block: arm the wake flag and look (Go's BeforeBlock
 * without the linger): 1 if a post is to be taken, 0 if it may block.
 * Loop thread. */
int ll__postq_before_block(ll__postq *q);
/* The loop, about to block right after posts came: wait a few
 * microseconds for the head slot to be filled (1 if it was). */
int ll__postq_linger(ll__postq *q);
/* Take every filled slot, in order: how many (0: none), and where the
 * first is (*chunk, slot *off); they stay in their chunks, which now
 * belong to the taker. Loop thread. */
int64_t ll__postq_take(ll__postq *q, ll__postchunk **chunk, uint64_t *off);
/* Run (call 1) or drop (call 0) n taken slots from chunk's slot off, in
 * order, giving up each chunk whose last slot is among them. Taken batches
 * must be run or dropped in the order they were taken. Loop thread. */
void ll__postq_run(ll__postq *q, uint64_t loop, uintptr_t chunk, uint64_t off, int64_t n, uintptr_t pending,
                   int call);
/* Close q: later pushes fail; waits for the posters that reserved a slot
 * to fill it, then drops everything untaken. Loop thread, not running. */
void ll__postq_close(ll__postq *q);


/* Shared by postq.c and postq_loop.c; hidden, not part of the ABI. */
#define LL__POSTQ_HIDDEN __attribute__((visibility("hidden")))
/* 1: posters fill with an exchange (no membarrier here); 0: plain stores,
 * the loop forcing barriers with membarrier(2) when it must (postq.c). */
extern LL__POSTQ_HIDDEN int ll__postq_fence_fill;
/* A short wait for another thread's few instructions: spin, then yield. */
LL__POSTQ_HIDDEN void ll__postq_backoff(int *spins);
/* The loop is done with chunk c: keep it as a spare of q's if a cell is
 * free, else free it (q NULL: free it). */
LL__POSTQ_HIDDEN void ll__postq_chunk_put(ll__postq *q, ll__postchunk *c);
/* Put a barrier on every thread of the process (membarrier registered). */
LL__POSTQ_HIDDEN void ll__postq_barrier_all(void);
/* Drop q's bias (one poster), or wait until whoever drops it has. */
LL__POSTQ_HIDDEN void ll__postq_bias_drop(ll__postq *q);

/* One spin-wait step: tells the CPU this is a wait (and spares power). */
static inline void ll__postq_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
