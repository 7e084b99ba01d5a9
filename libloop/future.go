// SPDX-License-Identifier: MIT

package libloop

// FutureState is a future's life stage (asyncio's _state).
type FutureState uint8

// Future states; values match the C ABI's LL_PENDING, LL_CANCELLED, LL_FINISHED.
const (
	Pending   FutureState = 0
	Cancelled FutureState = 1
	Finished  FutureState = 2
)

// FreeFunc releases a host value (a result or exception payload).
type FreeFunc func(value uintptr)

// Future is asyncio's Future: pending until a result, an exception or a
// cancellation, after which its done callbacks are scheduled with call_soon
// in registration order. Values are host words (uintptr) with an optional
// FreeFunc that the future calls exactly once, when it is disposed.
//
// Lifetime is counted twice: the host's references (the creator's one, and
// Retain/Release) and the loop's own holds (a queued callback, a task
// awaiting it, a gather, a timer, an executor job). When both reach zero
// the future is disposed: host values are freed, an exception nobody
// retrieved is reported, and its role and the Host are told. Close drops
// the loop's holds, since nothing will run again, so a closed loop leaks no
// future.
//
// A Future holds only what every future needs; what a feature adds (a
// task's coroutine, a gather's children, a sleep's timer, an executor
// job's outcome) lives in the feature, reached through role.
type Future struct {
	loop      *Loop
	result    uintptr
	free      FreeFunc // frees result, or the exception payload
	excCode   int      // non-zero once failed (set_exception)
	excMsg    string
	payload   uintptr
	cancelMsg string
	callbacks []doneCallback
	cbInline  [1]doneCallback // storage for the usual single callback: no allocation
	nextToken uint64
	prevLive  *Future
	nextLive  *Future    // the loop's list of live futures, swept by Close
	role      futureRole // the feature that owns the future, or nil
	refs      int32      // the host's: the creator's one, plus Retain
	holds     int32      // the loop's own: queued callbacks, awaiting tasks, timers, jobs
	state     FutureState
	disposed  bool
	retrieved bool // the exception was looked at (asyncio's __log_traceback cleared)

	// Tag is the host's id for this future, passed to host done callbacks.
	Tag uint64
}

// futureRole is what a feature that owns a future adds to it, as asyncio's
// subclasses do (_GatheringFuture overrides cancel): a Task, a gathering,
// a sleep's timer, an executor job in flight, a WaitFor with no timer.
// Each role is a pointer the feature already has, so setting one
// allocates nothing.
type futureRole interface {
	// cancel is Future.Cancel for a future in this role.
	cancel(f *Future, msg string) bool
	// disposed is told when f is disposed, before the Host.
	disposed(f *Future)
}

type doneCallback struct {
	gofn  func(*Future)
	call  HostCall
	token uint64
}

// NewFuture creates a pending future holding one reference for the caller.
func (l *Loop) NewFuture() (*Future, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	f := &Future{loop: l, refs: 1}
	f.callbacks = f.cbInline[:0]
	l.addLive(f)
	return f, nil
}

// addLive links f into the loop's list of live futures.
func (l *Loop) addLive(f *Future) {
	f.nextLive = l.live
	if l.live != nil {
		l.live.prevLive = f
	}
	l.live = f
	l.futureLinked()
}

func (l *Loop) removeLive(f *Future) {
	if f.prevLive != nil {
		f.prevLive.nextLive = f.nextLive
	} else if l.live == f {
		l.live = f.nextLive
	}
	if f.nextLive != nil {
		f.nextLive.prevLive = f.prevLive
	}
	f.prevLive, f.nextLive = nil, nil
	l.futureUnlinked()
}

// dropHolds is Close's sweep: every future loses the loop's holds (its
// callbacks will never run) and those the host no longer references are
// disposed.
func (l *Loop) dropHolds() {
	for f := l.live; f != nil; {
		next := f.nextLive
		f.callbacks = nil
		if _, ok := f.role.(*sleepTimer); ok {
			f.role = nil // the timer is dropped with the ready queue
		}
		if f.holds > 0 {
			f.holds = 0
			f.maybeDispose()
		}
		f = next
	}
}

