// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"sync"
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
	mu    sync.Mutex
	gone  bool
	done  chan struct{}
	value uintptr
	err   error
}

// complete records the outcome (loop thread) unless the waiter is gone.
func (w *waitOutcome) complete(v uintptr, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.gone {
		w.gone, w.value, w.err = true, v, err
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
	if ctx == nil {
		return 0, EINVAL
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l := f.loop
	w := &waitOutcome{done: make(chan struct{})}
	start := func() {
		_, err := f.AddDoneCallback(func(f *Future) { w.complete(f.Result()) })
		if err != nil {
			w.complete(0, err)
		}
	}
	if err := l.CallSoonThreadsafe(start); err != nil {
		return 0, err
	}
	select {
	case <-w.done:
		return w.value, w.err
	case <-ctx.Done():
		if w.abandon() {
			return w.value, w.err
		}
		err := ctx.Err()
		l.CallSoonThreadsafe(func() { f.Cancel(err.Error()) })
		return 0, err
	case <-l.closed:
		if w.abandon() {
			return w.value, w.err
		}
		return 0, ECLOSED
	}
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
