// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// RunUntilCompleteContext is RunUntilComplete bounded by ctx: once ctx is
// done, f is cancelled from the loop thread (a posted callback: the
// library's thread rules hold) and the run goes on until f is done. It
// returns ctx.Err() when f ended cancelled after ctx was done, nil when f
// finished anyway, and RunUntilComplete's errors otherwise.
func (l *Loop) RunUntilCompleteContext(ctx context.Context, f *Future) error {
	if ctx == nil || f == nil {
		return EINVAL
	}
	ended := false // the loop thread's, as the posted callback
	stop := context.AfterFunc(ctx, func() {
		l.CallSoonThreadsafe(func() {
			if !ended {
				f.Cancel(ctx.Err().Error())
			}
		})
	})
	err := l.RunUntilComplete(f)
	ended = true
	stop()
	if err != nil {
		return err
	}
	if st, serr := f.State(); serr == nil && st == Cancelled && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// waitOutcome hands a future's outcome from the loop thread to a goroutine
// in Wait. A waiter that gave up (its context done, the loop closed) is
// marked gone, so an outcome that comes later writes nothing it reads.
type waitOutcome struct {
	mu   sync.Mutex
	gone bool
	done chan struct{}
}

// complete runs record (loop thread), which writes the outcome where the
// waiter reads it, unless the waiter is gone.
func (w *waitOutcome) complete(record func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.gone {
		w.gone = true
		record()
		close(w.done)
	}
}

// abandon gives up; it reports true if the outcome came first.
func (w *waitOutcome) abandon() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone {
		return true
	}
	w.gone = true
	return false
}

// wait blocks until f is done, then has read(f) run on the loop thread (a
// done callback) before it returns nil: read records the outcome for the
// caller, which reads it once wait returns nil, and never otherwise. See
// Future.Wait for the rules and the errors.
func (f *Future) wait(ctx context.Context, read func(f *Future)) error {
	if ctx == nil {
		return EINVAL
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	l := f.loop
	if l == nil {
		return EINVAL // a future of Run's loop: wait inside its task
	}
	w := &waitOutcome{done: make(chan struct{})}
	var failed error // the registration's error, written under w's lock
	start := func() {
		_, err := f.AddDoneCallback(func(f *Future) { w.complete(func() { read(f) }) })
		if err != nil {
			w.complete(func() { failed = err })
		}
	}
	if err := l.CallSoonThreadsafe(start); err != nil {
		return err
	}
	select {
	case <-w.done:
		return failed
	case <-ctx.Done():
		if w.abandon() {
			return failed
		}
		err := ctx.Err()
		l.CallSoonThreadsafe(func() { f.Cancel(err.Error()) })
		return err
	case <-l.closed:
		if w.abandon() {
			return failed
		}
		return ECLOSED
	}
}

// Wait blocks until f is done and returns its Result, as the core's
// Future.Wait: from a goroutine other than the one running the loop (it
// must be running, e.g. go loop.RunForever()), since the library's calls
// belong to the loop's thread: the wait is registered there with
// CallSoonThreadsafe. When ctx is done first, f is cancelled on the loop
// thread and ctx.Err() is returned; ECLOSED if the loop closes first (or
// is closed already). The caller keeps its reference to f until Wait
// returns. Called from the loop's own thread it would wait on itself: use
// RunUntilCompleteContext there.
func (f *Future) Wait(ctx context.Context) (uintptr, error) {
	var v uintptr
	var rerr error
	if err := f.wait(ctx, func(f *Future) { v, rerr = f.Result() }); err != nil {
		return 0, err
	}
	return v, rerr
}

// Wait blocks until the connect completes and returns its transport, as
// Future.Wait (from a goroutine other than the loop's). When ctx is done
// first the connect's future is cancelled, which aborts the connect: its
// sockets are closed (a TLS handshake under way too), no transport is made
// and the protocol hears nothing; ctx.Err() is returned.
func (d *DialFuture) Wait(ctx context.Context) (*Transport, error) {
	if _, err := d.Future.Wait(ctx); err != nil {
		return nil, err
	}
	return d.t, nil
}

// WaitForContext is WaitFor bounded by ctx instead of a timeout, as the
// core's: the returned future takes f's outcome unless ctx is done first;
// then f is cancelled and the future fails with ETIMEDOUT (ctx's deadline
// passed: the library's own WaitFor timer, set to the deadline) or ends
// cancelled (ctx was cancelled: a posted cancel). errors.Is matches the
// first with context.DeadlineExceeded and the second with
// context.Canceled. Call it on the loop thread; Release the returned
// future when done.
func (l *Loop) WaitForContext(ctx context.Context, f *Future) (*Future, error) {
	if ctx == nil || f == nil {
		return nil, EINVAL
	}
	timeout := math.Inf(1)
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl).Seconds()
	}
	out, err := l.WaitForSeconds(f, timeout)
	if err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return out, nil
	}
	stop := context.AfterFunc(ctx, func() {
		l.CallSoonThreadsafe(func() {
			// A deadline is the WaitFor timer's to report.
			if errors.Is(ctx.Err(), context.Canceled) && !out.Done() {
				out.Cancel(ctx.Err().Error())
			}
		})
	})
	if _, err := out.AddDoneCallback(func(*Future) { stop() }); err != nil {
		stop()
		out.Release()
		return nil, err
	}
	return out, nil
}
