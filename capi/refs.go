// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"github.com/libloop/libloop/libloop"
)

// ll_ref, ll_unref, ll_has_ref (libuv's uv_ref, uv_unref, uv_has_ref):
// ids and errors here, what a reference means in the core
// (libloop/refs.go). The C wrappers (loopthread.c) pass the calling
// thread's loop: a reference is loop state, so a call from another thread
// while the loop runs is refused (LL_EWRONGTHREAD) in every mode.

// refTarget is what an id names for a reference call.
type refTarget interface {
	Ref()
	Unref()
	HasRef() bool
}

// resolveRef finds the object id names and its loop, for a checked call.
func resolveRef(caller, id C.uint64_t) (refTarget, C.int) {
	if isSlabID(id) {
		s, ok := slabOwner(id)
		if !ok || s == nil {
			return nil, C.int(libloop.EBADHANDLE)
		}
		if rc := enterFrom(s, caller); rc != 0 {
			return nil, rc
		}
		return slabRef{s.slab, id}, 0
	}
	slot, ok := ids.lookup(uint64(id))
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	var s *loopState
	var t refTarget
	switch o := slot.obj.(type) {
	case *handleState:
		s, t = o.loop, o.h
	case *timerState:
		s, t = o.loop, o.t
	case *hookState:
		s, t = o.loop, o.h
	case *libloop.Transport:
		s, t = o.Loop().Data.(*loopState), o
	case *libloop.Server:
		s, t = o.Loop().Data.(*loopState), o
	case *libloop.Process:
		s, t = o.Loop().Data.(*loopState), o
	case *signalState:
		s, t = o.loop, o
	case *fsWatchState:
		s, t = o.loop, o.w
	default:
		return nil, C.int(libloop.EBADHANDLE) // a loop, future, task, TLS config
	}
	if rc := enterFrom(s, caller); rc != 0 {
		return nil, rc
	}
	return t, 0
}

//export ll__ref_go
func ll__ref_go(caller, id C.uint64_t) C.int {
	t, rc := resolveRef(caller, id)
	if rc != 0 {
		return rc
	}
	t.Ref()
	return 0
}

//export ll__unref_go
func ll__unref_go(caller, id C.uint64_t) C.int {
	t, rc := resolveRef(caller, id)
	if rc != 0 {
		return rc
	}
	t.Unref()
	return 0
}

//export ll__has_ref_go
func ll__has_ref_go(caller, id C.uint64_t) C.int {
	t, rc := resolveRef(caller, id)
	if rc != 0 {
		return rc
	}
	return boolInt(t.HasRef())
}

// slabRef is a handle timer kept in C (timerslab.go). Its reference is
// the slab's quiet set: an unreferenced id stays there until its timer
// leaves the queue (run, cancelled or dropped), when Referenced or Ref
// finds it gone.
type slabRef struct {
	q  *timerSlab
	id C.uint64_t
}

func (r slabRef) Ref() { delete(r.q.quiet, r.id) }

func (r slabRef) Unref() {
	if !slabQueued(r.id) {
		return // run or cancelled: nothing left to keep the loop alive
	}
	if r.q.quiet == nil {
		r.q.quiet = make(map[C.uint64_t]struct{})
	}
	r.q.quiet[r.id] = struct{}{}
}

func (r slabRef) HasRef() bool {
	_, quiet := r.q.quiet[r.id]
	return !quiet
}

// slabQueued reports whether a slab id's timer is still in the queue,
// uncancelled.
func slabQueued(id C.uint64_t) bool {
	var slot C.uint32_t
	rec := C.ll__ts_lookup(id, &slot)
	return rec != nil && rec.tag&C.LL__TS_INQ != 0 && rec.tag&C.LL__TS_CANCELLED == 0
}

// Referenced implements libloop.ReferencedTimers: the live timers less
// the unreferenced ones still queued (the others leave the set here).
func (q *timerSlab) Referenced() int {
	n := q.Live()
	for id := range q.quiet {
		if slabQueued(id) {
			n--
		} else {
			delete(q.quiet, id)
		}
	}
	return n
}
