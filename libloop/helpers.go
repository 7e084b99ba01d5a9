// SPDX-License-Identifier: MIT

package libloop

import (
	"github.com/libloop/libloop/internal/timers"
)

// RunUntilComplete runs the loop until f is done, as asyncio's
// run_until_complete: a done callback stops the loop, so the iteration in
// which f completes finishes first. ESTOPPED if the loop stopped before f
// was done.
func (l *Loop) RunUntilComplete(f *Future) error {
	if f.loop != l {
		return EINVAL
	}
	if err := l.enterRun(); err != nil {
		return err
	}
	token := f.AddDoneCallback(func(*Future) { l.stopping = true })
	defer l.leaveRun()
	l.startRunClock()
	defer l.stopRunClock()
	defer f.RemoveDoneCallbackToken(token)
	defer l.allowChain()()
	if err := l.run(false, false); err != nil {
		return err
	}
	if !f.Done() {
		return ESTOPPED
	}
	return nil
}

// Sleep returns a future that finishes (with value 0) after delay seconds;
// cancelling it cancels its timer. A delay <= 0 returns a future that is
// already finished, so awaiting it resumes a task in the next iteration, as
// asyncio.sleep(0) does.
func (l *Loop) Sleep(delay float64) (*Future, error) {
	if timers.Refused(delay) {
		return nil, EINVAL
	}
	f, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	if delay <= 0 {
		f.SetResult(0, nil)
		return f, nil
	}
	d, _ := deadlineAfter(delay)
	h := l.scheduleNs(d, nil, ForeignCall{})
	h.futfn, h.fut = sleepFired, f
	f.hold() // the timer's: dropped when the handle is recycled
	h.refs++ // f.sleepTimer's: dropped when it fires or f is cancelled
	f.sleepTimer = h
	return f, nil
}

// sleepFired is a Sleep future's timer callback.
func sleepFired(f *Future) {
	if h := f.sleepTimer; h != nil {
		f.sleepTimer = nil
		f.loop.unref(h)
	}
	if !f.Done() {
		f.SetResult(0, nil)
	}
}

// Gather returns a future that finishes when every child has. Its result is
// the number of children; the host reads each child. Without
// returnExceptions it fails as soon as a child fails (with that child's code
// and message) or is cancelled (ECANCELLED). Cancelling it cancels the
// children; once they are done it fails with ECANCELLED. Like asyncio's
// _GatheringFuture it never enters the Cancelled state: waiters must treat
// "failed with ECANCELLED" as a cancellation (endedCancelled).
func (l *Loop) Gather(children []*Future, returnExceptions bool) (*Future, error) {
	for _, c := range children {
		if c == nil || c.loop != l {
			return nil, EINVAL
		}
	}
	outer, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	g := &gathering{outer: outer, children: children, returnExc: returnExceptions}
	outer.gather = g
	if len(children) == 0 {
		outer.SetResult(0, nil)
		return outer, nil
	}
	outer.hold()             // released when the last child is done
	childDone := g.childDone // one method value for all children
	for _, c := range children {
		c.hold()
		c.AddDoneCallback(childDone)
	}
	return outer, nil
}

// gathering is the state behind a Gather future (asyncio's _GatheringFuture).
type gathering struct {
	outer           *Future
	children        []*Future
	finished        int
	returnExc       bool
	cancelRequested bool
}

func (g *gathering) childDone(c *Future) {
	g.finished++
	outer := g.outer
	defer c.unhold()
	last := g.finished == len(g.children)
	if last {
		defer outer.unhold()
	}
	if c.state == Finished {
		// asyncio's gather calls exception() on every finished child, in
		// each branch (failing, collecting results, or already done), so
		// no child's exception is reported "never retrieved".
		c.retrieved = true
	}
	if outer.Done() {
		return
	}
	if !g.returnExc {
		if c.state == Cancelled {
			outer.fail(int(ECANCELLED), "a gathered future was cancelled", 0, nil)
			return
		}
		if c.excCode != 0 {
			// Any code, ECANCELLED included: a child that is itself a
			// gather ended cancelled that way (asyncio passes the child's
			// CancelledError on as the outer exception).
			outer.fail(c.excCode, c.excMsg, 0, nil)
			return
		}
	}
	if !last {
		return
	}
	if g.cancelRequested {
		outer.fail(int(ECANCELLED), "gather was cancelled", 0, nil)
		return
	}
	outer.SetResult(uintptr(len(g.children)), nil)
}

// cancel is _GatheringFuture.cancel: cancel the children; report whether
// any was cancelled.
func (g *gathering) cancel(msg string) bool {
	if g.outer.Done() {
		return false
	}
	ret := false
	for _, c := range g.children {
		if c.Cancel(msg) {
			ret = true
		}
	}
	if ret {
		g.cancelRequested = true
	}
	return ret
}

// CancelAllTasks cancels every pending task and runs the loop until they
// are all done, as asyncio.run does before closing. A task that ends with
// an exception other than cancellation is reported to the exception handler.
func (l *Loop) CancelAllTasks() {
	tasks := l.AllTasks()
	if len(tasks) == 0 {
		return
	}
	futs := make([]*Future, len(tasks))
	for i, t := range tasks {
		t.Cancel("")
		futs[i] = &t.Future
	}
	g, err := l.Gather(futs, true)
	if err != nil {
		return
	}
	l.RunUntilComplete(g)
	g.Release()
	for _, t := range tasks {
		if t.state == Finished && t.excCode != 0 {
			t.retrieved = true
			l.CallExceptionHandler(&ErrorContext{
				Message: "unhandled exception during shutdown: " + t.excMsg,
				Code:    t.excCode, Future: &t.Future,
			})
		}
	}
}
