// SPDX-License-Identifier: MIT

package main

import (
	"testing"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// callbackAddr stands for a C callback (newLoop: refusal_test.go): the
// timers made here never run.
var callbackAddr = (*[0]byte)(unsafe.Pointer(&neverCalled))

func laterHandle(t *testing.T, loop cid, delay float64) cid {
	t.Helper()
	var h cid
	if rc := ll__call_later_go(0, loop, _Ctype_double(delay), callbackAddr, nil, &h); rc != 0 {
		t.Fatal(rc)
	}
	if !isSlabID(h) {
		t.Fatalf("handle %#x is not a slab id", uint64(h))
	}
	return h
}

func loopOf(t *testing.T, id cid) *loopState {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		t.Fatal("no loop")
	}
	return obj.(*loopState)
}

// A released id is stale for every call, even when its slot is reused, and
// a slot's generation wraps past its 39 bits to 1, never 0, without an old
// id coming back to life.
func TestSlabStaleIDsAndGenerationWrap(t *testing.T) {
	loop := newLoop(t)
	h := laterHandle(t, loop, 3600)
	slot := uint32(h&0xFFFFFF) - 1
	r := rec(slot)
	if rc := ll__release_go(h, 1); rc != 0 {
		t.Fatal(rc)
	}
	bad := _Ctype_int(libloop.EBADHANDLE)
	if ll__release_go(h, 1) != bad || ll__handle_cancel_go(0, h) != bad || ll_handle_cancelled(h) != bad || ll_timer_when(h) >= 0 {
		t.Fatal("a released id still resolves")
	}
	// Fast-forward the (queued, cancelled-by-nobody) record's slot to the
	// last generation and free it: the next is 1.
	s := loopOf(t, loop)
	s.slab.Tidy()
	r.tag = r.tag&0xFF | tsGenMask<<tsGenShift
	last := slabID(slot, r.tag)
	if rc := ll__handle_cancel_go(0, last); rc != bad { // released: not the host's
		t.Fatalf("cancel of a released record: %d", rc)
	}
	s.dropTimers() // the loop lets go of the record: it is freed, generation wraps
	if g := r.tag >> tsGenShift; g != 1 {
		t.Fatalf("generation after the wrap: %d, want 1", g)
	}
	if ll_handle_cancelled(last) != bad || ll_handle_cancelled(h) != bad {
		t.Fatal("an id of an older generation resolves")
	}
}

// Cancelled timers are dropped from the queue when they reach its front,
// or all at once when over half of more than 100 are cancelled.
func TestSlabPurgesCancelled(t *testing.T) {
	loop := newLoop(t)
	s := loopOf(t, loop)
	var hs []cid
	for i := 0; i < 1000; i++ {
		hs = append(hs, laterHandle(t, loop, 3600+float64(i)))
	}
	for i := 0; i < 400; i++ {
		ll__handle_cancel_go(0, hs[i])
	}
	if w, _, ok := s.slab.Peek(); !ok || w != int64(rec(uint32(hs[400]&0xFFFFFF)-1).when) {
		t.Fatal("Peek did not drop the cancelled fronts")
	}
	if s.slab.n != 600 || s.slab.Live() != 600 {
		t.Fatalf("after Peek: %d queued, %d live", s.slab.n, s.slab.Live())
	}
	for i := 400; i < 1000; i += 2 {
		ll__handle_cancel_go(0, hs[i])
	}
	for i := 401; i < 700; i += 2 {
		ll__handle_cancel_go(0, hs[i])
	}
	s.slab.Tidy()
	if s.slab.n != 150 || s.slab.cs.cancelled != 0 || s.slab.Live() != 150 {
		t.Fatalf("after the purge: %d queued, %d cancelled", s.slab.n, s.slab.cs.cancelled)
	}
	for _, h := range hs {
		if rc := ll__release_go(h, 1); rc != 0 {
			t.Fatal(rc)
		}
	}
}

// After its loop is released a handle is orphaned: it still answers, and
// of two threads releasing it exactly one succeeds.
func TestSlabOrphanReleaseRace(t *testing.T) {
	for round := 0; round < 200; round++ {
		loop := newLoop(t)
		h := laterHandle(t, loop, 3600)
		if rc := ll__release_go(loop, 1); rc != 0 {
			t.Fatal(rc)
		}
		if ll_handle_cancelled(h) != 0 || ll_timer_when(h) <= 0 {
			t.Fatal("an orphaned handle does not answer")
		}
		oneWinner(t, "orphan", round, race(h))
	}
}

// A slab id is no id of the table's, and the table's ids are no slab ids.
func TestSlabIDsAreAKindOfTheirOwn(t *testing.T) {
	loop := newLoop(t)
	h := laterHandle(t, loop, 3600)
	defer ll__release_go(h, 1)
	if ids.kindOf(uint64(h)) != 0 {
		t.Fatal("the id table resolves a slab id")
	}
	if _, rc := lookupFuture(h); rc == 0 {
		t.Fatal("a slab id resolves as a future")
	}
	if isSlabID(loop) {
		t.Fatal("a loop id has bit 63 set")
	}
	if ll__handle_cancel_go(0, loop) != _Ctype_int(libloop.EBADHANDLE) {
		t.Fatal("a loop id cancelled as a handle")
	}
}
