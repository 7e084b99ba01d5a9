// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// handleState is what a handle id names: the core handle and its loop.
type handleState struct {
	loop *loopState
	h    *libloop.Handle
}

// giveHandle registers h for the host (when out is not NULL): the host's
// reference keeps the record alive until ll_release.
func giveHandle(s *loopState, h *libloop.Handle, out *C.uint64_t) C.int {
	if out == nil {
		return 0
	}
	id := ids.add(kindHandle, &handleState{loop: s, h: h})
	if id == 0 {
		h.Cancel()
		return C.int(libloop.ENOMEM)
	}
	s.loop.RetainHandle(h)
	*out = C.uint64_t(id)
	return 0
}

// hostCall is a C ll_callback as the core schedules it, with the loop's id.
func hostCall(s *loopState, cb unsafe.Pointer, arg unsafe.Pointer) libloop.HostCall {
	return libloop.HostCall{Fn: uintptr(cb), Arg: uintptr(arg), ID: s.id}
}

// ll__call_soon_go is ll_call_soon's slow path (cloop/soon.c); caller: see
// loopthread.go. With out NULL the call is queued by value, no handle.
//
//export ll__call_soon_go
func ll__call_soon_go(caller, id C.uint64_t, cb C.uintptr_t, arg C.uintptr_t, out *C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	h, err := s.loop.CallSoonHost(libloop.HostCall{Fn: uintptr(cb), Arg: uintptr(arg), ID: s.id}, out != nil)
	if err != nil || out == nil {
		return errCode(err)
	}
	return giveHandle(s, h, out)
}

// ll__call_later_go is ll_call_later's Go side; caller: see loopthread.go.
//
//export ll__call_later_go
func ll__call_later_go(caller, id C.uint64_t, delay C.double, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return timerGo(s, float64(delay), true, cb, arg, out)
}

// ll__call_at_go is ll_call_at's Go side; caller: see loopthread.go.
//
//export ll__call_at_go
func ll__call_at_go(caller, id C.uint64_t, when C.double, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return timerGo(s, float64(when), false, cb, arg, out)
}

// timerGo schedules a timer at t (seconds; relative: a delay). With out
// NULL the core keeps it by value; with out, its record is made in C (the
// slab), or, when the slab is full, it is a core handle with a table id.
func timerGo(s *loopState, t float64, relative bool, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if out != nil {
		if rc, ok := slabTimerGo(s, t, relative, cb, arg, out); ok {
			return rc
		}
	}
	ns, err := s.loop.Deadline(t, relative)
	if err != nil {
		return errCode(err)
	}
	h, err := s.loop.CallAtHost(ns, hostCall(s, unsafe.Pointer(cb), arg), out != nil)
	if err != nil || out == nil {
		return errCode(err)
	}
	return giveHandle(s, h, out)
}

// slabTimerGo schedules a handle timer through Go with a record in C (as
// the C fast path would have); ok false if the slab is full.
func slabTimerGo(s *loopState, t float64, relative bool, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) (C.int, bool) {
	if cb == nil {
		return C.int(libloop.EINVAL), true
	}
	ns, err := s.loop.Deadline(t, relative)
	if err != nil {
		return errCode(err), true
	}
	return 0, s.slabTimer(ns, uintptr(unsafe.Pointer(cb)), uintptr(arg), out)
}

// ll__call_soon_threadsafe_go is ll_call_soon_threadsafe's Go path
// (cloop/timers.c queues in C first): a loop left out of the C registry, a
// closed or stale one (refused here), or memory running out in C.
//
//export ll__call_soon_threadsafe_go
func ll__call_soon_threadsafe_go(id C.uint64_t, cb C.ll_callback, arg unsafe.Pointer) C.int {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	s := obj.(*loopState)
	return errCode(s.loop.CallSoonThreadsafeHost(hostCall(s, unsafe.Pointer(cb), arg)))
}

func getHandle(id C.uint64_t) (*handleState, C.int) {
	obj, ok := ids.get(uint64(id), kindHandle)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	hs := obj.(*handleState)
	if err := hs.loop.loop.CheckThread(); err != nil {
		return nil, errCode(err)
	}
	return hs, 0
}

// ll__handle_cancel_go is ll_handle_cancel's Go side; caller: see loopthread.go.
//
//export ll__handle_cancel_go
func ll__handle_cancel_go(caller, id C.uint64_t) C.int {
	if isSlabID(id) {
		return slabCancel(caller, id)
	}
	hs, rc := getHandleFrom(caller, id)
	if rc == C.int(libloop.EBADHANDLE) {
		if c, ok := lookupStoppable(id); ok {
			if rc := refuseOtherThread(c.owner(), caller); rc != 0 {
				return rc
			}
			c.stop()
			return 0
		}
	}
	if rc != 0 {
		return rc
	}
	hs.h.Cancel()
	return 0
}

//export ll_handle_cancelled
func ll_handle_cancelled(id C.uint64_t) C.int {
	if isSlabID(id) {
		r, rc := slabRecord(id)
		if rc != 0 {
			return rc
		}
		return boolInt(r.tag&C.LL__TS_CANCELLED != 0)
	}
	hs, rc := getHandle(id)
	if rc == C.int(libloop.EBADHANDLE) {
		if c, ok := lookupStoppable(id); ok {
			if err := c.owner().loop.CheckThread(); err != nil {
				return errCode(err)
			}
			return boolInt(!c.active())
		}
	}
	if rc != 0 {
		return rc
	}
	return boolInt(hs.h.Cancelled())
}

//export ll_timer_when
func ll_timer_when(id C.uint64_t) C.double {
	if isSlabID(id) {
		r, rc := slabRecord(id)
		if rc != 0 {
			return -1
		}
		return C.double(slabWhen(r))
	}
	hs, rc := getHandle(id)
	if rc == C.int(libloop.EBADHANDLE) {
		return repeatingWhen(id)
	}
	if rc != 0 || !hs.h.IsTimer() {
		return -1
	}
	return C.double(hs.h.When())
}
