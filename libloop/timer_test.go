// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// A repeating timer runs first after its first delay, then every repeat,
// never early, until its callback stops it.
func TestTimerRepeats(t *testing.T) {
	l := newTestLoop(t)
	var at []float64
	start := l.Time()
	var tm *Timer
	tm, err := l.StartTimer(0.02, 0.01, func() {
		at = append(at, l.Time()-start)
		if len(at) == 4 {
			tm.Stop()
			l.Stop()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := tm.When(); !ok || w < start+0.02 {
		t.Fatalf("When = %v, %v; want the first expiry", w, ok)
	}
	l.RunForever()
	if len(at) != 4 || tm.Active() {
		t.Fatalf("ran at %v, active %v; want 4 runs, then stopped", at, tm.Active())
	}
	for i, x := range at {
		if min := 0.02 + 0.01*float64(i); x < min {
			t.Fatalf("run %d at %.4f s, before %.3f s: %v", i, x, min, at)
		}
	}
}

// Repeat 0 runs once; Again restarts a repeating timer from now, does
// nothing to a one-shot; SetRepeat takes effect at the next expiry.
func TestTimerOnceAgainSetRepeat(t *testing.T) {
	l := newTestLoop(t)
	n := 0
	once, _ := l.StartTimer(0, 0, func() { n++ })
	l.RunOnce(false)
	if n != 1 || once.Active() {
		t.Fatalf("one-shot ran %d times, active %v", n, once.Active())
	}
	if err := once.Again(); err != nil || once.Active() {
		t.Fatalf("Again on a one-shot: %v, active %v; want nothing done", err, once.Active())
	}
	m := 0
	rep, _ := l.StartTimer(3600, 0.01, func() { m++ })
	if err := rep.Again(); err != nil {
		t.Fatal(err)
	}
	if w, _ := rep.When(); w > l.Time()+0.02 {
		t.Fatalf("Again left the expiry at %.3f s from now, want 0.01", w-l.Time())
	}
	if err := rep.SetRepeat(0); err != nil || rep.Repeat() != 0 {
		t.Fatalf("SetRepeat(0): %v, repeat %v", err, rep.Repeat())
	}
	for m == 0 {
		l.RunOnce(false)
	}
	if rep.Active() {
		t.Fatal("a timer whose repeat was set to 0 re-armed itself")
	}
	rep.Stop() // stopped twice: nothing
	if err := rep.SetRepeat(0.005); err != nil {
		t.Fatal(err)
	}
	if err := rep.Again(); err != nil || !rep.Active() {
		t.Fatalf("Again on a stopped repeating timer: %v, active %v; want it running", err, rep.Active())
	}
	rep.Stop()
	if rep.Active() {
		t.Fatal("Stop left it active")
	}
}

// A stopped timer's pending expiry does not run; starting again arms
// anew; Close stops every timer; bad input is EINVAL.
func TestTimerStopCloseBadInput(t *testing.T) {
	l := newTestLoop(t)
	ran := false
	tm, _ := l.StartTimer(0, 0.001, func() { ran = true })
	tm.Stop()
	l.RunOnce(true)
	time.Sleep(2 * time.Millisecond)
	l.RunOnce(true)
	if ran {
		t.Fatal("a stopped timer ran")
	}
	for _, c := range []struct{ first, repeat float64 }{
		{math.NaN(), 0}, {1e12, 0}, {0, -1}, {0, math.NaN()}, {0, math.Inf(1)},
	} {
		if _, err := l.StartTimer(c.first, c.repeat, func() {}); err != EINVAL {
			t.Errorf("StartTimer(%v, %v) = %v, want EINVAL", c.first, c.repeat, err)
		}
	}
	if _, err := l.StartTimer(0, 0, nil); err != EINVAL {
		t.Errorf("nil fn: %v", err)
	}
	if err := tm.SetRepeat(-1); err != EINVAL {
		t.Errorf("SetRepeat(-1) = %v", err)
	}
	if err := tm.Start(0, 1); err != nil || !tm.Active() {
		t.Fatalf("restart: %v", err)
	}
	l.Close()
	if tm.Active() {
		t.Fatal("Close left the timer active")
	}
	tm.Stop()
	if err := tm.Again(); err != ECLOSED {
		t.Errorf("Again on a closed loop = %v", err)
	}
	if _, err := l.StartTimer(0, 0, func() {}); err != ECLOSED {
		t.Errorf("StartTimer on a closed loop = %v", err)
	}
}

// Re-arming allocates nothing: a repeating timer runs with no garbage.
func TestTimerRearmAllocs(t *testing.T) {
	l := newTestLoop(t)
	n := 0
	tm, _ := l.StartTimer(-1, 1e-9, func() { n++ })
	l.RunOnce(true) // warm the handle pool
	allocs := testing.AllocsPerRun(100, func() {
		time.Sleep(0)
		l.RunOnce(true)
	})
	tm.Stop()
	if n < 100 || allocs > 0 {
		t.Fatalf("%d expiries, %.1f allocations each; want 100 or more, and 0", n, allocs)
	}
}

// A timer every 5 ms that stops itself after three runs.
func ExampleLoop_StartTimer() {
	l, _ := New()
	defer l.Close()
	runs := 0
	var tm *Timer
	tm, _ = l.StartTimer(0, 0.005, func() {
		runs++
		if runs == 3 {
			tm.Stop()
			l.Stop()
		}
	})
	l.RunForever()
	fmt.Println(runs, tm.Active())
	// Output: 3 false
}
