// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"sync"
	"unsafe"
)

// FutureState is a future's state (ll_future_state).
type FutureState int

// The states of include/libloop/future.h.
const (
	Pending   FutureState = 0 // LL_PENDING
	Cancelled FutureState = 1 // LL_CANCELLED
	Finished  FutureState = 2 // LL_FINISHED
)

// String names the state.
func (s FutureState) String() string {
	switch s {
	case Pending:
		return "pending"
	case Cancelled:
		return "cancelled"
	case Finished:
		return "finished"
	}
	return fmt.Sprintf("FutureState(%d)", int(s))
}

// Future is a libloop future (an ll_future id): asyncio's Future. Use it on
// the thread that runs its loop.
//
// A Future made by the binding (Loop.NewFuture, Sleep, Gather, WaitFor,
// RunInExecutor, ShutdownDefaultExecutor, Loop.NewTask) holds the host's
// reference: Release it when done. The library keeps the future alive while
// the loop still needs it (a task awaiting it, a done callback scheduled),
// and frees its value (see SetResult) once both are done with it. A Future
// the binding only borrowed (Task.Awaited, Loop.CurrentTask, AllTasks of
// futures it did not make) holds no reference, and its Release does nothing.
type Future struct {
	lib      *Lib
	loop     *Loop // nil when the binding does not know it (inside Run)
	id       uint64
	owned    bool
	released bool
	task     *Task // non-nil when the future is a task
}

// ownedFutures maps the ids of futures the binding holds a reference to onto their
// Future, so a done callback or Task.Awaited hands back the same pointer.
var ownedFutures sync.Map // uint64 -> *Future

// futureFor returns the binding's Future for id, or a borrowed one.
func futureFor(lib *Lib, loop *Loop, id uint64) *Future {
	if id == 0 {
		return nil
	}
	if v, ok := ownedFutures.Load(id); ok {
		return v.(*Future)
	}
	return &Future{lib: lib, loop: loop, id: id}
}

// newFuture wraps an id made by call(out) as an owned Future of l.
func (l *Loop) newFuture(call func(out unsafe.Pointer) int32) (*Future, error) {
	id, err := outCall(call)
	if err != nil {
		return nil, err
	}
	f := &Future{lib: l.lib, loop: l, id: id, owned: true}
	ownedFutures.Store(id, f)
	return f, nil
}

// NewFuture creates a pending future on the loop (ll_future_new).
func (l *Loop) NewFuture() (*Future, error) {
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().FutureNew(l.id, out) })
}

func (f *Future) raw() *Raw { return f.lib.Raw }

// ID returns the ll_future id (an ll_task id for a task).
func (f *Future) ID() uint64 { return f.id }

// Loop returns the loop the future was made on, or nil if the binding does
// not know it (futures of the loop ll_run creates).
func (f *Future) Loop() *Loop { return f.loop }

// LoopID asks the library for the id of the loop the future (or task)
// belongs to (ll_future_get_loop). It works where Loop returns nil: inside
// Run, main's task reaches the loop Run made this way (a raw id, valid
// until Run returns).
func (f *Future) LoopID() (uint64, error) {
	return outCall(func(out unsafe.Pointer) int32 { return f.raw().FutureGetLoop(f.id, out) })
}

// Task returns the task this future is, or nil for a plain future.
func (f *Future) Task() *Task { return f.task }

// State returns Pending, Cancelled or Finished (works on tasks).
func (f *Future) State() (FutureState, error) {
	rc := f.raw().FutureState(f.id)
	if rc < 0 {
		return 0, Error(rc)
	}
	return FutureState(rc), nil
}

// Done reports whether the future is finished or cancelled; false for a
// released or otherwise invalid id.
func (f *Future) Done() bool { return f.raw().FutureDone(f.id) == 1 }

// SetResult finishes the future with value and schedules its done
// callbacks. free, if not nil, is called exactly once with value when the
// library no longer references it (after the host and the loop have both
// released the future); Go free funcs are routed by value (see RegisterFree).
// ESTATE if the future is already done or is a task (free is then never called).
func (f *Future) SetResult(value uintptr, free func(value uintptr)) error {
	cfn, reg := freeArg(value, free)
	if err := check(f.raw().FutureSetResult(f.id, value, cfn)); err != nil {
		undoFree(value, reg)
		return err
	}
	return nil
}

