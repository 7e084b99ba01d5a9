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

// ll__loop_stats_go is ll_loop_stats' Go side; caller: see loopthread.go.
// The counters are plain fields of the loop thread, so another thread is
// refused while the loop runs. It fills only the fields that fit the
// caller's size, so a program built against an older, smaller struct works
// with a newer library.
//
//export ll__loop_stats_go
func ll__loop_stats_go(caller, id C.uint64_t, out *C.struct_ll_loop_stats) C.int {
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	size := uint64(out.size)
	if size < C.LL_LOOP_STATS_V1_SIZE {
		return C.int(libloop.EINVAL)
	}
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	st := s.loop.Stats()
	fields := [...]uint64{
		st.Iterations, st.Events, st.Callbacks,
		uint64(st.Idle), uint64(st.Running),
		uint64(st.Ready), uint64(st.Timers), uint64(st.FDs), uint64(st.Tasks),
	}
	filled := uint64(unsafe.Sizeof(*out))
	if size < filled {
		filled = size // an older caller: fill its fields only
	}
	dst := unsafe.Slice((*uint64)(unsafe.Pointer(out)), filled/8)
	copy(dst[1:], fields[:])
	out.size = C.uint64_t(filled)
	return 0
}
