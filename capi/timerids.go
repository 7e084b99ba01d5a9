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

// The id side of timers with a handle (records in cloop/timerslab.c): their ids,
// the Go path that makes one, and what cancel, the queries and ll_release
// do with one. The order they run in is timerslab.go's.

// Handle ids of C-kept timers (bit 63 set) beside the id table's.
func isSlabID(id C.uint64_t) bool { return id&C.LL__TS_ID_BIT != 0 }

// slabID is ll__ts_id without a crossing.
func slabID(slot uint32, tag C.uint64_t) C.uint64_t {
	return C.LL__TS_ID_BIT | tag>>tsGenShift<<24 | C.uint64_t(slot+1)
}

// slabTimer gives a timer made through Go (ll_call_later's slow path) a
// record too, so every handle timer of the C API is one kind; false if the
// slab has no slot left (the caller makes a Go handle instead).
func (s *loopState) slabTimer(when int64, cb, arg uintptr, out *C.uint64_t) bool {
	var slot C.uint32_t
	r := C.ll__ts_alloc(&s.pending.slab, &slot)
	if r == nil {
		return false
	}
	r.when, r.fn, r.arg = C.int64_t(when), C.uintptr_t(cb), C.uintptr_t(arg)
	s.slab.push(uint32(slot))
	*out = slabID(uint32(slot), r.tag)
	return true
}

// slabOwner returns the loop of a live slab id (nil if released or the
// id is stale) and whether the id is live at all.
func slabOwner(id C.uint64_t) (*loopState, bool) {
	if C.ll__ts_valid(id) == 0 {
		return nil, false
	}
	owner := C.ll__ts_owner(id)
	if owner == 0 {
		return nil, true
	}
	obj, ok := ids.get(uint64(owner), kindLoop)
	if !ok {
		return nil, true // its loop is being released: the record is orphaned
	}
	return obj.(*loopState), true
}

// slabRecord resolves a slab id for a query: the record, if live, after
// debug mode's thread check on its loop.
func slabRecord(id C.uint64_t) (*C.ll__trec, C.int) {
	s, ok := slabOwner(id)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	if s != nil {
		if err := s.loop.CheckThread(); err != nil {
			return nil, errCode(err)
		}
	}
	var slot C.uint32_t
	return C.ll__ts_lookup(id, &slot), 0
}

// slabCancel is ll_handle_cancel's Go path for a slab id (a thread that is
// not running the loop's batch, or a loop outside the C registry).
func slabCancel(caller, id C.uint64_t) C.int {
	s, ok := slabOwner(id)
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	if s != nil {
		if rc := enterFrom(s, caller); rc != 0 {
			return rc
		}
	}
	return C.ll__ts_cancel(id)
}

// slabRelease is ll_release's path for a slab id: under the loop's gate
// (an orphaned record has none), C decides the one caller that succeeds.
func slabRelease(id C.uint64_t, tok uintptr) C.int {
	s, ok := slabOwner(id)
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	if s != nil {
		if rc := s.gate.borrow(tok); rc != 0 {
			return C.int(rc)
		}
		defer s.gate.unborrow()
	}
	return C.ll__ts_release(id)
}

// slabWhen is a record's deadline in loop seconds (-Inf: due before all).
func slabWhen(r *C.ll__trec) float64 { return timers.Seconds(int64(r.when)) }
