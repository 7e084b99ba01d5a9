// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"strings"
	"testing"
)

// Cancellation through every composition of the helpers: a leaf future
// (a plain future, a sleep, an executor job, a task) wrapped by up to three
// levels of gather, gather(return_exceptions), wait_for and a task awaiting
// the level below, with the cancellation made at each level in turn. The
// outermost future must always complete (a hang is the bug this guards),
// with asyncio's outcome: cancellation travels up through gather, wait_for
// and await, and stops at gather(return_exceptions=True) below its
// own level; cancelling a wrapper ends that wrapper cancelled.

// leafKind is the innermost future of a composition.
type leafKind string

const (
	leafFuture   leafKind = "future"
	leafSleep    leafKind = "sleep"
	leafExecutor leafKind = "executor" // "cancelled" = the job fails with ECANCELLED
	leafTask     leafKind = "task"     // a task awaiting a long sleep
)

// wrapKind is one level around the future below it.
type wrapKind string

const (
	wrapGather   wrapKind = "gather"
	wrapGatherRE wrapKind = "gatherRE" // return_exceptions
	wrapWaitFor  wrapKind = "waitfor"
	wrapTask     wrapKind = "task" // awaits, then re-raises the error it reads
)

// composition builds one case on a fresh loop.
type composition struct {
	t       *testing.T
	l       *Loop
	levels  []*Future // levels[0] is the leaf, levels[i] the i-th wrapper
	release chan int  // an executor leaf's job returns this code
}

func (c *composition) leaf(kind leafKind) {
	l := c.l
	var f *Future
	var err error
	switch kind {
	case leafFuture:
		f, err = l.NewFuture()
	case leafSleep:
		f, err = l.Sleep(60)
	case leafExecutor:
		rel := c.release
		f, err = l.RunInExecutor(func() (uintptr, int) { return 5, <-rel })
	case leafTask:
		var tk *Task
		tk, err = l.NewTask(func(tk *Task) {
			if tk.Awaited() == nil {
				tk.Sleep(60)
				return
			}
			if tk.MustRaiseCancel() {
				tk.Raise(int(ECANCELLED), "", 0, nil)
				return
			}
			tk.Return(5, nil)
		})
		if err == nil {
			f = &tk.Future
		}
	}
	if err != nil {
		c.t.Fatal(err)
	}
	c.levels = append(c.levels, f)
}

func (c *composition) wrap(kind wrapKind) {
	l, below := c.l, c.levels[len(c.levels)-1]
	var f *Future
	var err error
	switch kind {
	case wrapGather, wrapGatherRE:
		f, err = l.Gather([]*Future{below}, kind == wrapGatherRE)
	case wrapWaitFor:
		f, err = l.WaitFor(below, 3600)
	case wrapTask:
		var tk *Task
		tk, err = l.NewTask(func(tk *Task) {
			if tk.Awaited() == nil {
				tk.Await(below)
				return
			}
			// A host coroutine: a cancellation thrown in, or an error read
			// from the awaited future, escapes the coroutine.
			if tk.MustRaiseCancel() {
				tk.Raise(int(ECANCELLED), "", 0, nil)
				return
			}
			v, err := below.Result()
			if err != nil {
				tk.Raise(int(err.(Errno)), "re-raised", 0, nil)
				return
			}
			tk.Return(v, nil)
		})
		if err == nil {
			f = &tk.Future
		}
	}
	if err != nil {
		c.t.Fatal(err)
	}
	c.levels = append(c.levels, f)
}

// cancelAt cancels level k (the leaf for k == 0).
func (c *composition) cancelAt(k int, leaf leafKind) {
	if k == 0 && leaf == leafExecutor {
		c.release <- int(ECANCELLED)
		return
	}
	if !c.levels[k].Cancel("by test") {
		c.t.Fatalf("level %d: Cancel reported false on a pending future", k)
	}
}

// wantCancelled is asyncio's answer: does the outermost future end in a
// cancellation (Result ECANCELLED) when level k is cancelled?
func wantCancelled(wraps []wrapKind, k int) bool {
	cancelled := k == 0
	for i, w := range wraps {
		switch {
		case i+1 == k:
			cancelled = true
		case w == wrapGatherRE:
			cancelled = false // the child's CancelledError is a result
		}
	}
	return cancelled
}

// compositions lists every wrapper chain of 1 to maxDepth levels.
func compositions(maxDepth int) [][]wrapKind {
	kinds := []wrapKind{wrapGather, wrapGatherRE, wrapWaitFor, wrapTask}
	out := [][]wrapKind{{}}
	var all [][]wrapKind
	for d := 1; d <= maxDepth; d++ {
		var next [][]wrapKind
		for _, prefix := range out {
			for _, k := range kinds {
				chain := append(append([]wrapKind{}, prefix...), k)
				next = append(next, chain)
			}
		}
		all = append(all, next...)
		out = next
	}
	return all
}

func TestCancellationThroughEveryComposition(t *testing.T) {
	leaves := []leafKind{leafFuture, leafSleep, leafExecutor, leafTask}
	for _, leaf := range leaves {
		for _, wraps := range compositions(3) {
			for k := 0; k <= len(wraps); k++ {
				name := fmt.Sprintf("%s/cancel@%d", chainName(leaf, wraps), k)
				t.Run(name, func(t *testing.T) { runComposition(t, leaf, wraps, k) })
			}
		}
	}
}

// chainName spells a composition outermost first: "task(gather(sleep))".
func chainName(leaf leafKind, wraps []wrapKind) string {
	name := string(leaf)
	for _, w := range wraps {
		name = string(w) + "(" + name + ")"
	}
	return name
}

