// SPDX-License-Identifier: MIT

package libloop

import "context"

// TypedTask is a Task that finishes with a Go value of type T or a Go
// error, as the core's TypedTask: its step calls the Task's Await, Yield
// or Sleep, or Return or Raise (these). The value is kept as a
// TypedFuture's is (see typedvalues.go).
type TypedTask[T any] struct {
	*Task
	raised error // the error given to Raise, for RunTyped (ll_run returns its code only)
}

// NewTypedTask creates a task running step, as Loop.NewTask, whose outcome
// is typed. The caller holds its reference (Release).
func NewTypedTask[T any](l *Loop, step func(t *TypedTask[T])) (*TypedTask[T], error) {
	if l == nil || step == nil {
		return nil, EINVAL
	}
	tt := &TypedTask[T]{}
	t, err := l.NewTask(func(*Task) { step(tt) })
	if err != nil {
		return nil, err
	}
	tt.Task = t
	return tt, nil
}

// Return finishes the task with v (inside a step only; ESTATE otherwise).
// If the task was cancelled during this step it ends cancelled and v is
// dropped.
func (tt *TypedTask[T]) Return(v T) error {
	return setTyped(&tt.Future, &typedEntry{fid: tt.id, val: v}, func(key uintptr) error {
		return tt.Task.Return(key, freeTyped)
	})
}

// Raise fails the task with err (EINVAL for nil), coded as
// TypedFuture.SetError codes it; Result returns err itself. A
// context.Canceled (or ECANCELLED) leaves the task cancelled, as a
// coroutine that lets CancelledError escape.
func (tt *TypedTask[T]) Raise(err error) error {
	if err == nil {
		return EINVAL
	}
	code := typedErrorCode(err)
	if code == int(ECANCELLED) {
		return tt.Task.Raise(code, err.Error(), 0, nil)
	}
	if err := setTyped(&tt.Future, &typedEntry{fid: tt.id, err: err}, func(key uintptr) error {
		return tt.Task.Raise(code, err.Error(), key, freeTyped)
	}); err != nil {
		return err
	}
	tt.raised = err
	return nil
}

// Typed returns the task as a typed future (the same future: Release
// either, once).
func (tt *TypedTask[T]) Typed() *TypedFuture[T] { return &TypedFuture[T]{fut: &tt.Future} }

// Result returns the task's value or error, as TypedFuture.Result.
func (tt *TypedTask[T]) Result() (T, error) { return typedResult[T](&tt.Future) }

// Wait waits for the task from another goroutine, as TypedFuture.Wait.
func (tt *TypedTask[T]) Wait(ctx context.Context) (T, error) {
	return typedWait[T](ctx, &tt.Future)
}

// RunTyped is Run (asyncio.run, ll_run) for a typed task: it runs main to
// completion on a loop of its own and returns its value, or the error
// given to Raise (ECANCELLED if it was cancelled, ERUNNING when a loop
// already runs on this thread). The value is taken out of the table: its
// ownership passes to the caller, as Run's.
func RunTyped[T any](main func(t *TypedTask[T])) (T, error) {
	var zero T
	if main == nil {
		return zero, EINVAL
	}
	tt := &TypedTask[T]{}
	key, err := Run(func(t *Task) {
		tt.Task = t
		main(tt)
	})
	if err != nil {
		if tt.raised != nil && errorCodeOf(err) == typedErrorCode(tt.raised) {
			return zero, tt.raised
		}
		return zero, err
	}
	if tt.Task == nil {
		return zero, EINVAL
	}
	e := getTyped(key, tt.id)
	if e == nil {
		return zero, EINVAL // the task returned through Task.Return, not TypedTask.Return
	}
	freeTyped(key) // taken: Run forgot the free func
	v, _ := e.val.(T)
	return v, nil
}

// errorCodeOf is the code of an Error (0 for other errors).
func errorCodeOf(err error) int {
	if e, ok := err.(Error); ok {
		return int(e)
	}
	return 0
}
