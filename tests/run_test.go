// SPDX-License-Identifier: MIT

package tests

import (
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// ll_loop_run_until_complete and ll_run.

func TestRunUntilCompleteOutcomes(t *testing.T) {
	l := newLoop(t)
	f := newFuture(t, l)
	l.CallLater(5*time.Millisecond, func() { f.SetException(-5, "io", 0, nil) })
	// Returns 0 whatever the outcome; the outcome is read from the future.
	expectErr(t, "RunUntilComplete(failing)", l.RunUntilComplete(f), 0)
	_, err := f.Result()
	expectErr(t, "result", err, -5)
	if l.IsRunning() {
		t.Fatal("still running after run_until_complete")
	}
	// An already done future: returns after one iteration, running what is ready.
	ran := false
	l.CallSoon(func() { ran = true })
	expectErr(t, "RunUntilComplete(done)", l.RunUntilComplete(f), 0)
	if !ran {
		t.Fatal("the ready callback did not run")
	}
	// The loop can run again afterwards.
	g := newFuture(t, l)
	l.CallSoon(func() { g.Cancel("") })
	expectErr(t, "RunUntilComplete(cancelled)", l.RunUntilComplete(g), 0)
	assertAlive(t, l.ID())
}

// Stopped before the future completes: LL_ESTOPPED, whether stop came from a
// callback or before the run (which then runs one iteration).
func TestRunUntilCompleteStopped(t *testing.T) {
	l := newLoop(t)
	f := newFuture(t, l)
	l.CallLater(5*time.Millisecond, func() { l.Stop() })
	expectErr(t, "RunUntilComplete(stopped by a callback)", l.RunUntilComplete(f), cESTOPPED)
	if f.Done() {
		t.Fatal("future done")
	}
	ran := 0
	l.CallSoon(func() { ran++ })
	l.Stop()
	start := time.Now()
	expectErr(t, "RunUntilComplete(stopped before)", l.RunUntilComplete(f), cESTOPPED)
	if ran != 1 || time.Since(start) > time.Second {
		t.Fatalf("stop before run: %d callbacks ran, took %v", ran, time.Since(start))
	}
	// The future still completes in a later run.
	l.CallSoon(func() { f.SetResult(3, nil) })
	expectErr(t, "RunUntilComplete(after stops)", l.RunUntilComplete(f), 0)
	if v, _ := f.Result(); v != 3 {
		t.Fatalf("result %d", v)
	}
	assertAlive(t, l.ID())
}

func TestRunUntilCompleteRefusals(t *testing.T) {
	l, other := newLoop(t), newLoop(t)
	otherFut := newFuture(t, other)
	expectErr(t, "RunUntilComplete(another loop's future)", l.RunUntilComplete(otherFut), cEINVAL)
	f := newFuture(t, l)
	l.CallSoon(func() {
		expectErr(t, "nested RunUntilComplete", l.RunUntilComplete(f), cERUNNING)
		expectErr(t, "RunUntilComplete(other loop) inside a running one", other.RunUntilComplete(otherFut), cERUNNING)
		f.SetResult(0, nil)
	})
	expectErr(t, "RunUntilComplete", l.RunUntilComplete(f), 0)
	assertAlive(t, l.ID())
	assertAlive(t, other.ID())
}

// ll_run is asyncio.run: a fresh loop, the main task to completion, then
// the loop is closed.
func TestRun(t *testing.T) {
	base := ll.LiveFrees()
	log := &freeLog{}
	steps := 0
	v, err := ll.Run(func(tk *ll.Task) {
		steps++
		if tk.ID() == 0 || tk.Loop() != nil {
			t.Errorf("main task id %#x loop %v", tk.ID(), tk.Loop())
		}
		w, _ := tk.Awaited()
		if w != nil {
			t.Error("main's first step woken by a future")
		}
		tk.Return(42, log.fn)
	})
	if v != 42 || err != nil || steps != 1 {
		t.Fatalf("Run = %d, %v after %d steps", v, err, steps)
	}
	if len(log.calls()) != 0 || ll.LiveFrees() != base {
		t.Fatalf("the value passed to the caller was freed (%#x) or its free kept (%d, base %d)",
			log.calls(), ll.LiveFrees(), base)
	}
	// Yields, then returns.
	steps = 0
	v, err = ll.Run(func(tk *ll.Task) {
		if steps++; steps < 3 {
			tk.Yield()
		} else {
			tk.Return(7, nil)
		}
	})
	if v != 7 || err != nil || steps != 3 {
		t.Fatalf("Run(yields) = %d, %v after %d steps", v, err, steps)
	}
	// The main task's error code; cancellation as LL_ECANCELLED.
	_, err = ll.Run(func(tk *ll.Task) { tk.Raise(-3, "main failed", 0x99, log.fn) })
	expectErr(t, "Run(raises)", err, -3)
	if log.count(0x99) != 1 {
		t.Fatalf("payload of the failed main task freed %d times", log.count(0x99))
	}
	_, err = ll.Run(func(tk *ll.Task) { tk.Raise(cECANCELLED, "", 0, nil) })
	expectErr(t, "Run(cancelled)", err, cECANCELLED)
	_, err = ll.Run(func(tk *ll.Task) {})
	expectErr(t, "Run(step without outcome)", err, cESTATE)
	// Raw: NULL step, NULL result.
	expect(t, "ll_run(NULL)", raw.Run(0, 0, nil), cEINVAL)
	key := ll.RegisterCallback(func(id uint64) { raw.TaskReturn(id, 5, 0) }, false)
	expect(t, "ll_run(result NULL)", raw.Run(ll.CallbackPtr(), key, nil), 0)
	ll.Unregister(key)
	assertAlive(t, newRawLoop(t))
}

// ll_run refuses to nest inside a running loop; its main never steps.
func TestRunInsideRunningLoop(t *testing.T) {
	l := newLoop(t)
	stepped := false
	l.CallSoon(func() {
		_, err := ll.Run(func(tk *ll.Task) { stepped = true; tk.Return(0, nil) })
		expectErr(t, "Run inside a callback", err, cERUNNING)
	})
	l.RunOnce(true)
	if stepped {
		t.Fatal("main stepped inside a running loop")
	}
	// Inside ll_run, no other loop may run on the thread either.
	_, err := ll.Run(func(tk *ll.Task) {
		expectErr(t, "RunOnce inside Run", l.RunOnce(true), cERUNNING)
		tk.Return(0, nil)
	})
	expectErr(t, "Run", err, 0)
	assertAlive(t, l.ID())
}