// runComposition builds leaf wrapped by wraps, cancels level k, and checks
// that the outermost future completes with asyncio's outcome.
func runComposition(t *testing.T, leaf leafKind, wraps []wrapKind, k int) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	c := &composition{t: t, l: l, release: make(chan int, 1)}
	var reports []string
	l.SetExceptionHandler(func(ctx *ErrorContext) { reports = append(reports, ctx.Message) })
	defer func() {
		select { // let a still-blocked executor job finish
		case c.release <- 0:
		default:
		}
		for _, f := range c.levels {
			f.Release()
		}
		l.Close()
		// gather, wait_for and await retrieve what they pass on, as
		// asyncio's do: no "exception was never retrieved".
		if len(reports) != 0 {
			t.Errorf("reports %q", reports)
		}
	}()
	c.leaf(leaf)
	for _, w := range wraps {
		c.wrap(w)
	}
	// Let every task reach its await before cancelling.
	for i := 0; i < 3; i++ {
		l.RunOnce(true)
	}
	c.cancelAt(k, leaf)
	outer := c.levels[len(c.levels)-1]
	guard, _ := l.CallLater(2, func() { l.Stop() })
	defer guard.Cancel()
	if err := l.RunUntilComplete(outer); err != nil {
		t.Fatalf("outermost future never completed: %v (levels: %s)", err, c.states())
	}
	_, err = outer.Result()
	if wantCancelled(wraps, k) {
		if err != ECANCELLED {
			t.Fatalf("outermost result %v, want ECANCELLED (levels: %s)", err, c.states())
		}
	} else if err != nil {
		t.Fatalf("outermost result %v, want a result (levels: %s)", err, c.states())
	}
	// The levels below settle in later iterations (cancelling a wrapper
	// cancels what it wraps), as a program goes on running.
	for i := 0; i < 6; i++ {
		l.RunOnce(true)
	}
	for i, f := range c.levels {
		if !f.Done() {
			t.Fatalf("level %d still pending (levels: %s)", i, c.states())
		}
	}
}

// states describes each level's outcome, for failure messages.
func (c *composition) states() string {
	var parts []string
	for i, f := range c.levels {
		_, err := f.Result()
		parts = append(parts, fmt.Sprintf("%d:%v/%v", i, f.State(), err))
	}
	return strings.Join(parts, " ")
}

// asyncio's gather never ends in the cancelled state: a cancelled child, or
// a cancelled gather, makes it fail with CancelledError, which a gather
// around it passes on as its own failure (no hang, same code).
func TestNestedGatherEndsWithCancelledError(t *testing.T) {
	l := newTestLoop(t)
	leaf, _ := l.NewFuture()
	inner, _ := l.Gather([]*Future{leaf}, false)
	outer, _ := l.Gather([]*Future{inner}, false)
	leaf.Cancel("")
	guard, _ := l.CallLater(10, func() { l.Stop() })
	defer guard.Cancel()
	if err := l.RunUntilComplete(outer); err != nil {
		t.Fatalf("outer gather: %v", err)
	}
	for name, g := range map[string]*Future{"inner": inner, "outer": outer} {
		if _, err := g.Result(); g.State() != Finished || err != ECANCELLED {
			t.Fatalf("%s gather: state %v err %v, want Finished/ECANCELLED", name, g.State(), err)
		}
	}
	// A task woken by a future that failed with ECANCELLED must throw a
	// cancellation in, as asyncio's result() raises CancelledError there.
	raised := false
	task, _ := l.NewTask(func(tk *Task) {
		if tk.Awaited() == nil {
			tk.Await(outer)
			return
		}
		raised = tk.MustRaiseCancel()
		tk.Raise(int(ECANCELLED), "", 0, nil)
	})
	if err := l.RunUntilComplete(&task.Future); err != nil || !raised || task.State() != Cancelled {
		t.Fatalf("awaiting task: run %v, must raise %v, state %v", err, raised, task.State())
	}
}

// wait_for with a timeout around every composition: the timeout cancels the
// chain, which ends in a cancellation at the top (a cancelled gather fails
// with ECANCELLED rather than ending cancelled), and wait_for must turn that
// into ETIMEDOUT, as asyncio turns the CancelledError into TimeoutError.
func TestWaitForTimeoutOverEveryComposition(t *testing.T) {
	for _, leaf := range []leafKind{leafFuture, leafSleep, leafExecutor, leafTask} {
		for _, wraps := range compositions(2) {
			t.Run(chainName(leaf, wraps), func(t *testing.T) {
				l, err := New()
				if err != nil {
					t.Fatal(err)
				}
				c := &composition{t: t, l: l, release: make(chan int, 1)}
				defer func() {
					c.release <- 0
					for _, f := range c.levels {
						f.Release()
					}
					l.Close()
				}()
				c.leaf(leaf)
				for _, w := range wraps {
					c.wrap(w)
				}
				w, err := l.WaitFor(c.levels[len(c.levels)-1], 0.005)
				if err != nil {
					t.Fatal(err)
				}
				c.levels = append(c.levels, w)
				guard, _ := l.CallLater(2, func() { l.Stop() })
				defer guard.Cancel()
				if err := l.RunUntilComplete(w); err != nil {
					t.Fatalf("wait_for never completed: %v (levels: %s)", err, c.states())
				}
				if _, err := w.Result(); err != ETIMEDOUT {
					t.Fatalf("wait_for result %v, want ETIMEDOUT (levels: %s)", err, c.states())
				}
			})
		}
	}
}
