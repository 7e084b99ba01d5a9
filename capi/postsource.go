// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// Pending, BeforeBlock and Take make loopState the core's PostSource:
// the lock-free queue of ll_call_soon_threadsafe (cloop/postq.c), taken whole
// each iteration and run as one batch. Pending and BeforeBlock read the
// queue's words with Go's atomics (sequentially consistent, as postq.c's
// side of the wake protocol needs): no crossing into C per iteration.
// Pending is ll__postq_pending: the head slot is filled (the head is the
// loop's own, and never rests on a lap's non-slot position).
func (s *loopState) Pending() bool {
	q := s.pending.postq
	if q == nil || q.head_chunk == nil {
		return false
	}
	slot := &q.head_chunk.slots[q.head&(C.LL__POSTQ_LAP-1)]
	return atomic.LoadUintptr((*uintptr)(unsafe.Pointer(&slot.fn))) != 0
}

// BeforeBlock clears the queue's wake flag, then looks at the queue: a
// filled head slot is taken. With the bias off and nothing reserved, the
// loop may block: a poster that reserves after this look sees the flag
// clear (its reservation is a full barrier) and wakes it. Otherwise (a
// slot reserved and not yet filled, or a lone owner posting without
// barriers) ll__postq_settle decides: a short wait, then a barrier forced
// on every thread. The bias is read first: once it reads off, every post
// the owner made before is visible here.
// While posts flow, it first lingers a few microseconds for the next one:
// a wake costs the poster a system call (and, on a busy machine, often its
// CPU to the loop it woke); a loop that sleeps between posts makes it pay
// that per handful of posts.
func (s *loopState) BeforeBlock() bool {
	q := s.pending.postq
	if q == nil {
		return false
	}
	if s.postsFlowing {
		if C.ll__postq_linger(q) != 0 {
			return true
		}
		s.postsFlowing = false
	}
	atomic.StoreInt32((*int32)(unsafe.Pointer(&q.wake)), 0)
	bias := atomic.LoadInt32((*int32)(unsafe.Pointer(&q.bias)))
	if s.Pending() {
		return true
	}
	if bias == C.LL__BIAS_OFF && atomic.LoadUint64((*uint64)(unsafe.Pointer(&q.tail)))>>1 == uint64(q.head) {
		return false
	}
	return C.ll__postq_settle(q) != 0
}

func (s *loopState) Take() libloop.HostBatch {
	q := s.pending.postq
	if q == nil {
		return nil
	}
	var chunk *C.ll__postchunk
	var off C.uint64_t
	n := C.ll__postq_take(q, &chunk, &off)
	if n == 0 {
		return nil
	}
	s.postsFlowing = true
	return &postBatch{s: s, chunk: uintptr(unsafe.Pointer(chunk)), off: off, n: n}
}

// postBatch is a run of posts taken from the queue's chunks
// (libloop.HostBatch), run where they lie: the chunks are freed as the
// batch passes their last slot.
type postBatch struct {
	s     *loopState
	chunk uintptr // *C.ll__postchunk, C memory
	off   C.uint64_t
	n     C.int64_t
}

func (b *postBatch) Run() {
	s, n := b.s, b.n
	b.n = 0
	s.runHost(func() {
		C.ll__postq_run(s.pending.postq, C.uint64_t(s.id), C.uintptr_t(b.chunk), b.off, n,
			C.uintptr_t(uintptr(unsafe.Pointer(s.pending))), 1)
	})
	s.finishFSFutures() // the future-form file outcomes the batch took
}

// Len is how many calls the batch holds (0 once run or dropped).
func (b *postBatch) Len() int { return int(b.n) }

func (b *postBatch) Drop() {
	n := b.n
	b.n = 0
	var q *C.ll__postq
	if b.s.pending != nil {
		q = b.s.pending.postq
	}
	C.ll__postq_run(q, 0, C.uintptr_t(b.chunk), b.off, n, 0, 0)
}
