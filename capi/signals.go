// SPDX-License-Identifier: MIT

package main

/*
#include <errno.h>
#include <signal.h>
#include "capi.h"
// SIGRTMIN is a call under glibc (it keeps the first realtime signals).
static int ll__sigrtmin(void) { return SIGRTMIN; }
#include "signals.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// refusedSignal reports the signals a host may not take: uncatchable ones,
// those the Go runtime of a shared library handles itself, and those the C
// library keeps for itself between the standard signals and SIGRTMIN
// (glibc's 32 and 33: thread cancellation and setxid; sigaction refuses
// them), so that all are one error, LL_EINVAL.
func refusedSignal(sig C.int) bool {
	switch sig {
	case C.SIGKILL, C.SIGSTOP, C.SIGSEGV, C.SIGBUS, C.SIGFPE, C.SIGILL, C.SIGTRAP, C.SIGURG, C.SIGPIPE:
		return true
	}
	return sig <= 0 || sig >= 65 || (sig >= 32 && sig < C.ll__sigrtmin())
}

// kindSignal names a signal handler; the value continues ids.go's kinds.
const kindSignal kind = 22

// signalState is what a signal handler's id names: the loop and the
// signal. The id is made by ll_add_signal_handler(_ex) and goes stale when
// the handler goes (ll_remove_signal_handler, a new handler for the same
// signal, ll_release of the id, the loop's close).
type signalState struct {
	loop *loopState
	sig  int
}

func (ss *signalState) Ref()         { ss.loop.loop.RefSignal(ss.sig) }
func (ss *signalState) Unref()       { ss.loop.loop.UnrefSignal(ss.sig) }
func (ss *signalState) HasRef() bool { ok, _ := ss.loop.loop.SignalHasRef(ss.sig); return ok }

//export ll_add_signal_handler
func ll_add_signal_handler(loop C.uint64_t, sig C.int, cb C.ll_callback, arg unsafe.Pointer) C.int {
	return addSignalHandler(loop, sig, cb, arg, nil)
}

//export ll_add_signal_handler_ex
func ll_add_signal_handler_ex(loop C.uint64_t, sig C.int, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	return addSignalHandler(loop, sig, cb, arg, out)
}

func addSignalHandler(loop C.uint64_t, sig C.int, cb C.ll_callback, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if cb == nil || refusedSignal(sig) {
		return C.int(libloop.EINVAL)
	}
	fd, err := s.loop.SignalFD()
	if err != nil {
		return errCode(err)
	}
	sid := ids.reserveID()
	if sid == 0 {
		return C.int(libloop.ENOMEM)
	}
	fc := libloop.HostCall{Fn: uintptr(unsafe.Pointer(cb)), Arg: uintptr(arg), ID: s.id}
	if err := s.loop.AddSignalHandler(int(sig), nil, fc); err != nil {
		ids.remove(sid)
		return errCode(err)
	}
	if rc := C.ll__signal_watch(sig, C.int(fd)); rc != 0 {
		s.loop.RemoveSignalHandler(int(sig))
		s.forgetSignalID(int(sig))
		ids.remove(sid)
		if rc == -C.EINVAL {
			return C.int(libloop.EINVAL) // a signal sigaction will not take: as the refused ones
		}
		return rc
	}
	s.forgetSignalID(int(sig)) // a replaced handler's id goes stale
	ids.fill(sid, kindSignal, &signalState{loop: s, sig: int(sig)})
	if s.signalIDs == nil {
		s.signalIDs = make(map[int]uint64)
	}
	s.signalIDs[int(sig)] = sid
	if out != nil {
		*out = C.uint64_t(sid)
	}
	return 0
}

// forgetSignalID retires the id of sig's handler, if it has one.
func (s *loopState) forgetSignalID(sig int) {
	if id, ok := s.signalIDs[sig]; ok {
		delete(s.signalIDs, sig)
		ids.remove(id)
	}
}

// releaseSignal is ll_release of a signal handler's id: the handler is
// removed, as ll_remove_signal_handler would.
func releaseSignal(ss *signalState) C.int {
	if ss.loop.signalIDs[ss.sig] == 0 {
		return C.int(libloop.EBADHANDLE)
	}
	removeSignal(ss.loop, C.int(ss.sig))
	return 0
}

//export ll_remove_signal_handler
func ll_remove_signal_handler(loop C.uint64_t, sig C.int) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if sig <= 0 || sig >= 65 {
		return C.int(libloop.EINVAL)
	}
	return removeSignal(s, sig)
}

func removeSignal(s *loopState, sig C.int) C.int {
	s.forgetSignalID(int(sig))
	if !s.loop.RemoveSignalHandler(int(sig)) {
		return 0
	}
	if fd, err := s.loop.SignalFD(); err == nil {
		C.ll__signal_unwatch(sig, C.int(fd))
	}
	return 1
}

// unhookSignals stops every signal this loop watches, before the loop
// closes its signal pipe: a late delivery must never write to a closed
// (possibly reused) fd.
func (s *loopState) unhookSignals() {
	for sig := range s.signalIDs {
		s.forgetSignalID(sig)
	}
	if s.loop.NumSignalHandlers() == 0 {
		return
	}
	fd, err := s.loop.SignalFD()
	if err != nil {
		return
	}
	for sig := C.int(1); sig < 65; sig++ {
		if s.loop.RemoveSignalHandler(int(sig)) {
			C.ll__signal_unwatch(sig, C.int(fd))
		}
	}
}

// closeQueues makes the C queues refuse calls, and stops the C file pool,
// before the core's Close: its
// sweep runs host code (the exception handler, for exceptions nobody
// retrieved), whose ll_call_soon / ll_call_later / ll_call_at /
// ll_call_soon_threadsafe must then take the Go path, which says
// LL_ECLOSED as ll_future_new does, rather than queue a call that no
// iteration will run. What they hold already is dropped with the rest of
// the ready queue.
func (s *loopState) closeQueues() {
	if s.loop.IsClosed() || s.pending == nil {
		return
	}
	C.ll__pending_set_open(s.pending, 0)
	if s.pending.postq != nil {
		C.ll__postq_close(s.pending.postq)
	}
	// As the core's Close does for its file pool: queued jobs are
	// withdrawn, started ones waited for (their outcomes are dropped by
	// the queue closed just now), so no worker uses a buffer, or writes
	// the loop's wake-up fd, once the core's Close has closed it.
	C.ll__fspool_close(s.pending)
	s.dropFSCalls()
}

// closeLoop closes a loop for ll_loop_close and ll_release.
func closeLoop(s *loopState) error {
	if s.loop.IsRunning() {
		return libloop.ERUNNING
	}
	s.unhookSignals()
	s.closeQueues()
	err := s.loop.Close()
	// The sweep may have released the loop: then its C queues are retired
	// too (s.pending is nil; a retired record may serve another loop by
	// now, so it must not be touched).
	if s.pending == nil {
		return err
	}
	s.pending.len = 0
	s.pending.ntimers = 0
	s.dropTimers() // handle timers' records lose the loop's reference
	return err
}