// SetException fails the future with code (non-zero, not ECANCELLED: use
// Cancel), a message and a host payload freed like a result.
func (f *Future) SetException(code int, msg string, payload uintptr, free func(payload uintptr)) error {
	cfn, reg := freeArg(payload, free)
	rc := withCString(msg, func(m unsafe.Pointer) int32 {
		return f.raw().FutureSetException(f.id, int32(code), m, payload, cfn)
	})
	if err := check(rc); err != nil {
		undoFree(payload, reg)
		return err
	}
	return nil
}

// Cancel cancels the future (a task: requests cancellation; a gather future:
// cancels its children) and reports whether it did; false if already done.
func (f *Future) Cancel(msg string) (bool, error) {
	rc := withCString(msg, func(m unsafe.Pointer) int32 { return f.raw().FutureCancel(f.id, m) })
	if rc < 0 {
		return false, Error(rc)
	}
	return rc == 1, nil
}

// Result returns the value. The error is ESTATE while pending, ECANCELLED if
// cancelled, or the exception's code (an Error) if the future failed.
func (f *Future) Result() (uintptr, error) {
	v, err := outCall(func(out unsafe.Pointer) int32 { return f.raw().FutureResult(f.id, out) })
	return uintptr(v), err
}

// FutureError is how a future failed (ll_future_exception).
type FutureError struct {
	Code    Error   // the code given to SetException or Raise
	Message string  // its message
	Payload uintptr // the host payload
}

// Error implements error.
func (e *FutureError) Error() string {
	if e.Message == "" {
		return e.Code.Error()
	}
	return e.Message + " (" + e.Code.Name() + ")"
}

// Unwrap returns the code, so errors.Is(err, libloop.ETIMEDOUT) works.
func (e *FutureError) Unwrap() error { return e.Code }

// Exception returns how the future failed: nil (and a nil error) if it
// finished with a result; ESTATE while pending, ECANCELLED if cancelled.
// It marks the exception retrieved, so releasing the future reports nothing.
func (f *Future) Exception() (*FutureError, error) {
	buf, err := NewCBuf(24) // int code, const char *message, uintptr_t payload
	if err != nil {
		return nil, err
	}
	defer buf.Free()
	p := buf.Ptr()
	if err := check(f.raw().FutureException(f.id, p, unsafe.Add(p, 8), unsafe.Add(p, 16))); err != nil {
		return nil, err
	}
	code := *(*int32)(p)
	if code == 0 {
		return nil, nil
	}
	return &FutureError{Code: Error(code), Message: goString(*(*unsafe.Pointer)(unsafe.Add(p, 8))),
		Payload: *(*uintptr)(unsafe.Add(p, 16))}, nil
}

// DoneCallbackID names a registration made by AddDoneCallback.
type DoneCallbackID uintptr

// AddDoneCallback calls fn(f) on the loop thread, via call_soon, once the
// future is done, after the callbacks registered before it; if it is already
// done, fn is scheduled at once (never called synchronously).
func (f *Future) AddDoneCallback(fn func(*Future)) (DoneCallbackID, error) {
	if fn == nil {
		return 0, EINVAL
	}
	key := addEntry(&cbEntry{kind: kindPlain, once: true, owner: f.loopID(),
		plain: func(uint64) { fn(f) }})
	if err := check(f.raw().FutureAddDoneCallback(f.id, CallbackPtr(), key)); err != nil {
		removeEntry(key)
		return 0, err
	}
	return DoneCallbackID(key), nil
}

// RemoveDoneCallback removes a registration not yet scheduled and returns
// how many it removed (1, or 0 if it was scheduled already or removed).
func (f *Future) RemoveDoneCallback(id DoneCallbackID) (int, error) {
	rc := f.raw().FutureRemoveDoneCallback(f.id, CallbackPtr(), uintptr(id))
	if rc < 0 {
		return 0, Error(rc)
	}
	if rc > 0 {
		removeEntry(uintptr(id))
	}
	return int(rc), nil
}

// Release drops the host's reference (ll_release). Releasing twice, or a
// borrowed Future, does nothing. The id stays valid while the loop still
// uses the future (a done callback scheduled, a task awaiting it), so a
// done callback still reads a released future; after that, every method
// fails with EBADHANDLE. If the future failed and its exception was never
// retrieved, the loop's exception handler hears of it once the library
// disposes of the future.
func (f *Future) Release() error {
	if !f.owned || f.released {
		return nil
	}
	if err := check(f.raw().Release(f.id)); err != nil {
		return err
	}
	f.released = true
	ownedFutures.Delete(f.id)
	return nil
}

// loopID returns the id of the loop whose Close drops f's callback entries.
func (f *Future) loopID() uint64 {
	if f.loop != nil {
		return f.loop.id
	}
	return 0
}
