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
// loop's record in C. Control comes back to Go from host code on the
// loop's thread in two ways only: a host call into Go, and the return of
// a runner Go called. Both pass through one door, enter, and enter is the
// one place that calls flushPending: so Go takes C's work before it next
// touches its ready queue or timer heap, and C-queued and Go-queued work
// keep one FIFO order and one timer order.

// enter is that door. A host call that touches a loop resolves it through
// enter (getLoop, getLoopFrom, getFuture, ... all end here), passing the
// verdict of its own thread check (0: allowed); runHost passes 0 when a
// runner returns. A new entry point that acts on a loop goes through it
// too, so that it never sees the loop without what C queued for it.
func (s *loopState) enter(refusal C.int) C.int {
	if refusal != 0 {
		return refusal
	}
	// Inlined: most entries find nothing queued, and pay two loads.
	if p := s.pending; p != nil && p.len|p.ntimers|p.host_ready != 0 {
		s.flushPending()
	}
	return 0
}

// runHost runs host code on the loop's thread: run calls one of cloop's
// runners (one crossing for many callbacks), and control then comes back
// through enter. Every runner call in capi is made through it. It is
// inlined, closure and all: no cost over calling the runner directly.
func (s *loopState) runHost(run func()) {
	run()
	s.enter(0)
}

// debugCheck is the thread check of a call outside loopthread.go's list:
// exact only in debug mode (Loop.CheckThread).
func (s *loopState) debugCheck() C.int {
	if err := s.loop.CheckThread(); err != nil {
		return errCode(err)
	}
	return 0
}

// flushPending moves call_soon requests queued in C to the core's ready
// queue, in order, and C's timers to the core's queues. Only enter calls
// it. A long run of plain calls is handed over whole, array and all
// (softBatch): one place in the FIFO, one crossing to run, nothing copied.
func (s *loopState) flushPending() {
	p := s.pending
	if p == nil {
		return
	}
	if p.host_ready != 0 {
		// ll_loop_host_ready from a callback of a batch (cloop/hostready.c)
		p.host_ready = 0
		s.loop.HostReady()
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

// ll__flush_pending_go moves a loop's C-side queues into it (cloop/timers.c
// calls it when 4096 timers wait), on the thread that queued them.
//
//export ll__flush_pending_go
func ll__flush_pending_go(id C.uint64_t) {
	if obj, ok := ids.get(uint64(id), kindLoop); ok {
		obj.(*loopState).enter(0)
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
	s.runHost(func() {
		C.ll__run_soon_array(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(b.items))), b.n,
			C.uintptr_t(uintptr(unsafe.Pointer(s.pending))))
	})
	b.Drop()
}

// Len is how many calls the batch holds (0 once run or dropped).
func (b *softBatch) Len() int { return int(b.n) }

func (b *softBatch) Drop() {
	C.free(unsafe.Pointer(b.items))
	b.items, b.n = nil, 0
}
