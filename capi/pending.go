// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// Go takes what C queued: the second of the places where the C side of the
// runtime meets Go (cloop/cloop.h). A host's call_soon and timers made from
// a callback of the running batch, or while the loop is idle, wait in the
// loop's record in C; flushPending moves them into the core before Go next
// touches its ready queue or timer heap, so C-queued and Go-queued work
// keep one FIFO order and one timer order.

// flushPending moves call_soon requests queued in C to the core's ready
// queue, in order. Every entry point that touches the loop calls it first,
// so C-queued and Go-queued callbacks keep one FIFO order. A long run of
// plain calls is handed over whole, array and all (softBatch): one place
// in the FIFO, one crossing to run, nothing copied.
func (s *loopState) flushPending() {
	p := s.pending
	if p == nil {
		return
	}
	if p.ntimers > 0 {
		// Runs of handle-less timers go to the core whole; a handle
		// timer (fn 0) is a slot of the slab, its record in C.
		ts := unsafe.Slice((*libloop.HostTimer)(unsafe.Pointer(p.timers)), int(p.ntimers))
		for len(ts) > 0 {
			n := 0
			for n < len(ts) && ts[n].Fn != 0 {
				n++
			}
			if n == 0 {
				s.slab.push(uint32(ts[0].Arg))
				n = 1
			} else {
				s.loop.CallAtHostMany(ts[:n]) // ECLOSED only: C's timers are refused with the loop
			}
			ts = ts[n:]
		}
		p.ntimers = 0
	}
	if p.len == 0 {
		return
	}
	items := unsafe.Slice(p.items, int(p.len))
	if len(items) >= softBatchMin && !s.loop.Debug() && !hasYieldMark(items) {
		b := &softBatch{s: s, items: p.items, n: p.len}
		p.items, p.len, p.cap = nil, 0, 0
		if s.loop.CallSoonHostBatch(b) != nil {
			b.Drop()
		}
		return
	}
	for i := range items {
		if items[i].fn == C.LL__YIELD_MARK {
			// The running step yielded from C; it is the current task.
			if t := s.loop.CurrentTask(); t != nil {
				t.Yield()
			}
			continue
		}
		s.loop.CallSoonHost(libloop.HostCall{Fn: uintptr(items[i].fn), Arg: uintptr(items[i].arg)}, false) // ID 0: the loop's Tag, s.id
	}
	p.len = 0
}

// A C-side timer (ll__later) is a libloop.HostTimer in place.
var _ = [1]struct{}{}[unsafe.Sizeof(C.ll__later{})-unsafe.Sizeof(libloop.HostTimer{})+
	unsafe.Offsetof(C.ll__later{}.fn)-unsafe.Offsetof(libloop.HostTimer{}.Fn)+
	unsafe.Offsetof(C.ll__later{}.arg)-unsafe.Offsetof(libloop.HostTimer{}.Arg)]

// ll__flush_pending_go moves a loop's C-side queues into it (cloop/timers.c
// calls it when 4096 timers wait), on the thread that queued them.
//
//export ll__flush_pending_go
func ll__flush_pending_go(id C.uint64_t) {
	if obj, ok := ids.get(uint64(id), kindLoop); ok {
		obj.(*loopState).flushPending()
	}
}

// softBatchMin is the shortest run handed over as a batch: below it, a
// readyItem per call costs less than the batch's own bookkeeping.
const softBatchMin = 64

func hasYieldMark(items []C.ll__soon) bool {
	for i := range items {
		if items[i].fn == C.LL__YIELD_MARK {
			return true
		}
	}
	return false
}

// softBatch is a detached C-side call_soon queue (libloop.HostBatch).
type softBatch struct {
	s     *loopState
	items *C.ll__soon
	n     C.int64_t
}

func (b *softBatch) Run() {
	s := b.s
	C.ll__run_soon_array(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(b.items))), b.n,
		C.uintptr_t(uintptr(unsafe.Pointer(s.pending))))
	b.Drop()
	s.flushPending()
}

// Len is how many calls the batch holds (0 once run or dropped).
func (b *softBatch) Len() int { return int(b.n) }

func (b *softBatch) Drop() {
	C.free(unsafe.Pointer(b.items))
	b.items, b.n = nil, 0
}
