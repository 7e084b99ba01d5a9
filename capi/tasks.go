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

// getTask resolves a task id for a call on its loop's thread.
func getTask(id C.uint64_t) (futRef, C.int) {
	obj, ok := ids.get(uint64(id), kindTask)
	if !ok {
		return futRef{}, C.int(libloop.EBADHANDLE)
	}
	return resolveFuture(obj.(*libloop.Future))
}

//export ll_task_new
func ll_task_new(loop C.uint64_t, step C.ll_step_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	// The id first: a task refused for want of ids never runs its step.
	id := ids.reserveID()
	if id == 0 {
		return C.int(libloop.ENOMEM)
	}
	t, err := s.loop.NewTaskHost(uintptr(unsafe.Pointer(step)), uintptr(arg))
	if err != nil {
		ids.remove(id)
		return errCode(err)
	}
	ids.fill(id, kindTask, &t.Future)
	t.Tag = id
	*out = C.uint64_t(id)
	return 0
}

//export ll_task_await
func ll_task_await(task C.uint64_t, fut C.uint64_t) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	fs, rc := getFuture(fut)
	if rc != 0 {
		return rc
	}
	return decided(ts, ts.t.Await(fs.f))
}

// decided records, for the C yield fast path, that the running step chose
// its outcome through Go; err is the outcome call's result. A call that
// failed may have ended the task all the same (awaiting itself or another
// loop's future fails it with ESTATE): a done task has chosen too. A
// released loop has no pending queue (its task ids may live on).
func decided(ts futRef, err error) C.int {
	if p := ts.loop.pending; p != nil && p.step_task == C.uint64_t(ts.f.Tag) && (err == nil || ts.f.Done()) {
		p.step_decided = 1
	}
	return errCode(err)
}

// ll_task_yield and ll_task_sleep are C functions (cloop/soon.c): a step that
// yields its own task is answered without entering Go.

//export ll__task_yield_go
func ll__task_yield_go(task C.uint64_t) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return decided(ts, ts.t.Yield())
}

//export ll__task_sleep_go
func ll__task_sleep_go(task C.uint64_t, delay C.double) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return decided(ts, ts.t.Sleep(float64(delay)))
}

//export ll_task_return
func ll_task_return(task C.uint64_t, value C.uintptr_t, free C.ll_free_fn) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return decided(ts, ts.t.Return(uintptr(value), freeFunc(free)))
}

//export ll_task_raise
func ll_task_raise(task C.uint64_t, code C.int, msg *C.ll__cchar, payload C.uintptr_t, free C.ll_free_fn) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return decided(ts, ts.t.Raise(int(code), goString(msg), uintptr(payload), freeFunc(free)))
}

//export ll_task_awaited
func ll_task_awaited(task C.uint64_t, out *C.uint64_t) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	if !ts.t.Stepping() {
		return C.int(libloop.ESTATE)
	}
	*out = 0
	if f := ts.t.Awaited(); f != nil {
		*out = C.uint64_t(f.Tag)
	}
	return 0
}

//export ll_task_must_raise_cancel
func ll_task_must_raise_cancel(task C.uint64_t) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return boolInt(ts.t.MustRaiseCancel())
}

//export ll_task_cancel
func ll_task_cancel(task C.uint64_t, msg *C.ll__cchar) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return boolInt(ts.t.Cancel(goString(msg)))
}

//export ll_task_uncancel
func ll_task_uncancel(task C.uint64_t) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return C.int(ts.t.Uncancel())
}

//export ll_task_cancelling
func ll_task_cancelling(task C.uint64_t) C.int {
	ts, rc := getTask(task)
	if rc != 0 {
		return rc
	}
	return C.int(ts.t.Cancelling())
}

//export ll_future_get_loop
func ll_future_get_loop(fut C.uint64_t, out *C.uint64_t) C.int {
	fs, rc := getFuture(fut)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	*out = C.uint64_t(fs.loop.id)
	return 0
}

//export ll_current_task
func ll_current_task(loop C.uint64_t, out *C.uint64_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	*out = 0
	if t := s.loop.CurrentTask(); t != nil {
		*out = C.uint64_t(t.Tag)
	}
	return 0
}

//export ll_all_tasks
func ll_all_tasks(loop C.uint64_t, out *C.uint64_t, capacity C.size_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil && capacity > 0 {
		return C.int(libloop.EINVAL)
	}
	tasks := s.loop.AllTasks()
	if capacity > 0 {
		dst := unsafe.Slice(out, int(min(capacity, C.size_t(len(tasks)))))
		for i := range dst {
			dst[i] = C.uint64_t(tasks[i].Tag)
		}
	}
	return C.int(len(tasks))
}
