// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"errors"
	"net"
)

// TypedFuture is a Future whose result is a Go value of type T and whose
// failure is a Go error. The untyped Future stays the C ABI's (host words,
// error codes); a TypedFuture wraps one and keeps the Go value and error
// beside it, so a Go program never converts through uintptr. The wrapped
// Future (Future()) is what Task.Await, Gather and WaitFor take.
//
// Like the Future, its methods belong to the loop thread, except Wait,
// which any goroutine may call.
type TypedFuture[T any] struct {
	fut *Future
	val T
	// err is the Go error the future failed with (SetError, a Go func's
	// error, a context's), returned by Result as is so errors.Is and
	// errors.As see it; the Future itself holds its code and message.
	err error
}

// NewTypedFuture creates a pending typed future holding one reference
// for the caller (Release).
func NewTypedFuture[T any](l *Loop) (*TypedFuture[T], error) {
	f, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	return &TypedFuture[T]{fut: f}, nil
}

// Future returns the untyped future underneath, to await it in a task or
// gather it; its result value is always 0.
func (tf *TypedFuture[T]) Future() *Future { return tf.fut }

// Loop returns the loop the future belongs to.
func (tf *TypedFuture[T]) Loop() *Loop { return tf.fut.loop }

// Done reports whether the future is no longer pending.
func (tf *TypedFuture[T]) Done() bool { return tf.fut.Done() }

// Cancel cancels the future; false if it was already done.
func (tf *TypedFuture[T]) Cancel(msg string) bool { return tf.fut.Cancel(msg) }

// Release drops the caller's reference.
func (tf *TypedFuture[T]) Release() { tf.fut.Release() }

// SetResult finishes the future with v; ESTATE if it is already done.
func (tf *TypedFuture[T]) SetResult(v T) error {
	if tf.fut.Done() {
		return ESTATE
	}
	tf.val = v
	return tf.fut.SetResult(0, nil)
}

// SetError fails the future with err (EINVAL for nil). The future's code
// is err's (Code), ECANCELLED for context.Canceled and ETIMEDOUT for
// context.DeadlineExceeded; Result returns err itself.
func (tf *TypedFuture[T]) SetError(err error) error {
	if err == nil {
		return EINVAL
	}
	if tf.fut.Done() {
		return ESTATE
	}
	tf.err = err
	return tf.fut.fail(errorCode(err), err.Error(), 0, nil)
}

// errorCode is the future's code for a Go error: an Errno's own (also
// wrapped), a context error's, a failed name lookup's ENONAME, else Code's.
func errorCode(err error) int {
	var e Errno
	if errors.As(err, &e) {
		return int(e)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return int(ENONAME)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return contextCode(err)
	}
	return Code(err)
}

// Result returns the value, or the error: ESTATE while pending, the
// error the future failed with, and for a cancelled future ECANCELLED (or
// the context error that cancelled it), which errors.Is matches with
// context.Canceled.
func (tf *TypedFuture[T]) Result() (T, error) {
	var zero T
	if _, err := tf.fut.Result(); err != nil {
		if tf.err != nil && tf.fut.Done() {
			return zero, tf.err
		}
		return zero, err
	}
	return tf.val, nil
}

// Wait is Future.Wait for a typed future: from a goroutine other than the
// one running the loop, it blocks until the future is done and returns
// Result, or ctx.Err() after cancelling the future when ctx is done first.
func (tf *TypedFuture[T]) Wait(ctx context.Context) (T, error) {
	var v T
	var ferr error
	r, start, abort := newRendezvousFor(ctx, tf.fut, func() { v, ferr = tf.Result() })
	if err := tf.fut.loop.await(ctx, r, start, abort); err != nil {
		var zero T
		return zero, err
	}
	return v, ferr
}

// Await waits for tf from a goroutine other than the loop's: tf.Wait(ctx).
func Await[T any](ctx context.Context, tf *TypedFuture[T]) (T, error) { return tf.Wait(ctx) }

// Run runs tf's loop on the calling goroutine until tf is done, as
// asyncio.run runs a coroutine, and returns its Result: ctx.Err() if ctx
// ended it (RunUntilCompleteContext), ERUNNING if the loop is running
// already (use Wait from other goroutines).
func Run[T any](ctx context.Context, tf *TypedFuture[T]) (T, error) {
	if err := tf.fut.loop.RunUntilCompleteContext(ctx, tf.fut); err != nil {
		var zero T
		return zero, err
	}
	return tf.Result()
}