// Loop returns the loop the future belongs to.
func (f *Future) Loop() *Loop { return f.loop }

// State returns Pending, Cancelled or Finished.
func (f *Future) State() FutureState { return f.state }

// Done reports whether the future is no longer pending.
func (f *Future) Done() bool { return f.state != Pending }

// Task returns the task this future is the result of, or nil.
func (f *Future) Task() *Task {
	t, _ := f.role.(*Task)
	return t
}

// SetResult finishes the future with value; free (may be nil) is called once
// when the future is disposed. ESTATE if it is already done.
func (f *Future) SetResult(value uintptr, free FreeFunc) error {
	if f.state != Pending {
		return ESTATE
	}
	f.result, f.free = value, free
	f.state = Finished
	f.scheduleCallbacks()
	return nil
}

// SetException fails the future with an error code, a message and a
// payload. It is the host's entry point and refuses code 0 and ECANCELLED
// (a host cancels with Cancel). The core never calls it to pass one
// future's failure on to another: see fail.
func (f *Future) SetException(code int, msg string, payload uintptr, free FreeFunc) error {
	if code == 0 || code == int(ECANCELLED) {
		return EINVAL
	}
	return f.fail(code, msg, payload, free)
}

// fail finishes the future with any non-zero code, ECANCELLED included: a
// gather that ends cancelled, an executor job that fails with ECANCELLED,
// or a failure carried from one future to the one waiting on it. asyncio
// sets a CancelledError exception in all of these. Every such path inside
// the core must come here, not to SetException: its refusal of ECANCELLED
// (an error nobody checked) once left the waiting future pending forever,
// so a gather of a cancelled gather, or wait_for of one, never completed.
func (f *Future) fail(code int, msg string, payload uintptr, free FreeFunc) error {
	if f.state != Pending {
		return ESTATE
	}
	f.excCode, f.excMsg, f.payload, f.free = code, msg, payload, free
	f.state = Finished
	f.scheduleCallbacks()
	return nil
}

// Cancel cancels a pending future with an optional message and schedules
// its callbacks; it reports false if the future was already done.
func (f *Future) Cancel(msg string) bool {
	if r := f.role; r != nil {
		return r.cancel(f, msg)
	}
	return f.cancelSelf(msg)
}

func (f *Future) cancelSelf(msg string) bool {
	if f.state != Pending {
		return false
	}
	f.state = Cancelled
	f.cancelMsg = msg
	f.scheduleCallbacks()
	return true
}

// Result returns the value, ESTATE while pending, ECANCELLED if cancelled,
// or the exception's code if it failed.
func (f *Future) Result() (uintptr, error) {
	switch {
	case f.state == Pending:
		return 0, ESTATE
	case f.state == Cancelled:
		return 0, ECANCELLED
	case f.excCode != 0:
		f.retrieved = true
		return 0, Errno(f.excCode)
	}
	return f.result, nil
}

// Exception returns the exception (code 0 if it finished with a result),
// ESTATE while pending and ECANCELLED if cancelled.
func (f *Future) Exception() (code int, msg string, payload uintptr, err error) {
	switch f.state {
	case Pending:
		return 0, "", 0, ESTATE
	case Cancelled:
		return 0, "", 0, ECANCELLED
	}
	f.retrieved = true
	return f.excCode, f.excMsg, f.payload, nil
}

// endedCancelled reports whether the future ended in a cancellation: it was
// cancelled, or failed with ECANCELLED (asyncio: its result() raises
// CancelledError either way). Waiters decide with this, never with the
// state alone, so a gather that ended with ECANCELLED cancels what awaits it.
func (f *Future) endedCancelled() bool {
	return f.state == Cancelled || (f.state == Finished && f.excCode == int(ECANCELLED))
}

// CancelMessage returns the message given to Cancel.
func (f *Future) CancelMessage() string { return f.cancelMsg }

// AddDoneCallback schedules fn(f) with call_soon once the future is done (at
// once if it already is) and returns a token for RemoveDoneCallbackToken.
func (f *Future) AddDoneCallback(fn func(*Future)) uint64 {
	return f.addCallback(doneCallback{gofn: fn})
}

