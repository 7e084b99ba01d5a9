// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"github.com/libloop/libloop/internal/timers"
	"github.com/libloop/libloop/libloop"
)

// timerSlab orders a loop's handle timers, whose records live in C
// (cloop/timerslab.c): a FIFO run of slots for timers scheduled in
// deadline order (a push and a pop in memory order, a million consecutive
// slots in a few segments) beside a timers.Heap of slots for the rest,
// each entry with its record's key copied in (a record's deadline and
// sequence never change while it is queued), the earlier front first, as
// timers.Queue does. It is the core's TimerSource (loopState.Timers); the
// core looks at it only from a push (NextSeq) until Peek finds it empty,
// so an idle loop pays nothing for it. Loop thread only.
type timerSlab struct {
	s    *loopState
	cs   *C.ll__tslab
	run  slotRun
	heap timers.Heap[uint32]
	n    int // run.n + heap.Len()
	// dead names records the queue dropped (cancelled), handed to C in
	// batches to drop the loop's reference.
	dead []C.uint64_t
	// quiet holds the unreferenced ids among the queued timers (refs.go).
	quiet map[C.uint64_t]struct{}
	// spare holds emptied batch arrays for reuse (slabBatch.Drop).
	spare [][]uint32
}

var tsChunks = &C.ll__ts_chunks

// A record tag's generation field (cloop/timerslab.h).
const (
	tsGenShift = C.LL__TS_GEN_SHIFT
	tsGenMask  = C.LL__TS_GEN_MASK
)

// rec is a slot's record.
func rec(slot uint32) *C.ll__trec {
	return &tsChunks[slot>>C.LL__TS_CHUNK_BITS].recs[slot&(C.LL__TS_CHUNK_LEN-1)]
}

// slotKey is a slot's record's place in the timer order.
func slotKey(slot uint32) timers.Key {
	r := rec(slot)
	return timers.Key{When: int64(r.when), Seq: uint64(r.seq)}
}

// push queues a slot C scheduled (flushPending): it takes its sequence
// number now, in order with every other timer of the loop.
func (q *timerSlab) push(slot uint32) {
	r := rec(slot)
	r.seq = C.uint64_t(q.s.loop.NextSeq())
	r.tag |= C.LL__TS_INQ
	if r.tag&C.LL__TS_CANCELLED != 0 {
		q.cs.cancelled++
	}
	k := timers.Key{When: int64(r.when), Seq: uint64(r.seq)}
	if q.run.n == 0 || !k.Before(slotKey(q.run.back())) {
		q.run.push(slot)
	} else {
		q.heap.Push(timers.Entry[uint32]{Key: k, Val: slot})
	}
	q.n++
}

// front returns the earliest slot, its key, and whether it is the run's;
// the queue must not be empty.
func (q *timerSlab) front() (uint32, timers.Key, bool) {
	if q.heap.Len() == 0 {
		slot := q.run.front()
		return slot, slotKey(slot), true
	}
	top := q.heap.Top()
	if q.run.n == 0 {
		return top.Val, top.Key, false
	}
	slot := q.run.front()
	if k := slotKey(slot); !top.Before(k) {
		return slot, k, true
	}
	return top.Val, top.Key, false
}

// take removes the earliest slot from the queue.
func (q *timerSlab) take() uint32 {
	slot, _, inRun := q.front()
	if inRun {
		q.run.pop()
	} else {
		q.heap.Pop()
	}
	q.n--
	r := rec(slot)
	r.tag &^= C.LL__TS_INQ
	if r.tag&C.LL__TS_CANCELLED != 0 {
		q.cs.cancelled--
	}
	return slot
}

// Peek implements libloop.TimerSource: cancelled fronts are dropped.
func (q *timerSlab) Peek() (int64, uint64, bool) {
	for q.n > 0 {
		slot, k, _ := q.front()
		if rec(slot).tag&C.LL__TS_CANCELLED == 0 {
			return k.When, k.Seq, true
		}
		q.drop(q.take())
	}
	return 0, 0, false
}

