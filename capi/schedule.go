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

func foreign(s *loopState, cb unsafe.Pointer, arg unsafe.Pointer) libloop.ForeignCall {
	return libloop.ForeignCall{Fn: uintptr(cb), Arg: uintptr(arg), ID: s.id}
}

// ll__call_soon_go is ll_call_soon's slow path (cloop/soon.c); caller: see
// loopthread.go.
//
//export ll__call_soon_go
func ll__call_soon_go(caller, id C.uint64_t, cb C.uintptr_t, arg C.uintptr_t, out *C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if out == nil { // no handle wanted: queued by value
		return errCode(s.loop.CallSoonHost(uintptr(cb), uintptr(arg)))
	}
	h, err := s.loop.CallSoonForeign(libloop.ForeignCall{Fn: uintptr(cb), Arg: uintptr(arg), ID: s.id})
	if err != nil {
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
	if out == nil { // no handle wanted: the core keeps the timer by value
		return errCode(s.loop.CallLaterHost(float64(delay), uintptr(unsafe.Pointer(cb)), uintptr(arg)))
	}
	if rc, ok := slabTimerGo(s, float64(delay), true, cb, arg, out); ok {
		return rc
	}
	h, err := s.loop.CallLaterForeign(float64(delay), foreign(s, unsafe.Pointer(cb), arg))
	if err != nil {
		return errCode(err)
	}
	return giveHandle(s, h, out)
}

// ll__call_at_go is ll_call_at's Go side; caller: see loopthread.go.
//
//export ll__call_at_go
func ll__call_at_go(caller, id C.uint64_t, when C.double, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return errCode(s.loop.CallAtHost(float64(when), uintptr(unsafe.Pointer(cb)), uintptr(arg)))
	}
	if rc, ok := slabTimerGo(s, float64(when), false, cb, arg, out); ok {
		return rc
	}
	h, err := s.loop.CallAtForeign(float64(when), foreign(s, unsafe.Pointer(cb), arg))
	if err != nil {
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
	return errCode(s.loop.CallSoonThreadsafeForeign(foreign(s, unsafe.Pointer(cb), arg)))
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
	if rc != 0 || !hs.h.IsTimer() {
		return -1
	}
	return C.double(hs.h.When())
}
