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

// Repeating timers (ll_timer_start, libuv's uv_timer_t): ids and errors
// here, the timer in the core (libloop/timer.go). Unlike ll_call_later's
// handles they are not kept in C (cloop/timerslab.c): each expiry re-arms
// in Go, and a host that wants a timer without a crossing uses those.

// kindTimer names a repeating timer; the value continues ids.go's kinds.
const kindTimer kind = 21

// timerState is what a repeating timer id names.
type timerState struct {
	loop *loopState
	t    *libloop.Timer
}

func (ts *timerState) owner() *loopState { return ts.loop }
func (ts *timerState) stop()             { ts.t.Stop() }
func (ts *timerState) active() bool      { return ts.t.Active() }

// ll__timer_start_go is ll_timer_start's Go side; caller: see loopthread.go.
//
//export ll__timer_start_go
func ll__timer_start_go(caller, id C.uint64_t, first, repeat C.double, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if out == nil || cb == nil {
		return C.int(libloop.EINVAL)
	}
	tid := ids.reserveID()
	if tid == 0 {
		return C.int(libloop.ENOMEM)
	}
	t, err := s.loop.StartTimerHost(float64(first), float64(repeat), hostCall(s, unsafe.Pointer(cb), arg))
	if err != nil {
		ids.remove(tid)
		return errCode(err)
	}
	t.Tag = tid
	ids.fill(tid, kindTimer, &timerState{loop: s, t: t})
	*out = C.uint64_t(tid)
	return 0
}

// getTimerFrom resolves a repeating timer id for a checked call.
func getTimerFrom(caller, id C.uint64_t) (*timerState, C.int) {
	obj, ok := ids.get(uint64(id), kindTimer)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	ts := obj.(*timerState)
	if rc := enterFrom(ts.loop, caller); rc != 0 {
		return nil, rc
	}
	return ts, 0
}

// ll__timer_again_go is ll_timer_again's Go side; caller: see loopthread.go.
//
//export ll__timer_again_go
func ll__timer_again_go(caller, id C.uint64_t) C.int {
	ts, rc := getTimerFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return errCode(ts.t.Again())
}

// ll__timer_set_repeat_go is ll_timer_set_repeat's Go side; caller: see
// loopthread.go.
//
//export ll__timer_set_repeat_go
func ll__timer_set_repeat_go(caller, id C.uint64_t, repeat C.double) C.int {
	ts, rc := getTimerFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return errCode(ts.t.SetRepeat(float64(repeat)))
}

// repeatingWhen is ll_timer_when for an id the handle kind refused: a
// repeating timer's next expiry, negative while it is stopped or for any
// other id.
func repeatingWhen(id C.uint64_t) C.double {
	obj, ok := ids.get(uint64(id), kindTimer)
	if !ok {
		return -1
	}
	ts := obj.(*timerState)
	if ts.loop.loop.CheckThread() != nil {
		return -1
	}
	if w, ok := ts.t.When(); ok {
		return C.double(w)
	}
	return -1
}