// Take implements libloop.TimerSource: the due run becomes one batch, run
// in one crossing by ll__ts_fire_many (in debug mode one timer a batch, so
// each is timed as a callback).
func (q *timerSlab) Take(end int64, bounded bool, bw int64, bs uint64) libloop.HostBatch {
	b := &slabBatch{q: q}
	if n := len(q.spare); n > 0 {
		b.slots, q.spare = q.spare[n-1], q.spare[:n-1]
	}
	one := q.s.loop.Debug()
	for {
		b.slots = append(b.slots, q.take())
		if one {
			return b
		}
		w, s, ok := q.Peek()
		if !ok || w >= end || bounded && (w > bw || w == bw && s > bs) {
			return b
		}
	}
}

// slabBatch is a run of due handle timers (their slots), one place in the
// ready queue (libloop.HostBatch): 4 bytes a timer where a ready entry
// each would take 24, and one crossing to run them all.
type slabBatch struct {
	q     *timerSlab
	slots []uint32
}

func (b *slabBatch) Run() {
	s := b.q.s
	s.runHost(func() {
		if len(b.slots) > 0 {
			C.ll__ts_fire_many(C.uint64_t(s.id), (*C.uint32_t)(&b.slots[0]), C.int64_t(len(b.slots)), s.pending)
		}
	})
	b.Drop()
}

// Len is how many of its timers are not cancelled (Stats' ready count;
// the loop counts them as callbacks when the batch runs).
func (b *slabBatch) Len() int {
	n := 0
	for _, slot := range b.slots {
		if rec(slot).tag&C.LL__TS_CANCELLED == 0 {
			n++
		}
	}
	return n
}

// Drop forgets the slots (their records are the slab's, dropped by Drop
// when the loop closes); a small array is kept for the next batch.
func (b *slabBatch) Drop() {
	if b.slots != nil && cap(b.slots) <= maxSpareSlots && len(b.q.spare) < 4 {
		b.q.spare = append(b.q.spare, b.slots[:0])
	}
	b.slots = nil
}

// maxSpareSlots bounds a kept batch array (16 KiB).
const maxSpareSlots = 4096

// Live implements libloop.TimerSource.
func (q *timerSlab) Live() int { return q.n - int(q.cs.cancelled) }

// minSlabPurge and the half-cancelled rule are asyncio's (and the core's).
const minSlabPurge = 100

// Tidy implements libloop.TimerSource: when more than half of over 100
// queued timers are cancelled they are all dropped at once (asyncio's
// purge), so cancelled timers never hold most of the memory.
func (q *timerSlab) Tidy() {
	if q.n > minSlabPurge && 2*int(q.cs.cancelled) > q.n {
		cancelled := func(slot uint32) bool {
			r := rec(slot)
			if r.tag&C.LL__TS_CANCELLED == 0 {
				return false
			}
			r.tag &^= C.LL__TS_INQ
			q.drop(slot)
			return true
		}
		q.run.removeIf(cancelled)
		q.heap.RemoveIf(func(e *timers.Entry[uint32]) bool { return cancelled(e.Val) })
		q.n = q.run.n + q.heap.Len()
		q.cs.cancelled = 0
	}
	q.flushDead()
}

// Drop implements libloop.TimerSource (the loop is closing): every record
// loses the loop's reference, queued here, in C or in a batch.
func (q *timerSlab) Drop() {
	q.run = slotRun{}
	q.heap = timers.Heap[uint32]{}
	q.n = 0
	q.dead = q.dead[:0]
	if p := q.s.pending; p != nil {
		p.ntimers = 0 // C-queued timers of a closed loop would be refused anyway
		C.ll__ts_drop_all(&p.slab)
	}
}

// Timers implements libloop.TimerHost: the core's TimerSource is the slab.
func (s *loopState) Timers() libloop.TimerSource { return s.slab }

// dropTimers is Drop again for capi's own close path (closeLoop), after
// the core's Close dropped what it knew: timers C queued while it closed
// lose the loop's reference too.
func (s *loopState) dropTimers() {
	if s.slab != nil {
		s.slab.Drop()
	}
}

// drop queues slot's record to lose the loop's reference.
func (q *timerSlab) drop(slot uint32) {
	q.dead = append(q.dead, slabID(slot, rec(slot).tag))
	if len(q.dead) == cap(q.dead) && len(q.dead) >= 256 {
		q.flushDead()
	}
}

func (q *timerSlab) flushDead() {
	if len(q.dead) > 0 {
		C.ll__ts_unloop_many(&q.dead[0], C.int64_t(len(q.dead)))
		q.dead = q.dead[:0]
	}
}

var _ libloop.TimerSource = (*timerSlab)(nil)
