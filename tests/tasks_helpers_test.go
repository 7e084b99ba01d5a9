// SPDX-License-Identifier: MIT

package tests

import (
	"math"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// ll_gather and ll_wait_for.

func TestGatherAllSucceed(t *testing.T) {
	l := newLoop(t)
	a, b := newFuture(t, l), newFuture(t, l)
	s, _ := l.Sleep(time.Millisecond)
	defer s.Release()
	g, err := l.Gather([]*ll.Future{a, b, s}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	l.CallSoon(func() { a.SetResult(1, nil) })
	l.CallLater(2*time.Millisecond, func() { b.SetResult(2, nil) })
	runUntil(t, l, g, time.Second)
	if v, err := g.Result(); v != 3 || err != nil {
		t.Fatalf("gather result %d %v, want 3 (the number of children)", v, err)
	}
	for i, f := range []*ll.Future{a, b, s} {
		if st, _ := f.State(); st != ll.Finished {
			t.Fatalf("child %d %v", i, st)
		}
	}
	// No children: done at once with 0.
	empty, err := l.Gather(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Release()
	if v, err := empty.Result(); v != 0 || err != nil {
		t.Fatalf("empty gather: %d %v", v, err)
	}
	assertAlive(t, l.ID())
}

// Without return_exceptions the gather fails with the first failure, at
// once, leaving the other children alone.
func TestGatherFirstFailure(t *testing.T) {
	l := newLoop(t)
	a, b, c := newFuture(t, l), newFuture(t, l), newFuture(t, l)
	g, _ := l.Gather([]*ll.Future{a, b, c}, false)
	defer g.Release()
	b.SetException(-5, "b failed", 0, nil)
	runUntil(t, l, g, time.Second)
	exc, err := g.Exception()
	if err != nil || exc == nil || exc.Code != -5 || exc.Message != "b failed" {
		t.Fatalf("gather exception %+v %v", exc, err)
	}
	if a.Done() || c.Done() {
		t.Fatal("a failing child made the gather touch the others")
	}
	// A cancelled child fails it with LL_ECANCELLED.
	d := newFuture(t, l)
	g2, _ := l.Gather([]*ll.Future{d, a}, false)
	defer g2.Release()
	d.Cancel("")
	runUntil(t, l, g2, time.Second)
	_, err = g2.Result()
	expectErr(t, "gather with a cancelled child", err, cECANCELLED)
	a.SetResult(0, nil)
	c.SetResult(0, nil)
	l.RunOnce(true)
	assertAlive(t, l.ID())
}

// With return_exceptions it waits for every child, whatever its outcome.
func TestGatherReturnExceptions(t *testing.T) {
	l := newLoop(t)
	a, b, c := newFuture(t, l), newFuture(t, l), newFuture(t, l)
	g, _ := l.Gather([]*ll.Future{a, b, c}, true)
	defer g.Release()
	b.SetException(-5, "b failed", 0, nil)
	c.Cancel("")
	l.RunOnce(true)
	l.RunOnce(true)
	if g.Done() {
		t.Fatal("gather(return_exceptions) done before every child")
	}
	a.SetResult(10, nil)
	runUntil(t, l, g, time.Second)
	if v, err := g.Result(); v != 3 || err != nil {
		t.Fatalf("gather result %d %v", v, err)
	}
	_, err := b.Result()
	expectErr(t, "failed child", err, -5)
	_, err = c.Result()
	expectErr(t, "cancelled child", err, cECANCELLED)
}

// Cancelling a gather cancels its children, tasks included.
func TestGatherCancelCascades(t *testing.T) {
	for _, returnExc := range []bool{false, true} {
		l := newLoop(t)
		plain := newFuture(t, l)
		sleep, _ := l.Sleep(time.Hour)
		defer sleep.Release()
		var taskSawCancel bool
		task := stepper(t, l,
			func(tk *ll.Task) { tk.Await(sleep) },
			func(tk *ll.Task) {
				taskSawCancel = tk.MustRaiseCancel()
				tk.Raise(cECANCELLED, "", 0, nil)
			})
		g, _ := l.Gather([]*ll.Future{plain, &task.Future}, returnExc)
		defer g.Release()
		l.RunOnce(true)
		if ok, err := g.Cancel("enough"); !ok || err != nil {
			t.Fatalf("return_exceptions=%v: cancel = %v %v", returnExc, ok, err)
		}
		runUntil(t, l, g, time.Second)
		_, err := g.Result()
		expectErr(t, "cancelled gather", err, cECANCELLED)
		for name, f := range map[string]*ll.Future{"plain": plain, "task": &task.Future, "sleep": sleep} {
			if st, _ := f.State(); st != ll.Cancelled {
				t.Errorf("return_exceptions=%v: %s is %v, want cancelled", returnExc, name, st)
			}
		}
		if !taskSawCancel {
			t.Error("the task child did not have to raise cancellation")
		}
		if ok, _ := g.Cancel(""); ok {
			t.Error("cancelling a done gather reported true")
		}
	}
}

func TestWaitForTimeout(t *testing.T) {
	l := newLoop(t)
	inner := newFuture(t, l)
	start := time.Now()
	w, err := l.WaitFor(inner, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release()
	runUntil(t, l, w, 5*time.Second)
	if el := time.Since(start); el < 10*time.Millisecond {
		t.Fatalf("timed out after %v", el)
	}
	_, err = w.Result()
	expectErr(t, "wait_for result", err, cETIMEDOUT)
	if st, _ := inner.State(); st != ll.Cancelled {
		t.Fatalf("inner %v, want cancelled", st)
	}
	// timeout <= 0 on a pending future: at once.
	for _, tmo := range []float64{0, -1, math.Inf(-1)} {
		p := newFuture(t, l)
		w, _ := l.WaitForSeconds(p, tmo)
		if st, _ := p.State(); st != ll.Cancelled {
			t.Fatalf("timeout %g: inner %v right after wait_for", tmo, st)
		}
		runUntil(t, l, w, time.Second)
		_, err := w.Result()
		expectErr(t, "wait_for(timeout <= 0)", err, cETIMEDOUT)
		w.Release()
	}
	assertAlive(t, l.ID())
}

func TestWaitForSuccess(t *testing.T) {
	l := newLoop(t)
	log := &freeLog{}
	inner, _ := l.NewFuture()
	l.CallLater(5*time.Millisecond, func() { inner.SetResult(0x77, log.fn) })
	w, _ := l.WaitFor(inner, time.Second)
	runUntil(t, l, w, 5*time.Second)
	if v, err := w.Result(); v != 0x77 || err != nil {
		t.Fatalf("wait_for result %#x %v", v, err)
	}
	// The value stays owned by inner: freed once, when inner goes.
	release(t, w)
	l.RunOnce(true)
	if len(log.calls()) != 0 {
		t.Fatal("wait_for's future freed inner's value")
	}
	release(t, inner)
	l.RunOnce(true)
	if log.count(0x77) != 1 || len(log.calls()) != 1 {
		t.Fatalf("frees %#x", log.calls())
	}
	// A failure passes through; an infinite timeout never expires; a done
	// future with timeout 0 gives its outcome.
	f := newFuture(t, l)
	w2, _ := l.WaitForSeconds(f, math.Inf(1))
	defer w2.Release()
	l.CallLater(20*time.Millisecond, func() { f.SetException(-5, "io", 0, nil) })
	runUntil(t, l, w2, 5*time.Second)
	_, err := w2.Result()
	expectErr(t, "wait_for of a failed future", err, -5)
	d := newFuture(t, l)
	d.SetResult(8, nil)
	w3, _ := l.WaitForSeconds(d, 0)
	defer w3.Release()
	runUntil(t, l, w3, time.Second)
	if v, err := w3.Result(); v != 8 || err != nil {
		t.Fatalf("wait_for(done, 0) = %d %v", v, err)
	}
	// Cancelling the wait_for future cancels the inner one.
	e := newFuture(t, l)
	w4, _ := l.WaitFor(e, time.Hour)
	defer w4.Release()
	w4.Cancel("")
	l.RunOnce(true)
	l.RunOnce(true)
	if st, _ := e.State(); st != ll.Cancelled {
		t.Fatalf("inner after cancelling wait_for: %v", st)
	}
	assertAlive(t, l.ID())
}

// A task that catches the timeout's cancellation and returns: wait_for
// takes its result.
func TestWaitForTaskFinishesAnyway(t *testing.T) {
	l := newLoop(t)
	sleep, _ := l.Sleep(time.Hour)
	defer sleep.Release()
	task := stepper(t, l,
		func(tk *ll.Task) { tk.Await(sleep) },
		func(tk *ll.Task) { tk.Return(21, nil) })
	w, _ := l.WaitFor(&task.Future, 5*time.Millisecond)
	defer w.Release()
	runUntil(t, l, w, 5*time.Second)
	if v, err := w.Result(); v != 21 || err != nil {
		t.Fatalf("wait_for result %d %v, want the task's 21", v, err)
	}
}
