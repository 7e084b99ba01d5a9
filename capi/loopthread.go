// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import "github.com/libloop/libloop/libloop"

// The calls a host is most likely to make from a worker thread by mistake
// (scheduling, fd watchers, a future's outcome, cancel, stop, release) are
// refused with LL_EWRONGTHREAD in every mode while their loop runs on
// another thread: on that path the loop's queues, maps and pools would be
// mutated from two threads, and the Go runtime would abort the host.
//
// Go cannot tell cheaply which OS thread calls it (gettid is a syscall, and
// a c-shared library has no goroutine identity to compare). C can: the run
// entry points in cloop/run.c keep a thread-local "this thread runs loop X"
// marker. So each such call is a thin C wrapper (loopthread.c) that reads
// the marker (about 1 ns) and passes it here as the first argument,
// caller: the loop the calling thread runs, or 0.
//
// While a loop is not running any thread may call (one at a time, as the
// header says); the running flag is atomic so reading it here is safe.

// refuseOtherThread returns LL_EWRONGTHREAD if s's loop is running on a
// thread other than the caller's.
func refuseOtherThread(s *loopState, caller C.uint64_t) C.int {
	if uint64(caller) != s.id && s.loop.IsRunning() {
		return C.int(libloop.EWRONGTHREAD)
	}
	return 0
}

// enterFrom is enter for a checked call: the marker check replaces debug
// mode's gettid check (it is exact in every mode).
func enterFrom(s *loopState, caller C.uint64_t) C.int {
	return s.enter(refuseOtherThread(s, caller))
}

// getLoopFrom resolves a loop id for a checked call.
func getLoopFrom(caller, id C.uint64_t) (*loopState, C.int) {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	s := obj.(*loopState)
	if rc := enterFrom(s, caller); rc != 0 {
		return nil, rc
	}
	return s, 0
}

// getFutureFrom resolves a future or task id for a checked call. A
// future's loop never changes and futures are not pooled, so reading it
// before the check is safe from any thread.
func getFutureFrom(caller, id C.uint64_t) (futRef, C.int) {
	f, rc := lookupFuture(id)
	if rc != 0 {
		return futRef{}, rc
	}
	r := futRef{f: f, t: f.Task(), loop: f.Loop().Data.(*loopState)}
	if rc := enterFrom(r.loop, caller); rc != 0 {
		return futRef{}, rc
	}
	return r, 0
}

// getHandleFrom resolves a handle id for a checked call; a handleState is
// never reused, so its loop is safe to read from any thread.
func getHandleFrom(caller, id C.uint64_t) (*handleState, C.int) {
	obj, ok := ids.get(uint64(id), kindHandle)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	hs := obj.(*handleState)
	if rc := refuseOtherThread(hs.loop, caller); rc != 0 {
		return nil, rc
	}
	return hs, 0
}
