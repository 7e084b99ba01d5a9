// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// A future or task id names the core *libloop.Future itself (a task's
// embedded one), so registering a future allocates nothing beyond its id
// slot. The id stays valid while anyone holds the future: the host (until
// ll_release) or the loop (a task still pending, a task awaiting it); the
// loop's dispose hook removes it.

// futRef is a resolved future id, returned by value (no allocation).
type futRef struct {
	f    *libloop.Future
	t    *libloop.Task // nil for a plain future
	loop *loopState
}

// registerFuture gives f an id holding the host's reference (the one f was
// created with) and stores it in *out.
func registerFuture(s *loopState, f *libloop.Future, t *libloop.Task, out *C.uint64_t) C.int {
	k := kindFuture
	if t != nil {
		k = kindTask
	}
	id := ids.add(k, f)
	if id == 0 {
		if t != nil {
			t.Cancel("")
		}
		f.Release()
		return C.int(libloop.ENOMEM)
	}
	f.Tag = id
	*out = C.uint64_t(id)
	return 0
}

// FutureDisposed implements libloop.Host: the future is gone, so is its id.
func (s *loopState) FutureDisposed(f *libloop.Future) {
	ids.remove(f.Tag)
	if m, ok := s.messages[f.Tag]; ok {
		C.free(unsafe.Pointer(m))
		delete(s.messages, f.Tag)
	}
}

// lookupFuture returns the future a future or task id names (a task is a
// future), without any thread check.
func lookupFuture(id C.uint64_t) (*libloop.Future, C.int) {
	obj, ok := ids.get(uint64(id), kindFuture)
	if !ok {
		if obj, ok = ids.get(uint64(id), kindTask); !ok {
			return nil, C.int(libloop.EBADHANDLE)
		}
	}
	return obj.(*libloop.Future), 0
}

// getFuture resolves a future or task id for a call on the loop's thread.
func getFuture(id C.uint64_t) (futRef, C.int) {
	f, rc := lookupFuture(id)
	if rc != 0 {
		return futRef{}, rc
	}
	return resolveFuture(f)
}

func resolveFuture(f *libloop.Future) (futRef, C.int) {
	r := futRef{f: f, t: f.Task(), loop: f.Loop().Data.(*loopState)}
	if rc := r.loop.enter(r.loop.debugCheck()); rc != 0 {
		return futRef{}, rc
	}
	return r, 0
}

// freeFunc wraps a host ll_free_fn as a core FreeFunc (nil stays nil).
func freeFunc(fn C.ll_free_fn) libloop.FreeFunc {
	if fn == nil {
		return nil
	}
	addr := uintptr(unsafe.Pointer(fn))
	return func(v uintptr) { C.ll__call_free(C.uintptr_t(addr), C.uintptr_t(v)) }
}

// makeFuture is the common shape of every call that returns a new future:
// resolve the loop, check out, build the future, give it an id in *out.
func makeFuture(loop C.uint64_t, out *C.uint64_t, build func(*loopState) (*libloop.Future, error)) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	// The id first: a call refused for want of ids has done nothing (no
	// job started, no timer set, no host callback run).
	id := ids.reserveID()
	if id == 0 {
		return C.int(libloop.ENOMEM)
	}
	f, err := build(s)
	if err != nil {
		ids.remove(id)
		return errCode(err)
	}
	ids.fill(id, kindFuture, f)
	f.Tag = id
	*out = C.uint64_t(id)
	return 0
}

//export ll_future_new
func ll_future_new(loop C.uint64_t, out *C.uint64_t) C.int {
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) { return s.loop.NewFuture() })
}

//export ll_future_state
func ll_future_state(id C.uint64_t) C.int {
	fs, rc := getFuture(id)
	if rc != 0 {
		return rc
	}
	return C.int(fs.f.State())
}

//export ll_future_done
func ll_future_done(id C.uint64_t) C.int {
	fs, rc := getFuture(id)
	if rc != 0 {
		return rc
	}
	return boolInt(fs.f.Done())
}

// ll__future_set_result_go is ll_future_set_result's Go side; caller: see loopthread.go.
//
//export ll__future_set_result_go
func ll__future_set_result_go(caller C.uint64_t, id C.uint64_t, value C.uintptr_t, free C.ll_free_fn) C.int {
	fs, rc := getFutureFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if fs.t != nil {
		return C.int(libloop.ESTATE) // a task's outcome comes from its steps
	}
	return errCode(fs.f.SetResult(uintptr(value), freeFunc(free)))
}

