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

//export ll_run_in_executor
func ll_run_in_executor(loop C.uint64_t, fn C.ll_work_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if fn == nil {
		return C.int(libloop.EINVAL)
	}
	fnAddr, argAddr := uintptr(unsafe.Pointer(fn)), uintptr(arg)
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		return s.loop.RunInExecutorHost(callWork, fnAddr, argAddr)
	})
}

// callWork runs a host ll_work_fn on an executor worker; one static function
// serves every job, so submitting one allocates no closure.
func callWork(fn, arg uintptr) (uintptr, int) {
	var code C.int
	v := C.ll__call_work(C.uintptr_t(fn), C.uintptr_t(arg), &code)
	return uintptr(v), int(code)
}

//export ll_queue_work
func ll_queue_work(loop C.uint64_t, work C.ll_queue_work_fn, after C.ll_callback, arg unsafe.Pointer) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if work == nil || after == nil {
		return C.int(libloop.EINVAL)
	}
	return errCode(s.loop.QueueWorkHost(callQueuedWork, uintptr(unsafe.Pointer(work)), uintptr(arg),
		hostCall(s, unsafe.Pointer(after), arg)))
}

// callQueuedWork runs a host ll_queue_work_fn on an executor worker.
func callQueuedWork(fn, arg uintptr) (uintptr, int) {
	C.ll__call_queued_work(C.uintptr_t(fn), C.uintptr_t(arg))
	return 0, 0
}

//export ll_loop_set_executor_workers
func ll_loop_set_executor_workers(loop C.uint64_t, n C.int) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	return errCode(s.loop.SetExecutorWorkers(int(n)))
}

//export ll_loop_shutdown_default_executor
func ll_loop_shutdown_default_executor(loop C.uint64_t, out *C.uint64_t) C.int {
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) { return s.loop.ShutdownDefaultExecutor() })
}

// ll__run_until_complete_go runs the loop on the calling thread (its only
// runner, see loopGate) until fut is done.
//
//export ll__run_until_complete_go
func ll__run_until_complete_go(loop C.uint64_t, fut C.uint64_t, tok C.uintptr_t) C.int {
	s, rc := getLoopToRun(loop)
	if rc != 0 {
		return rc
	}
	f, rc := lookupFuture(fut)
	if rc != 0 {
		return rc
	}
	if f.Loop() != s.loop {
		return C.int(libloop.EINVAL)
	}
	if rc := s.gate.enterRun(uintptr(tok)); rc != 0 {
		return C.int(rc)
	}
	defer s.gate.exitRun()
	defer s.beginRun()()
	return errCode(s.loop.RunUntilComplete(f))
}

// ll__run_go is ll_run: the loop it makes is run by the calling thread
// throughout (its id reaches the steps, so other threads may try to use it).
//
//export ll__run_go
func ll__run_go(step C.uintptr_t, arg C.uintptr_t, result *C.uintptr_t, tok C.uintptr_t) C.int {
	if step == 0 {
		return C.int(libloop.EINVAL)
	}
	var lid C.uint64_t
	if rc := ll__loop_new(&lid); rc != 0 {
		return rc
	}
	s, _ := getLoop(lid)
	defer releaseLoop(s, uintptr(tok)) // after exitRun: defers run last first
	s.gate.enterRun(uintptr(tok))      // cannot fail: the loop is new and not yet shared
	defer s.gate.exitRun()
	defer s.beginRun()()
	// This thread runs the new loop from here on: its calls pass the check.
	C.ll__set_thread_loop(lid)
	t, err := s.loop.NewTaskHost(uintptr(step), uintptr(arg))
	if err != nil {
		return errCode(err)
	}
	var tid C.uint64_t
	if rc := registerFuture(s, &t.Future, t, &tid); rc != 0 {
		return rc
	}
	defer ll__release_go(tid, tok)
	runErr := s.loop.RunUntilComplete(&t.Future)
	s.loop.CancelAllTasks()
	if sd, err := s.loop.ShutdownDefaultExecutor(); err == nil {
		s.loop.RunUntilComplete(sd)
		sd.Release()
	}
	if runErr != nil {
		return errCode(runErr)
	}
	v, err := t.Result()
	if err != nil {
		return errCode(err)
	}
	t.DetachFree() // the value now belongs to the caller
	if result != nil {
		*result = C.uintptr_t(v)
	}
	return 0
}
