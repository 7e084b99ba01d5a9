// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"fmt"
	"os"
)

// Go runs fn on the loop's executor and returns a typed future for its
// outcome, set on the loop thread, as the core's Go. fn's context is
// cancelled when ctx is done or the future is cancelled, and released
// once fn returns; a ctx that is done fails the future with ctx.Err() (a
// cancellation cancels it) at once, without waiting for fn. A panic in fn
// is written to stderr and fails the future with an error matching
// EINVAL. Call it on the loop thread; wait with Wait from anywhere else.
// ESTATE after ShutdownDefaultExecutor, ECLOSED on a closed loop.
//
// fn runs on a worker thread of the library's default executor (QueueWork),
// not on a goroutine of its own, as the core's Go runs on the core's
// executor: SetExecutorWorkers bounds it, ShutdownDefaultExecutor waits
// for it, and a C host sharing the loop sees the same pool. Each job
// enters Go through purego's callback on that worker thread, which the Go
// runtime adopts for the call. The value never crosses into the library:
// it reaches the loop thread through a Go channel, and the future holds
// its typed-table key.
func Go[T any](ctx context.Context, l *Loop, fn func(context.Context) (T, error)) (*TypedFuture[T], error) {
	if ctx == nil || l == nil || fn == nil {
		return nil, EINVAL
	}
	tf, err := NewTypedFuture[T](l)
	if err != nil {
		return nil, err
	}
	jobCtx, cancel := context.WithCancel(ctx)
	type outcome struct {
		v   T
		err error
	}
	out := make(chan outcome, 1) // the worker's send happens before after's receive
	err = l.QueueWork(func() {
		defer cancel()
		v, err := runTyped(jobCtx, fn)
		out <- outcome{v, err}
	}, func() {
		o := <-out
		if tf.Done() {
			return // cancelled meanwhile: the outcome is dropped
		}
		if o.err != nil {
			tf.SetError(o.err)
		} else {
			tf.SetResult(o.v)
		}
	})
	if err != nil {
		cancel()
		tf.Release()
		return nil, err
	}
	if err := bindContext(ctx, tf, cancel); err != nil {
		tf.Cancel("") // the work's outcome is dropped
		tf.Release()
		return nil, err
	}
	return tf, nil
}

// runTyped calls fn; a panic must not unwind through the library's frames:
// it is written to stderr and returned as an error matching EINVAL.
func runTyped[T any](ctx context.Context, fn func(context.Context) (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "libloop: panic in Go's func: %v\n", r)
			err = fmt.Errorf("libloop: panic in Go's func: %v: %w", r, EINVAL)
		}
	}()
	return fn(ctx)
}

// bindContext ties tf to ctx (loop thread): once ctx is done, tf fails
// with ctx.Err() (context.Canceled cancels it, see SetError) unless it is
// done already. When tf is done, for any reason, the tie ends and ended
// (if not nil) runs on the loop thread: it stops what tf was waiting for.
func bindContext[T any](ctx context.Context, tf *TypedFuture[T], ended func()) error {
	l := tf.fut.loop
	stop := context.AfterFunc(ctx, func() {
		l.CallSoonThreadsafe(func() {
			if !tf.Done() {
				tf.SetError(ctx.Err())
			}
		})
	})
	_, err := tf.fut.AddDoneCallback(func(*Future) {
		stop()
		if ended != nil {
			ended()
		}
	})
	if err != nil {
		stop()
	}
	return err
}