// ll__future_set_exception_go is ll_future_set_exception's Go side; caller: see loopthread.go.
//
//export ll__future_set_exception_go
func ll__future_set_exception_go(caller C.uint64_t, id C.uint64_t, code C.int, msg *C.ll__cchar, payload C.uintptr_t, free C.ll_free_fn) C.int {
	fs, rc := getFutureFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if fs.t != nil {
		return C.int(libloop.ESTATE)
	}
	return errCode(fs.f.SetException(int(code), goString(msg), uintptr(payload), freeFunc(free)))
}

// goString copies a C string; NULL is "".
func goString(p *C.ll__cchar) string {
	if p == nil {
		return ""
	}
	return C.GoString((*C.char)(p))
}

// ll__future_cancel_go is ll_future_cancel's Go side; caller: see loopthread.go.
//
//export ll__future_cancel_go
func ll__future_cancel_go(caller C.uint64_t, id C.uint64_t, msg *C.ll__cchar) C.int {
	fs, rc := getFutureFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return boolInt(fs.f.Cancel(goString(msg)))
}

//export ll_future_result
func ll_future_result(id C.uint64_t, out *C.uintptr_t) C.int {
	fs, rc := getFuture(id)
	if rc != 0 {
		return rc
	}
	v, err := fs.f.Result()
	if err != nil {
		return errCode(err)
	}
	if out != nil {
		*out = C.uintptr_t(v)
	}
	return 0
}

//export ll_future_exception
func ll_future_exception(id C.uint64_t, code *C.int, msg **C.ll__cchar, payload *C.uintptr_t) C.int {
	fs, rc := getFuture(id)
	if rc != 0 {
		return rc
	}
	c, m, p, err := fs.f.Exception()
	if err != nil {
		return errCode(err)
	}
	if code != nil {
		*code = C.int(c)
	}
	if payload != nil {
		*payload = C.uintptr_t(p)
	}
	if msg != nil {
		*msg = nil
		if c != 0 {
			cm, ok := fs.loop.messages[fs.f.Tag]
			if !ok {
				cm = C.CString(m)
				fs.loop.messages[fs.f.Tag] = cm
			}
			*msg = (*C.ll__cchar)(cm)
		}
	}
	return 0
}

//export ll_future_add_done_callback
func ll_future_add_done_callback(id C.uint64_t, cb C.ll_done_callback, arg unsafe.Pointer) C.int {
	fs, rc := getFuture(id)
	if rc != 0 {
		return rc
	}
	if cb == nil {
		return C.int(libloop.EINVAL)
	}
	fs.f.AddDoneCallbackHost(uintptr(unsafe.Pointer(cb)), uintptr(arg))
	return 0
}

//export ll_future_remove_done_callback
func ll_future_remove_done_callback(id C.uint64_t, cb C.ll_done_callback, arg unsafe.Pointer) C.int {
	fs, rc := getFuture(id)
	if rc != 0 {
		return rc
	}
	return C.int(fs.f.RemoveDoneCallbackHost(uintptr(unsafe.Pointer(cb)), uintptr(arg)))
}

//export ll_sleep
func ll_sleep(loop C.uint64_t, delay C.double, out *C.uint64_t) C.int {
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) { return s.loop.Sleep(float64(delay)) })
}

//export ll_gather
func ll_gather(loop C.uint64_t, n C.size_t, futs *C.ll__cid, returnExc C.int, out *C.uint64_t) C.int {
	if (n > 0 && futs == nil) || n > 1<<24 {
		return C.int(libloop.EINVAL)
	}
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		children := make([]*libloop.Future, int(n))
		for i, id := range unsafe.Slice(futs, int(n)) {
			fs, rc := getFuture(id)
			if rc != 0 {
				return nil, libloop.Errno(rc)
			}
			if fs.loop != s {
				return nil, libloop.EINVAL
			}
			children[i] = fs.f
		}
		return s.loop.Gather(children, returnExc != 0)
	})
}

//export ll_wait_for
func ll_wait_for(loop C.uint64_t, fut C.uint64_t, timeout C.double, out *C.uint64_t) C.int {
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		fs, rc := getFuture(fut)
		if rc != 0 {
			return nil, libloop.Errno(rc)
		}
		if fs.loop != s {
			return nil, libloop.EINVAL
		}
		return s.loop.WaitFor(fs.f, float64(timeout))
	})
}
