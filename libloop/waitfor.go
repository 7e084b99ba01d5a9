// SPDX-License-Identifier: MIT

package libloop

import (
	"math"

	"github.com/libloop/libloop/internal/timers"
)

// WaitFor returns a future that takes f's outcome, unless timeout seconds
// pass first: then f is cancelled and the returned future fails with
// ETIMEDOUT once f is done (or takes f's result if f finished anyway). A
// negative or zero timeout times out at once; +Inf (or anything past ~100
// years) never does. Cancelling the returned future cancels f. A result
// value stays owned by f.
//
// With no timer, a returned future the host drops before f is done can no
// longer be observed: its link to f is cut (dropWaiter), so a long-lived f
// does not keep one record per WaitFor call (a million calls with a 1e10 s
// timeout, each released, kept ~500 MB until f was done).
func (l *Loop) WaitFor(f *Future, timeout float64) (*Future, error) {
	if f == nil || f.loop != l || math.IsNaN(timeout) {
		return nil, EINVAL
	}
	out, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	w := &waiter{loop: l, out: out, target: f}
	f.hold()
	w.token = f.AddDoneCallback(w.targetDone)
	out.AddDoneCallback(func(out *Future) {
		if out.state == Cancelled {
			f.Cancel(out.cancelMsg)
		}
	})
	switch {
	case timeout > timers.MaxDelay:
		// No timer: a timeout past ~100 years never fires (and CallLater
		// would refuse it after out and its callbacks were made).
		out.role = w // told when out is disposed
	case timeout <= 0:
		w.expire(f)
	default:
		w.timer, err = l.CallLater(timeout, func() { w.expire(f) })
		if err != nil {
			return nil, err
		}
		l.RetainHandle(w.timer)
	}
	return out, nil
}

// waiter links one WaitFor's target to its returned future.
type waiter struct {
	loop     *Loop
	out      *Future // nil once dropped
	target   *Future
	timer    *Handle
	token    uint64 // of targetDone among f's callbacks
	timedOut bool
}

// cancel: out cancels as any future; its done callback cancels f.
func (w *waiter) cancel(out *Future, msg string) bool { return out.cancelSelf(msg) }

// disposed: with no timer, out's disposal cuts its link to the target.
func (w *waiter) disposed(*Future) { w.loop.dropWaiter(w.target, w) }

func (w *waiter) expire(f *Future) {
	if !f.Done() {
		w.timedOut = true
		f.Cancel("")
	}
}

// targetDone is f's done callback: pass its outcome on to out.
func (w *waiter) targetDone(f *Future) {
	defer f.unhold()
	if f.state == Finished && f.excCode != 0 {
		// wait_for consumes f's outcome, even when out was cancelled
		// first and f then failed (a cancelled gather's ECANCELLED).
		f.retrieved = true
	}
	out := w.out
	if out == nil { // dropped, but not yet cut out of f's callbacks
		w.loop.forgetDropped(f, w.token)
		return
	}
	if w.timer != nil {
		w.timer.Cancel()
		w.loop.ReleaseHandle(w.timer)
	}
	if out.Done() {
		return
	}
	// endedCancelled, not the state: cancelling a gather on timeout makes
	// it fail with ECANCELLED, which is a timeout all the same (asyncio
	// turns the CancelledError from result() into TimeoutError).
	switch {
	case f.endedCancelled() && w.timedOut:
		out.fail(int(ETIMEDOUT), "timed out", 0, nil)
	case f.state == Cancelled:
		out.cancelSelf(f.cancelMsg)
	case f.excCode != 0:
		out.fail(f.excCode, f.excMsg, 0, nil)
	default:
		out.SetResult(f.result, nil)
	}
}

// dropWaiter runs when a timer-less WaitFor's future is disposed: its
// callback on a still-pending f is dead. Dead callbacks are removed in
// bulk once they are over half of f's callbacks (amortised O(1) per drop;
// f's callbacks keep their order), or all of them (so a target only dropped
// waiters held is disposed).
func (l *Loop) dropWaiter(f *Future, w *waiter) {
	if f.Done() || l.closed.Load() {
		return
	}
	w.out = nil
	if l.droppedWaits == nil {
		l.droppedWaits = make(map[*Future]map[uint64]struct{})
	}
	dead := l.droppedWaits[f]
	if dead == nil {
		dead = make(map[uint64]struct{})
		l.droppedWaits[f] = dead
	}
	dead[w.token] = struct{}{}
	if len(dead) != len(f.callbacks) && (len(dead) < 64 || 2*len(dead) < len(f.callbacks)) {
		return // cut out once they are every callback, or many and over half
	}
	delete(l.droppedWaits, f)
	n := f.removeIf(func(cb *doneCallback) bool {
		_, ok := dead[cb.token]
		return ok
	})
	f.Retain() // the unholds below must not dispose f halfway
	for i := 0; i < n; i++ {
		f.unhold()
	}
	f.Release()
}

// forgetDropped removes a dead callback's token once it has run.
func (l *Loop) forgetDropped(f *Future, token uint64) {
	if dead := l.droppedWaits[f]; dead != nil {
		delete(dead, token)
		if len(dead) == 0 {
			delete(l.droppedWaits, f)
		}
	}
}
