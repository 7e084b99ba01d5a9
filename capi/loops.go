// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"math"
	"time"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// loopState is what capi keeps per loop beside the core Loop: the C batch
// buffer and the C-side call_soon queue of the hot path.
type loopState struct {
	id      uint64
	loop    *libloop.Loop
	calls   *C.ll__call
	one     *C.ll__call
	pending *C.ll__pending
	// postsFlowing: the last take of the post queue found posts, so the
	// loop, before it sleeps, waits a few microseconds for the next one
	// (ll__postq_linger) instead of making the poster wake it.
	postsFlowing bool
	// fsCalls: the future-form reads and writes on the C file pool
	// (fsfutures.go).
	fsCalls fsCalls
	// messages holds C copies of exception messages handed out by
	// ll_future_exception, freed when their future is disposed.
	messages map[uint64]*C.char
	// net delivers transport events to C (events.go); nil until first used.
	net *netState
	// gate keeps runs, closes and releases of this loop from racing
	// across threads.
	gate loopGate
	// slab orders the handle timers C made (timerslab.go).
	slab *timerSlab
	// hostRun is the host queue ll_loop_set_host_queue installed (fn 0:
	// none); RunHostQueue calls it.
	hostRun struct{ fn, arg uintptr }
	// signalIDs names each signal's handler (signals.go): its id, for
	// ll_loop_walk and the reference calls.
	signalIDs map[int]uint64
	// dgrams is ll_udp_sendmany's scratch: the host's records as the
	// core's, pointing into the host's memory for the call's duration.
	dgrams []libloop.OutDatagram
}

// loopState is the core's Host with every optional face (libloop/host.go):
// SetHost finds them by type assertion, so a method renamed on either
// side would silently turn one off; this stops the build instead.
var _ interface {
	libloop.ChainRunner
	libloop.EventSink
	libloop.ReadWatcher
	libloop.DirectWriter
	libloop.PostSource
	libloop.TimerHost
	libloop.HostQueue
	libloop.Spawner
	libloop.HostEnv
} = (*loopState)(nil)

// Buffer implements libloop.Host: the batch lives in C memory so C can
// read it without a copy.
func (s *loopState) Buffer(n int) []libloop.HostCall {
	return unsafe.Slice((*libloop.HostCall)(unsafe.Pointer(s.calls)), n)
}

// Run implements libloop.Host: one crossing for the whole batch.
func (s *loopState) Run(l *libloop.Loop, n int) {
	s.runHost(func() {
		C.ll__run_batch(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(s.calls))), C.int(n), C.uintptr_t(uintptr(unsafe.Pointer(s.pending))))
	})
}

// RunChain implements libloop.ChainRunner: the batch and the iterations
// that follow it while they are only its call_soon work, in one crossing
// (cloop/chain.c).
func (s *loopState) RunChain(l *libloop.Loop, n int, c *libloop.Chain) {
	cc := &s.pending.chain
	cc.epfd, cc.max_events = C.int32_t(c.Poll.Fd), C.int32_t(c.Poll.Max)
	cc.events = C.uintptr_t(uintptr(c.Poll.Buf))
	cc.view = C.uintptr_t(uintptr(unsafe.Pointer(c.View)))
	cc.max_iterations = C.int64_t(c.MaxIterations)
	s.runHost(func() {
		C.ll__run_chain(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(s.calls))), C.int(n),
			C.uintptr_t(uintptr(unsafe.Pointer(s.pending))))
	})
	c.Iterations, c.Calls, c.Polled = int(cc.iterations), int(cc.calls), int(cc.polled)
}

// Call implements libloop.Host: one host call (a task step) through
// its own one-slot buffer, so it never disturbs a batch.
func (s *loopState) Call(l *libloop.Loop, fc libloop.HostCall) {
	one := unsafe.Slice((*libloop.HostCall)(unsafe.Pointer(s.one)), 1)
	one[0] = fc
	p := s.pending
	outer, outerDecided := p.step_task, p.step_decided
	p.step_task, p.step_decided = C.uint64_t(fc.ID), 0
	defer func() { p.step_task, p.step_decided = outer, outerDecided }()
	s.runHost(func() {
		C.ll__run_batch(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(s.one))), 1, C.uintptr_t(uintptr(unsafe.Pointer(s.pending))))
	})
}

// beginRun closes the C-side queue to calls from outside a batch (the loop
// now runs: those go through Go and its thread check) and moves what the
// idle loop collected to the ready queue. The returned func reopens it.
func (s *loopState) beginRun() func() {
	C.ll__pending_set_open(s.pending, 0)
	s.enter(0) // the gate let this thread in
	return func() {
		if !s.loop.IsClosed() {
			C.ll__pending_set_open(s.pending, 1)
		}
	}
}

