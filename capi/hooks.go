// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// What embedding a loop in a host's own loop needs from the C API (libuv's
// uv_backend_timeout and its prepare, check and idle handles): ids and
// errors here, the behaviour in the core (libloop/hook.go,
// libloop/nexttimeout.go).

// kindHook names a hook (ll_hook_add); the value continues ids.go's kinds.
const kindHook kind = 20

// hookState is what a hook id names.
type hookState struct {
	loop *loopState
	h    *libloop.Hook
}

// ll__hook_add_go is ll_hook_add's Go side; caller: see loopthread.go.
//
//export ll__hook_add_go
func ll__hook_add_go(caller, id C.uint64_t, kind C.int, fn C.ll_hook_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if out == nil || fn == nil {
		return C.int(libloop.EINVAL)
	}
	hid := ids.reserveID()
	if hid == 0 {
		return C.int(libloop.ENOMEM)
	}
	h, err := s.loop.AddHookHost(libloop.HookKind(kind), hostCall(s, unsafe.Pointer(fn), arg))
	if err != nil {
		ids.remove(hid)
		return errCode(err)
	}
	h.Tag = hid
	ids.fill(hid, kindHook, &hookState{loop: s, h: h})
	*out = C.uint64_t(hid)
	return 0
}

// getHookFrom resolves a hook id for a checked call (ok false: not a hook).
func getHookFrom(caller, id C.uint64_t) (*hookState, C.int, bool) {
	obj, ok := ids.get(uint64(id), kindHook)
	if !ok {
		return nil, 0, false
	}
	hs := obj.(*hookState)
	return hs, refuseOtherThread(hs.loop, caller), true
}

// ll__loop_next_timeout_go is ll_loop_next_timeout's Go side; caller: see
// loopthread.go. The C queues are taken first (getLoopFrom), so a call or
// timer made from C while the loop was idle counts.
//
//export ll__loop_next_timeout_go
func ll__loop_next_timeout_go(caller, id C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if s.loop.IsClosed() {
		return C.int(libloop.ECLOSED)
	}
	d := s.loop.NextTimeout()
	if d < 0 {
		return -1
	}
	// Rounded up: a host that waits this long never wakes before the
	// timer is due, and spins no iteration for nothing.
	ms := (int64(d) + 999_999) / 1_000_000
	if ms > math.MaxInt32 {
		ms = math.MaxInt32
	}
	return C.int(ms)
}
