// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/libloop/libloop/internal/timers"
)

// context.Context support. Everything here is a wrapper over the loop's
// thread-safe entry points (CallSoonThreadsafe, Wake, RunOnce): a context
// never reaches the loop's hot paths. A context's cancellation is turned
// into a posted call that cancels the future it guards, and a goroutine
// that waits for the loop selects on a channel closed by a done callback,
// the context and the loop's close signal; no goroutine is started per
// wait.

// Is makes the loop's codes match Go's context and deadline errors, so
// errors.Is(err, context.Canceled) holds for ECANCELLED and
// errors.Is(err, context.DeadlineExceeded) (and os.ErrDeadlineExceeded) for
// ETIMEDOUT.
func (e Errno) Is(target error) bool {
	switch e {
	case ECANCELLED:
		return target == context.Canceled
	case ETIMEDOUT:
		return target == context.DeadlineExceeded || target == os.ErrDeadlineExceeded
	}
	return false
}

// contextCode is the loop code for a context's error: ETIMEDOUT for a
// deadline, ECANCELLED for a cancellation.
func contextCode(err error) int {
	if errors.Is(err, context.DeadlineExceeded) {
		return int(ETIMEDOUT)
	}
	return int(ECANCELLED)
}

// closeSignal is a channel closed by Loop.Close, so that a goroutine
// waiting on the loop (Future.Wait, Conn) returns instead of blocking
// forever once the loop will never run again. Made on first use: a loop
// nobody waits on from another goroutine allocates none.
type closeSignal struct {
	mu     sync.Mutex
	ch     chan struct{}
	closed bool
}

func (s *closeSignal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
		if s.closed {
			close(s.ch)
		}
	}
	return s.ch
}

func (s *closeSignal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		if s.ch != nil {
			close(s.ch)
		}
	}
}

// RunUntilCompleteContext is RunUntilComplete bounded by ctx: once ctx is
// done f is cancelled (a task gets its cancellation thrown in and may
// clean up) and the loop runs on until f is done. It returns ctx.Err() if
// f ended cancelled after ctx was done, nil if f finished anyway, and
// RunUntilComplete's errors otherwise. Call it as RunUntilComplete, on the
// thread that uses the loop.
func (l *Loop) RunUntilCompleteContext(ctx context.Context, f *Future) error {
	if ctx == nil {
		return EINVAL
	}
	if err := l.runUntil(f, func() func() { return l.cancelWhenDone(ctx, f) }); err != nil {
		return err
	}
	if f.endedCancelled() && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// cancelWhenDone arranges for f to be cancelled on the loop thread once
// ctx is done, and returns the function that ends the arrangement (on the
// loop thread). context.AfterFunc runs its function on a goroutine of its
// own that ends at once: it only posts.
func (l *Loop) cancelWhenDone(ctx context.Context, f *Future) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	ended := false // loop thread only
	stopAfter := context.AfterFunc(ctx, func() {
		l.CallSoonThreadsafe(func() {
			if !ended {
				f.Cancel(ctx.Err().Error())
			}
		})
	})
	return func() {
		ended = true
		stopAfter()
	}
}

// rendezvous hands one outcome from the loop thread to a goroutine that
// waits for it. The waiter may give up (its context is done); an outcome
// that comes later is then not recorded, so the waiter's variables are
// never written after it returned.
type rendezvous struct {
	mu   sync.Mutex
	gone bool // the outcome was recorded or the waiter gave up
	done chan struct{}
}

func newRendezvous() *rendezvous { return &rendezvous{done: make(chan struct{})} }

// complete runs on the loop thread: record stores the outcome unless the
// waiter gave up. It reports whether record ran.
func (r *rendezvous) complete(record func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone {
		return false
	}
	r.gone = true
	record()
	close(r.done)
	return true
}

// abandon gives up waiting; it reports true if the outcome was recorded
// first (the waiter then takes it after all).
func (r *rendezvous) abandon() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone {
		return true
	}
	r.gone = true
	return false
}

// await posts start to the loop thread and waits until start's work
// completes r, ctx is done (abort, if not nil, is then posted to the loop
// thread and ctx.Err() returned) or the loop closes (ECLOSED).
//
// It never runs the loop itself: another goroutine must (RunForever). A
// waiter that ran iterations whenever the loop was idle was tried and
// dropped: it could take the loop between its owner's Stop and Close,
// making that Close fail with ERUNNING. The loop's own goroutine waits
// with RunUntilCompleteContext (or Run) instead; from one of the loop's
// callbacks await would wait on itself until ctx is done.
func (l *Loop) await(ctx context.Context, r *rendezvous, start, abort func()) error {
	if ctx == nil {
		return EINVAL
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.CallSoonThreadsafe(start); err != nil {
		return err
	}
	gaveUp := func(err error) error {
		if r.abandon() {
			return nil
		}
		if abort != nil && err != ECLOSED {
			l.CallSoonThreadsafe(abort)
		}
		return err
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return gaveUp(ctx.Err())
	case <-l.closeSig.wait():
		return gaveUp(ECLOSED)
	}
}

// Wait blocks until f is done and returns its Result. It may be called
// from any goroutine while another runs the loop: the loop thread
// registers the wait. When ctx is done first, f is cancelled (as asyncio
// cancels what a cancelled task awaits) and ctx.Err() is returned; ECLOSED
// if the loop closes first. The caller keeps its reference to f until Wait
// returns. The loop's own goroutine uses RunUntilCompleteContext instead.
func (f *Future) Wait(ctx context.Context) (uintptr, error) {
	var v uintptr
	var ferr error
	r, start, abort := newRendezvousFor(ctx, f, func() { v, ferr = f.Result() })
	err := f.loop.await(ctx, r, start, abort)
	if err != nil {
		return 0, err
	}
	return v, ferr
}

// newRendezvousFor returns await's arguments for waiting on f: start
// registers a done callback that records f's outcome, abort cancels f.
func newRendezvousFor(ctx context.Context, f *Future, record func()) (*rendezvous, func(), func()) {
	r := newRendezvous()
	start := func() {
		f.AddDoneCallback(func(*Future) { r.complete(record) })
	}
	abort := func() {
		if ctx.Err() != nil {
			f.Cancel(ctx.Err().Error())
		}
	}
	return r, start, abort
}

// WaitForContext is WaitFor bounded by ctx instead of a timeout: the
// returned future takes f's outcome unless ctx is done first; then f is
// cancelled and the future fails with ETIMEDOUT (ctx's deadline passed) or
// ends cancelled (ctx was cancelled). Call it on the loop thread.
func (l *Loop) WaitForContext(ctx context.Context, f *Future) (*Future, error) {
	if ctx == nil {
		return nil, EINVAL
	}
	timeout := 2 * timers.MaxDelay // never
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl).Seconds()
	}
	out, err := l.WaitFor(f, timeout)
	if err != nil {
		return nil, err
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			l.CallSoonThreadsafe(func() {
				if !out.Done() && errors.Is(ctx.Err(), context.Canceled) {
					out.Cancel(ctx.Err().Error())
				}
				// A deadline is the WaitFor timer's to report.
			})
		})
		out.AddDoneCallback(func(*Future) { stop() })
	}
	return out, nil
}