// AddDoneCallbackHost is AddDoneCallback for a host callback, called as
// fn(f.Tag, arg).
func (f *Future) AddDoneCallbackHost(fn, arg uintptr) uint64 {
	return f.addCallback(doneCallback{call: HostCall{Fn: fn, Arg: arg, ID: f.Tag}})
}

func (f *Future) addCallback(cb doneCallback) uint64 {
	f.nextToken++
	cb.token = f.nextToken
	if f.state != Pending {
		f.schedule(cb)
	} else {
		f.callbacks = append(f.callbacks, cb)
	}
	return cb.token
}

// RemoveDoneCallbackHost removes every registration of (fn, arg) not yet
// scheduled and returns how many it removed.
func (f *Future) RemoveDoneCallbackHost(fn, arg uintptr) int {
	return f.removeIf(func(cb *doneCallback) bool {
		return cb.gofn == nil && cb.call.Fn == fn && cb.call.Arg == arg
	})
}

// RemoveDoneCallbackToken removes the registration with this token.
func (f *Future) RemoveDoneCallbackToken(token uint64) int {
	return f.removeIf(func(cb *doneCallback) bool { return cb.token == token })
}

func (f *Future) removeIf(match func(*doneCallback) bool) int {
	kept := f.callbacks[:0]
	for i := range f.callbacks {
		if !match(&f.callbacks[i]) {
			kept = append(kept, f.callbacks[i])
		}
	}
	n := len(f.callbacks) - len(kept)
	for i := len(kept); i < len(f.callbacks); i++ {
		f.callbacks[i] = doneCallback{}
	}
	f.callbacks = kept
	return n
}

func (f *Future) scheduleCallbacks() {
	cbs := f.callbacks
	f.callbacks = nil
	for i := range cbs {
		f.schedule(cbs[i])
	}
}

func (f *Future) schedule(cb doneCallback) {
	l := f.loop
	if l.closed.Load() {
		return
	}
	h := l.newHandle()
	// The handle keeps the future (and its id) alive until the callback has
	// run or been dropped: unref releases h.fut.
	h.fut = f
	f.hold()
	if cb.gofn != nil {
		h.futfn = cb.gofn
	} else {
		cb.call.ID = f.Tag
		h.call = cb.call
	}
	l.ready.push(h)
}

// Retain adds a host reference.
func (f *Future) Retain() { f.refs++ }

// Release drops a host reference; with the last reference and hold gone,
// the future is disposed.
func (f *Future) Release() {
	if f.refs <= 0 {
		return
	}
	f.refs--
	f.maybeDispose()
}

// hold and unhold count the loop's own references.
func (f *Future) hold() { f.holds++ }

func (f *Future) unhold() {
	if f.holds <= 0 {
		return
	}
	f.holds--
	f.maybeDispose()
}

func (f *Future) maybeDispose() {
	if f.refs != 0 || f.holds != 0 || f.disposed {
		return
	}
	f.disposed = true
	f.loop.removeLive(f)
	if f.excCode != 0 && !f.retrieved {
		what := "Future exception was never retrieved"
		if f.Task() != nil {
			what = "Task exception was never retrieved"
		}
		f.loop.CallExceptionHandler(&ErrorContext{Message: what + ": " + f.excMsg, Code: f.excCode, Future: f})
	}
	if f.free != nil {
		v := f.result
		if f.excCode != 0 {
			v = f.payload
		}
		free := f.free
		f.free = nil
		free(v)
	}
	f.callbacks = nil
	if r := f.role; r != nil {
		r.disposed(f)
	}
	if h := f.loop.host; h != nil {
		h.FutureDisposed(f)
	}
}

// SetFreeFunc sets how a pending executor future's result will be freed
// (the job returns a host value, e.g. getaddrinfo's list); it does nothing
// once the future is done.
func (f *Future) SetFreeFunc(free FreeFunc) {
	if f.state == Pending {
		f.free = free
	}
}

// DetachFree hands ownership of the result or payload to the caller: the
// future will no longer free it.
func (f *Future) DetachFree() { f.free = nil }