// Go runs fn on the loop's executor (RunInExecutor) and returns a typed
// future for its outcome, resolved on the loop thread. fn's context is
// cancelled when ctx is done or the future is cancelled, and released once
// the future is done; a ctx that is done cancels the future (its Result is
// then ctx.Err()). A panic in fn fails the future with EINVAL. Call it on
// the loop thread.
func Go[T any](ctx context.Context, l *Loop, fn func(context.Context) (T, error)) (*TypedFuture[T], error) {
	return goOn(ctx, l, l.RunInExecutor, fn)
}

// goOn runs fn through submit (the executor's or the resolver's) for Go
// and LookupHost.
func goOn[T any](ctx context.Context, l *Loop, submit func(WorkFunc) (*Future, error), fn func(context.Context) (T, error)) (*TypedFuture[T], error) {
	if ctx == nil || fn == nil {
		return nil, EINVAL
	}
	jobCtx, cancel := context.WithCancel(ctx)
	tf := &TypedFuture[T]{}
	// The worker writes val or err before its outcome is posted; the loop
	// thread reads them only after the delivery (the post queue's mutex
	// orders the two), and never once the future was cancelled.
	var jobErr error
	f, err := submit(func() (uintptr, int) {
		v, err := fn(jobCtx)
		if err != nil {
			jobErr = err
			return 0, errorCode(err)
		}
		tf.val = v
		return 0, 0
	})
	if err != nil {
		cancel()
		return nil, err
	}
	tf.fut = f
	stopAfter := context.AfterFunc(ctx, func() {
		l.CallSoonThreadsafe(func() {
			if !f.Done() {
				tf.err = ctx.Err()
				f.Cancel(ctx.Err().Error())
			}
		})
	})
	f.AddDoneCallback(func(f *Future) {
		stopAfter()
		cancel()
		if f.state == Finished && f.excCode != 0 && tf.err == nil {
			tf.err = jobErr
		}
	})
	return tf, nil
}

// TypedTask is a Task that finishes with a Go value or error: its step
// calls Await, Yield or Sleep (the Task's), or Return or Raise (these).
type TypedTask[T any] struct {
	*Task
	tf TypedFuture[T]
}

// NewTypedTask creates a task for step, as NewTask, whose outcome is
// typed. The caller holds one reference (Release).
func NewTypedTask[T any](l *Loop, step func(t *TypedTask[T])) (*TypedTask[T], error) {
	if step == nil {
		return nil, EINVAL
	}
	tt := &TypedTask[T]{}
	t, err := l.NewTask(func(*Task) { step(tt) })
	if err != nil {
		return nil, err
	}
	tt.Task, tt.tf.fut = t, &t.Future
	return tt, nil
}

// Return finishes the task with v (cancelled instead if it was cancelled
// during this step).
func (tt *TypedTask[T]) Return(v T) error {
	if !tt.canFinish() {
		return ESTATE
	}
	tt.tf.val = v
	return tt.Task.Return(0, nil)
}

// Raise fails the task with err; context.Canceled (or ECANCELLED) leaves
// it cancelled, as a coroutine that lets CancelledError escape.
func (tt *TypedTask[T]) Raise(err error) error {
	if err == nil {
		return EINVAL
	}
	if !tt.canFinish() {
		return ESTATE
	}
	code := errorCode(err)
	if code != int(ECANCELLED) {
		tt.tf.err = err
	}
	return tt.Task.Raise(code, err.Error(), 0, nil)
}

// canFinish reports whether Return or Raise may be called now (as
// Task.begin checks), so a refused call leaves the value alone.
func (tt *TypedTask[T]) canFinish() bool {
	t := tt.Task
	return t.stepping && t.outcome == stepNone && !t.Done()
}

// Typed returns the task's outcome as a typed future (the same future).
func (tt *TypedTask[T]) Typed() *TypedFuture[T] { return &tt.tf }

// Result returns the task's value or error, as TypedFuture.Result.
func (tt *TypedTask[T]) Result() (T, error) { return tt.tf.Result() }

// Wait waits for the task from any goroutine, as TypedFuture.Wait.
func (tt *TypedTask[T]) Wait(ctx context.Context) (T, error) { return tt.tf.Wait(ctx) }
