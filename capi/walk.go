// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"

static int ll__call_walk(ll_walk_fn fn, uint64_t loop, uint64_t id, int kind, void *arg) {
    return fn(loop, id, kind, arg);
}
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/internal/timers"
	"github.com/libloop/libloop/libloop"
)

// ll_loop_walk (libuv's uv_walk): the core lists the loop's objects
// (libloop/walk.go, a snapshot, each checked again before its turn); here
// each becomes its id, and an id the host released meanwhile is skipped.
// Objects the host holds no id for (a task's sleep timer, a transport
// before its id exists) are not listed.

// walkIDer is what an object of an ObjectSource of a later feature (file
// system watchers) implements to be listed with its id.
type walkIDer interface{ WalkID() uint64 }

// ll__loop_walk_go is ll_loop_walk's Go side; caller: see loopthread.go.
// A walk runs host code, so it is refused from a thread other than the
// one running the loop (LL_EWRONGTHREAD in every mode).
//
//export ll__loop_walk_go
func ll__loop_walk_go(caller, id C.uint64_t, fn C.ll_walk_fn, arg unsafe.Pointer) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if fn == nil {
		return C.int(libloop.EINVAL)
	}
	if s.loop.IsClosed() {
		return C.int(libloop.ECLOSED)
	}
	var handles map[*libloop.Handle]uint64 // Go handle timers' ids, found only if one is listed
	s.loop.Walk(func(kind libloop.WalkKind, obj any) bool {
		var oid uint64
		switch o := obj.(type) {
		case *libloop.Handle:
			if handles == nil {
				handles = s.handleIDs()
			}
			oid = handles[o]
		case slabWalk:
			if C.ll__ts_valid(C.uint64_t(o)) == 0 {
				return true // released by an earlier call
			}
			oid = uint64(o)
		case *libloop.Timer:
			oid = o.Tag
		case *libloop.Hook:
			oid = o.Tag
		case *libloop.Transport:
			oid = o.Tag
		case *libloop.Server:
			oid = o.Tag
		case *libloop.Process:
			oid = o.Tag
		case *libloop.FSWatcher:
			oid = o.Tag
		case libloop.Signal:
			oid = s.signalIDs[int(o)]
		case walkIDer:
			oid = o.WalkID()
		}
		if oid == 0 {
			return true
		}
		if oid&(1<<63) == 0 {
			if _, live := ids.lookup(oid); !live {
				return true // released by an earlier call
			}
		}
		return C.ll__call_walk(fn, C.uint64_t(s.id), C.uint64_t(oid), C.int(kind), arg) == 0
	})
	s.enter(0) // the host's calls may have queued work in C
	return 0
}

// handleIDs maps the loop's Go handle timers to their ids (timers made
// through Go when the slab was full, and the ones ll_call_* made before).
func (s *loopState) handleIDs() map[*libloop.Handle]uint64 {
	m := make(map[*libloop.Handle]uint64)
	for _, id := range ids.idsOf(kindHandle, func(obj any) bool { return obj.(*handleState).loop == s }) {
		if obj, ok := ids.get(id, kindHandle); ok {
			m[obj.(*handleState).h] = id
		}
	}
	return m
}

// slabWalk is a handle timer kept in C, as the slab lists it to Walk.
type slabWalk uint64

// Walk implements libloop.ObjectSource: the slab's queued, uncancelled
// timers, by id.
func (q *timerSlab) Walk(list []libloop.WalkEntry) []libloop.WalkEntry {
	add := func(slot uint32) {
		if r := rec(slot); r.tag&C.LL__TS_CANCELLED == 0 && r.tag&C.LL__TS_HOST != 0 {
			list = append(list, libloop.WalkEntry{Kind: libloop.WalkHandle, Obj: slabWalk(slabID(slot, r.tag))})
		}
	}
	q.run.each(add)
	q.heap.Each(func(e *timers.Entry[uint32]) { add(e.Val) })
	return list
}

// Alive implements libloop.ObjectSource: the slab's timers are counted
// as the loop's TimerSource (Referenced), not here.
func (q *timerSlab) Alive() int { return 0 }
