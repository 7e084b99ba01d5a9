// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"errors"
	"fmt"
)

// TypedFuture is a Future whose result is a Go value of type T and whose
// failure is a Go error, as the core's TypedFuture. The value stays on
// the Go side (see typedvalues.go: the C future's result word is a key
// into a Go table, freed when the library frees the value), so a program
// never converts through uintptr and no Go pointer crosses into the
// library. The untyped Future underneath (Future()) is what Task.Await,
// Gather and WaitFor take.
//
// Its methods belong to the loop's thread, except Wait, which any other
// goroutine may call while the loop runs.
type TypedFuture[T any] struct {
	fut *Future
}

// NewTypedFuture creates a pending typed future on l; the caller holds
// its reference (Release).
func NewTypedFuture[T any](l *Loop) (*TypedFuture[T], error) {
	if l == nil {
		return nil, EINVAL
	}
	f, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	return &TypedFuture[T]{fut: f}, nil
}

// Future returns the untyped future underneath, to await it in a task,
// gather it or add done callbacks; its result word is the table key.
func (tf *TypedFuture[T]) Future() *Future { return tf.fut }

// Loop returns the loop the future belongs to.
func (tf *TypedFuture[T]) Loop() *Loop { return tf.fut.loop }

// Done reports whether the future is no longer pending.
func (tf *TypedFuture[T]) Done() bool { return tf.fut.Done() }

// Cancel cancels the future and reports whether it did (false if it was
// done already).
func (tf *TypedFuture[T]) Cancel(msg string) (bool, error) { return tf.fut.Cancel(msg) }

// Release drops the caller's reference; the value's table entry goes
// once the loop is done with the future too.
func (tf *TypedFuture[T]) Release() error { return tf.fut.Release() }

// SetResult finishes the future with v; ESTATE if it is done already.
func (tf *TypedFuture[T]) SetResult(v T) error {
	return setTyped(tf.fut, &typedEntry{fid: tf.fut.id, val: v}, func(key uintptr) error {
		return tf.fut.SetResult(key, freeTyped)
	})
}

// SetError fails the future with err (EINVAL for nil); Result returns err
// itself, so errors.Is and errors.As see it. The C future's code is
// err's: an Error's own (also wrapped), ETIMEDOUT for
// context.DeadlineExceeded, a syscall.Errno's negative errno, else
// EINVAL; its message is err.Error(). A context.Canceled (or ECANCELLED)
// cancels the future instead, as asyncio's set_exception refuses a
// CancelledError.
func (tf *TypedFuture[T]) SetError(err error) error {
	if err == nil {
		return EINVAL
	}
	code := typedErrorCode(err)
	if code == int(ECANCELLED) {
		if tf.fut.Done() {
			return ESTATE
		}
		_, cerr := tf.fut.Cancel(err.Error())
		return cerr
	}
	return setTyped(tf.fut, &typedEntry{fid: tf.fut.id, err: err}, func(key uintptr) error {
		return tf.fut.SetException(code, err.Error(), key, freeTyped)
	})
}

// setTyped stores e and makes call with its key; the entry goes again if
// the call fails (the free func given with it is never called then).
func setTyped(f *Future, e *typedEntry, call func(key uintptr) error) error {
	key := putTyped(e)
	if err := call(key); err != nil {
		freeTyped(key)
		return err
	}
	return nil
}

// typedErrorCode is the C code a Go error fails a typed future with:
// the executor's errorCode, after the context errors' own codes.
func typedErrorCode(err error) int {
	var e Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, context.Canceled):
			return int(ECANCELLED)
		case errors.Is(err, context.DeadlineExceeded):
			return int(ETIMEDOUT)
		}
	}
	return errorCode(err)
}

// Result returns the value or the error: ESTATE while pending; ECANCELLED
// if cancelled (errors.Is matches it with context.Canceled); the error
// given to SetError (or TypedTask.Raise) as is; for a failure set by
// other code (the raw layer, a C host, the library: WaitFor's ETIMEDOUT)
// a *FutureError carrying its code and message.
func (tf *TypedFuture[T]) Result() (T, error) { return typedResult[T](tf.fut) }

// typedResult reads f's outcome as a T (loop thread).
func typedResult[T any](f *Future) (T, error) {
	var zero T
	key, err := f.Result()
	if err == nil {
		e := getTyped(key, f.id)
		if e == nil {
			return zero, fmt.Errorf("libloop: future %d holds no typed value (was its result set through Future?): %w", f.id, EINVAL)
		}
		v, ok := e.val.(T)
		if !ok && e.val != nil {
			return zero, fmt.Errorf("libloop: future %d holds a %T, not a %T: %w", f.id, e.val, zero, EINVAL)
		}
		return v, nil
	}
	var code Error
	if !errors.As(err, &code) || code == ESTATE || code == ECANCELLED {
		return zero, err
	}
	fe, xerr := f.Exception()
	if xerr != nil || fe == nil {
		return zero, err
	}
	if e := getTyped(fe.Payload, f.id); e != nil && e.err != nil {
		return zero, e.err
	}
	return zero, fe
}

// Wait blocks until the future is done and returns Result, from a
// goroutine other than the one running the loop (as Future.Wait: when ctx
// is done first the future is cancelled and ctx.Err() returned; ECLOSED
// if the loop closes first). The caller keeps its reference until Wait
// returns.
func (tf *TypedFuture[T]) Wait(ctx context.Context) (T, error) {
	return typedWait[T](ctx, tf.fut)
}

// typedWait waits for f from another goroutine and reads it as a T on
// the loop thread, where the library's calls belong.
func typedWait[T any](ctx context.Context, f *Future) (T, error) {
	var v T
	var rerr error
	if err := f.wait(ctx, func(f *Future) { v, rerr = typedResult[T](f) }); err != nil {
		var zero T
		return zero, err
	}
	return v, rerr
}

// Await waits for tf from a goroutine other than the loop's: tf.Wait(ctx).
func Await[T any](ctx context.Context, tf *TypedFuture[T]) (T, error) { return tf.Wait(ctx) }
