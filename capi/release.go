// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"github.com/libloop/libloop/libloop"
)

// ll_release is a C function (cloop/run.c) that passes its thread's token.

// ll__release_go drops the host's reference that id names. It is safe from
// any thread: the table's take decides, atomically, the one caller that
// drops the reference (the others get LL_EBADHANDLE), and the object's loop
// gate keeps that drop from racing with the loop's own thread. An object
// whose loop runs on another thread is not released (LL_EWRONGTHREAD).
//
//export ll__release_go
func ll__release_go(id C.uint64_t, tok C.uintptr_t) C.int {
	if isSlabID(id) {
		return slabRelease(id, uintptr(tok))
	}
	s, ok := ids.lookup(uint64(id))
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	switch s.kind() {
	case kindLoop:
		return releaseLoop(s.obj.(*loopState), uintptr(tok))
	case kindFuture, kindTask:
		f := s.obj.(*libloop.Future)
		return releaseOn(f.Loop().Data.(*loopState), uint64(id), uintptr(tok), func() {
			f.Release() // the dispose hook removes the id when the loop is done with f too
		})
	case kindServer:
		return gated(s.obj.(*libloop.Server).Loop(), tok, func() C.int { return releaseServer(id) })
	case kindProcess:
		return gated(s.obj.(*libloop.Process).Loop(), tok, func() C.int { return releaseProcess(id) })
	case kindTransport:
		// A transport's id lives until its LL_CONNECTION_LOST: release
		// aborts it, and the id goes stale after that event.
		return gated(s.obj.(*libloop.Transport).Loop(), tok, func() C.int { return ll_transport_abort(id) })
	case kindTLSConfig:
		return releaseTLSConfig(id)
	case kindSignal:
		ss := s.obj.(*signalState)
		return gated(ss.loop.loop, tok, func() C.int { return releaseSignal(ss) })
	case kindHook, kindTimer, kindFSWatch:
		// Released is stopped: nothing else could stop it (libuv's
		// uv_close).
		c := s.obj.(stoppable)
		return releaseOn(c.owner(), uint64(id), uintptr(tok), func() {
			c.stop()
			ids.remove(uint64(id))
		})
	case kindHandle:
		hs := s.obj.(*handleState)
		return releaseOn(hs.loop, uint64(id), uintptr(tok), func() {
			ids.remove(uint64(id)) // a handle id lives exactly as long as the host's reference
			hs.loop.loop.ReleaseHandle(hs.h)
		})
	}
	return C.int(libloop.EBADHANDLE)
}

// gated runs op while holding the gate of l's loop (as releaseOn does, for
// objects whose release is an ordinary call: a server, process, transport).
func gated(l *libloop.Loop, tok C.uintptr_t, op func() C.int) C.int {
	ls := l.Data.(*loopState)
	if rc := ls.gate.borrow(uintptr(tok)); rc != 0 {
		return C.int(rc)
	}
	defer ls.gate.unborrow()
	return op()
}

// releaseOn takes id's host reference and runs drop while it holds s's gate.
// drop is a closure, but it does not escape, so it costs no allocation.
func releaseOn(s *loopState, id uint64, tok uintptr, drop func()) C.int {
	if rc := s.gate.borrow(tok); rc != 0 {
		return C.int(rc)
	}
	defer s.gate.unborrow()
	if _, ok := ids.take(id); !ok {
		return C.int(libloop.EBADHANDLE)
	}
	s.enter(0) // the gate let this thread in
	drop()
	return 0
}

// releaseLoop closes and frees a loop and removes its id. Exactly one of
// racing releases does it; it fails with LL_ERUNNING on the loop's own
// thread while it runs, LL_EWRONGTHREAD from any other thread meanwhile.
func releaseLoop(s *loopState, tok uintptr) C.int {
	if rc := s.gate.borrow(tok); rc != 0 {
		return C.int(rc)
	}
	defer s.gate.unborrow()
	if rc := s.gate.markReleased(); rc != 0 {
		return C.int(rc) // running on this thread: the id stays the host's
	}
	if _, ok := ids.take(s.id); !ok {
		return C.int(libloop.EBADHANDLE) // another thread released it first
	}
	s.enter(0) // the gate let this thread in
	// Close cannot fail with ERUNNING here (the gate says it is not
	// running); a selector close error leaves nothing to retry, so the
	// release completes either way.
	s.unhookSignals() // before the signal pipe closes (signals.go)
	s.closeQueues()
	s.loop.Close()
	s.free()
	ids.remove(s.id)
	return 0
}