// The Go runtime opens its own poller (an epoll fd and an eventfd) the
// first time anything arms a Go timer, which its background scavenger does
// at some moment after a busy stretch: two fds would appear in the host's
// process mid-run, where a host counting its fds (as our fault tests do)
// sees a leak. Arm and stop one timer at load, so they open at once.
func init() { time.AfterFunc(time.Hour, func() {}).Stop() }

// The C side's loop clock: the same monotonic clock as the core's, with
// the core's own base, so C's "now" is the loop's to the nanosecond and a
// timer it queues is neither early nor late.
func init() { C.ll__set_clock_base(C.int64_t(libloop.ClockBase())) }

func (s *loopState) free() {
	s.freeNet()
	C.free(unsafe.Pointer(s.calls))
	C.free(unsafe.Pointer(s.one))
	C.ll__pending_retire(s.pending) // its handle timers' records too (ll__ts_retire)
	s.calls, s.one, s.pending = nil, nil, nil
	s.slab = nil // it pointed into the retired record
}

// getLoopToRun resolves a loop id for a run entry point. It does not flush
// the C-side call_soon queue: that queue is empty outside a batch, and a
// run started from within a batch is refused (LL_ERUNNING) before this.
// So a run attempted from another thread while the loop runs touches
// nothing and fails in the core with ERUNNING (or EWRONGTHREAD in debug
// mode).
func getLoopToRun(id C.uint64_t) (*loopState, C.int) {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	s := obj.(*loopState)
	if err := s.loop.CheckThread(); err != nil {
		return nil, errCode(err)
	}
	return s, 0
}

// getLoop resolves a loop id for a call made on the loop's thread: the id
// must be live, and in debug mode the caller must be the running thread.
func getLoop(id C.uint64_t) (*loopState, C.int) {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	s := obj.(*loopState)
	if rc := s.enter(s.debugCheck()); rc != 0 {
		return nil, rc
	}
	return s, 0
}

// ll__loop_new is ll_loop_new behind the fork guard: the C function of
// that name (cloop/forkguard.c) refuses a fork child before it enters Go.
//
//export ll__loop_new
func ll__loop_new(out *C.uint64_t) C.int {
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	l, err := libloop.New()
	if err != nil {
		return errCode(err)
	}
	s := &loopState{loop: l, calls: C.ll__alloc_calls(C.int(dispatchBatch)),
		one: C.ll__alloc_calls(1), pending: C.ll__pending_new()}
	s.id = ids.add(kindLoop, s)
	if s.id == 0 || s.calls == nil || s.one == nil || s.pending == nil {
		l.Close()
		s.free()
		if s.id != 0 {
			ids.remove(s.id)
		}
		return C.int(libloop.ENOMEM)
	}
	C.ll__pending_register(s.pending, C.uint64_t(s.id))
	s.slab = &timerSlab{s: s, cs: &s.pending.slab}
	l.Tag = s.id
	l.Data = s
	s.messages = make(map[uint64]*C.char)
	l.SetHost(s)              // and every optional face of libloop.Host loopState has
	l.AddObjectSource(s.slab) // C's handle timers, for ll_loop_walk (walk.go)
	*out = C.uint64_t(s.id)
	return 0
}

// dispatchBatch must be at least the core's batch size.
const dispatchBatch = 256

// ll_loop_close is a C function (cloop/run.c) that passes its thread's token.

// ll__loop_close_go closes the loop under its gate, so two threads closing
// an idle loop close its selector once, and a close never overlaps a run
// that another thread starts.
//
//export ll__loop_close_go
func ll__loop_close_go(id C.uint64_t, tok C.uintptr_t) C.int {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	s := obj.(*loopState)
	// The gate first: enter flushes the C-side queue, which only the
	// thread that may act on the loop can touch.
	if rc := s.gate.borrow(uintptr(tok)); rc != 0 {
		return C.int(rc)
	}
	defer s.gate.unborrow()
	if rc := s.enter(s.debugCheck()); rc != 0 {
		return rc
	}
	return errCode(closeLoop(s))
}

// runAlive marks a mode of ll_loop_run (cloop/run.c): libuv's uv_run,
// which runs only while the loop is alive and says whether it still is.
const runAlive = C.LL__RUN_ALIVE

