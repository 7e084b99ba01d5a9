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

func (hs *hookState) owner() *loopState { return hs.loop }
func (hs *hookState) stop()             { hs.h.Cancel() }
func (hs *hookState) active() bool      { return hs.h.Active() }

// stoppable is a handle id that names no single callback but something
// that runs until stopped: a hook, a repeating timer or a file-system
// watcher. ll_handle_cancel stops it, ll_handle_cancelled says whether it
// is stopped, ll_release stops it and drops the id.
type stoppable interface {
	owner() *loopState
	stop()
	active() bool
}

// lookupStoppable resolves a hook, repeating timer or file-system watcher id. The handle calls
// ask it only after the handle kind refused the id, so a timer's cancel
// pays nothing for these kinds.
func lookupStoppable(id C.uint64_t) (stoppable, bool) {
	s, ok := ids.lookup(uint64(id))
	if !ok || s.kind() != kindHook && s.kind() != kindTimer && s.kind() != kindFSWatch {
		return nil, false
	}
	return s.obj.(stoppable), true
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
