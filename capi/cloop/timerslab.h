/* SPDX-License-Identifier: MIT */
/* Internal: timers with a handle, kept in C (timerslab.c). Not installed.
 *
 * A handle timer made from C (ll_call_later/ll_call_at with out != NULL) is
 * a 40-byte record in a chunk of 4,096 outside the Go heap; its handle id
 * names the record's slot and generation, so scheduling, cancelling and
 * running it never enter Go nor touch the global id table. Chunks belong to
 * one loop's slab at a time and return to a process-wide pool once nothing
 * holds their records; they are never freed, so a slot's generation only
 * grows and a stale id never names a later record. */
#ifndef LIBLOOP_TIMERSLAB_H
#define LIBLOOP_TIMERSLAB_H

#include <stdint.h>

#define LL__TS_CHUNK_BITS 12
#define LL__TS_CHUNK_LEN (1 << LL__TS_CHUNK_BITS)
/* slot+1 must fit the id's low 24 bits. */
#define LL__TS_MAX_CHUNKS ((1 << (24 - LL__TS_CHUNK_BITS)) - 1)

/* Handle ids of records: bit 63 set (the id table's never is),
 * generation (39 bits) << 24, slot + 1 (24 bits). */
#define LL__TS_ID_BIT ((uint64_t)1 << 63)
#define LL__TS_GEN_MASK (((uint64_t)1 << 39) - 1)

/* A record's tag: generation << 8 | state bits. */
#define LL__TS_HOST 1u      /* the host holds the id (until ll_release) */
#define LL__TS_LOOP 2u      /* the loop holds it: scheduled, not yet run or dropped */
#define LL__TS_INQ 4u       /* in the slab's timer queue (not yet moved to the ready queue) */
#define LL__TS_CANCELLED 8u /* ll_handle_cancel was called */
#define LL__TS_GEN_SHIFT 8

/* One timer. when/fn/arg are set when it is made, seq when Go queues it. */
typedef struct ll__trec {
    int64_t when; /* deadline, loop nanoseconds */
    uint64_t seq; /* the loop's scheduling order */
    uintptr_t fn;
    uintptr_t arg;
    uint64_t tag;
} ll__trec;

typedef struct ll__tslab ll__tslab;

typedef struct ll__tchunk {
    ll__trec recs[LL__TS_CHUNK_LEN];
    ll__tslab *owner; /* NULL: its loop was released (orphaned) or pooled */
    int64_t live;     /* records with LL__TS_HOST or LL__TS_LOOP */
    int32_t index;
    /* Records [0, touched) were ever used; the rest are still calloc's
     * untouched zero pages, whose generation is known to be 0: reading it
     * would map the shared zero page, and the write after it would fault
     * again (copy-on-write, a TLB shootdown across the process's threads). */
    int32_t touched;
    struct ll__tchunk *next_pool;
} ll__tchunk;

/* A loop's slab (inside its ll__pending record): the chunks it owns, the
 * never-used records of its newest chunk, and a FIFO of its freed records
 * linked through their seq field (no memory of its own). Touched by the
 * loop's thread, or by a thread that holds the loop's gate (ll_release). */
struct ll__tslab {
    uint64_t loop;
    ll__tchunk **chunks;
    int32_t nchunks, chunks_cap;
    uint32_t fresh, fresh_end; /* never-used slots [fresh, fresh_end) */
    uint32_t free_head, free_tail;
    int64_t free_n;
    int64_t cancelled; /* records with LL__TS_INQ that are cancelled */
};

/* Every chunk ever made, by index (slot >> LL__TS_CHUNK_BITS). */
extern ll__tchunk *ll__ts_chunks[LL__TS_MAX_CHUNKS];

/* A new record with the host's and the loop's references, or NULL (no
 * slot left, out of memory): the caller takes the Go path. */
ll__trec *ll__ts_alloc(ll__tslab *s, uint32_t *slot);
/* The record an id names, live (held by the host) or not; NULL for an id
 * that names no record. *slot receives its slot. */
ll__trec *ll__ts_lookup(uint64_t id, uint32_t *slot);
/* The id of a record. */
uint64_t ll__ts_id(uint32_t slot, uint64_t tag);
/* Whether id is one of ours and its record is held by the host. */
int ll__ts_valid(uint64_t id);
/* The loop id that owns the record id names (0: none or released). */
uint64_t ll__ts_owner(uint64_t id);
/* Cancel: 0, or LL_EBADHANDLE. The caller has checked the thread. */
int ll__ts_cancel(uint64_t id);
/* Drop the host's reference: 0 for exactly one caller, else
 * LL_EBADHANDLE. The caller holds the owner's gate (or it has none). */
int ll__ts_release(uint64_t id);
/* Undo ll__ts_alloc (the timer could not be queued). */
void ll__ts_discard(uint32_t slot);
/* Drop the loop's references to the records of n ids (Go's queue dropped
 * them; an id whose record was freed since is skipped). */
void ll__ts_unloop_many(const uint64_t *ids, int64_t n);
/* Drop the loop's reference to every record of s (the loop closed). */
void ll__ts_drop_all(ll__tslab *s);
/* The loop is released: pool s's chunks that nothing holds, orphan the
 * rest (their records stay the host's to release). */
void ll__ts_retire(ll__tslab *s);
/* Run a due record (arg: its slot): drop the loop's reference and call the
 * host's callback unless the timer was cancelled. */
void ll__ts_fire(uint64_t loop, void *arg);

#endif
