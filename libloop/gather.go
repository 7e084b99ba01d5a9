// SPDX-License-Identifier: MIT

package libloop

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
	outer.role = g
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
func (g *gathering) cancel(_ *Future, msg string) bool {
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

func (g *gathering) disposed(*Future) {}