// ll__loop_run_go runs the loop (mode -1: forever; runAlive|LL_RUN_*:
// ll_loop_run) on the calling thread, which enterRun makes its only runner.
//
//export ll__loop_run_go
func ll__loop_run_go(id C.uint64_t, mode C.int, tok C.uintptr_t) C.int {
	s, rc := getLoopToRun(id)
	if rc != 0 {
		return rc
	}
	if rc := s.gate.enterRun(uintptr(tok)); rc != 0 {
		return C.int(rc)
	}
	defer s.gate.exitRun()
	defer s.beginRun()()
	if mode >= 0 && mode&runAlive != 0 { // ll_loop_run (-1 has every bit set)
		alive, err := s.loop.Run(libloop.RunMode(mode &^ runAlive))
		if err != nil {
			return errCode(err)
		}
		return boolInt(alive)
	}
	switch mode {
	case -1:
		return errCode(s.loop.RunForever())
	case C.LL_RUN_NOWAIT:
		return errCode(s.loop.RunOnce(true))
	default:
		return errCode(s.loop.RunOnce(false))
	}
}

// ll__loop_stop_go is ll_loop_stop's Go side; caller: see loopthread.go.
//
//export ll__loop_stop_go
func ll__loop_stop_go(caller, id C.uint64_t) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return errCode(s.loop.Stop())
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

//export ll_loop_is_running
func ll_loop_is_running(id C.uint64_t) C.int {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	return boolInt(obj.(*loopState).loop.IsRunning())
}

//export ll_loop_is_closed
func ll_loop_is_closed(id C.uint64_t) C.int {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	return boolInt(obj.(*loopState).loop.IsClosed())
}

//export ll_loop_time
func ll_loop_time(id C.uint64_t) C.double {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return -1
	}
	return C.double(obj.(*loopState).loop.Time())
}

//export ll_loop_set_debug
func ll_loop_set_debug(id C.uint64_t, enabled C.int) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	s.loop.SetDebug(enabled != 0)
	return 0
}

//export ll_loop_get_debug
func ll_loop_get_debug(id C.uint64_t) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	return boolInt(s.loop.Debug())
}

//export ll_loop_backend_fd
func ll_loop_backend_fd(id C.uint64_t) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	fd, err := s.loop.BackendFD()
	if err != nil {
		return errCode(err)
	}
	return C.int(fd)
}

//export ll_loop_set_slow_callback_duration
func ll_loop_set_slow_callback_duration(id C.uint64_t, secs C.double) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	if math.IsNaN(float64(secs)) || secs < 0 || secs > 1e9 {
		return C.int(libloop.EINVAL)
	}
	s.loop.SetSlowCallbackDuration(time.Duration(float64(secs) * 1e9))
	return 0
}

//export ll_loop_set_exception_handler
func ll_loop_set_exception_handler(id C.uint64_t, fn C.ll_exception_handler, arg unsafe.Pointer) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	if fn == nil {
		s.loop.SetExceptionHandler(nil)
		return 0
	}
	fnAddr, argAddr := uintptr(unsafe.Pointer(fn)), uintptr(arg)
	s.loop.SetExceptionHandler(func(ctx *libloop.ErrorContext) {
		msg := C.CString(ctx.Message)
		defer C.free(unsafe.Pointer(msg))
		cctx := (*C.ll_error_context)(C.calloc(1, C.sizeof_ll_error_context))
		defer C.free(unsafe.Pointer(cctx))
		cctx.message = msg
		cctx.code = C.int(ctx.Code)
		if f := ctx.Future; f != nil {
			cctx.future = C.uint64_t(f.Tag)
			if f.Task() != nil {
				cctx.task = C.uint64_t(f.Tag)
			}
		}
		C.ll__call_exception_handler(C.uintptr_t(fnAddr), C.uint64_t(s.id), cctx, C.uintptr_t(argAddr))
	})
	return 0
}

//export ll_loop_wakeup
func ll_loop_wakeup(id C.uint64_t) C.int {
	obj, ok := ids.get(uint64(id), kindLoop)
	if !ok {
		return C.int(libloop.EBADHANDLE)
	}
	return errCode(obj.(*loopState).loop.Wake())
}

//export ll_loop_set_host_queue
func ll_loop_set_host_queue(id C.uint64_t, fn C.ll_host_run_fn, arg unsafe.Pointer) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	s.hostRun.fn, s.hostRun.arg = uintptr(unsafe.Pointer(fn)), uintptr(arg)
	return 0
}

// RunHostQueue implements libloop.HostQueue: the host's run function, if
// one is installed, in one crossing.
func (s *loopState) RunHostQueue(l *libloop.Loop) bool {
	if s.hostRun.fn == 0 {
		return false // removed while announced: nothing more to run
	}
	return C.ll__call_host_run(C.uintptr_t(s.hostRun.fn), C.uint64_t(s.id), C.uintptr_t(s.hostRun.arg)) != 0
}

// ll__loop_host_ready_go is ll_loop_host_ready's Go side (cloop/hostready.c
// answers a callback of the running batch in C).
//
//export ll__loop_host_ready_go
func ll__loop_host_ready_go(id C.uint64_t) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	s.loop.HostReady()
	return 0
}
