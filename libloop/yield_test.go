// SPDX-License-Identifier: MIT

package libloop

import "testing"

// A loop whose every iteration blocks in the poll (a 2 ms timer chain, as
// a loop waiting on children) must still yield to the Go scheduler every
// yieldSlice: the every-yieldEvery-iterations check alone would never see
// 64 iterations in 60 ms, and sysmon's forced preemption would take over.
func TestYieldsWhileBlockingIterations(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ticks := 0
	var tick func()
	tick = func() {
		if ticks++; ticks == 30 {
			l.Stop()
			return
		}
		l.CallLater(0.002, tick)
	}
	l.CallLater(0.002, tick)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if l.iter >= yieldEvery {
		t.Fatalf("%d iterations: the test needs fewer than %d", l.iter, yieldEvery)
	}
	// 30 ticks of >= 2 ms are >= 60 ms; checked only at the polls (every
	// 2 ms or more), a yield comes at most one tick after each 5 ms slice:
	// at least 60/(5+2) - 1 = 7; 5 leaves room for a slow machine (the
	// every-64-iterations check alone makes 0 here).
	if want := uint64(5); l.yields < want {
		t.Fatalf("%d yields in %d blocking iterations, want >= %d", l.yields, l.iter, want)
	}
}

// Iterations that each run many callbacks (a loaded server: many events
// and a host queue of Python callbacks per iteration) must yield every
// yieldSlice too, though they are fewer than yieldEvery: the look at the
// clock comes after yieldEvery units of work, not of iterations.
func TestYieldsWhileBusyIterations(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	spin := func() {
		for end := monoNow() + 250e3; monoNow() < end; {
		}
	}
	rounds := 0
	var round func()
	round = func() {
		if rounds++; rounds == 40 {
			l.Stop()
			return
		}
		for i := 0; i < 8; i++ { // the next iteration: 8 x 0.25 ms
			l.CallSoon(spin)
		}
		l.CallSoon(round)
	}
	l.CallSoon(round)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if l.iter >= yieldEvery {
		t.Fatalf("%d iterations: the test needs fewer than %d", l.iter, yieldEvery)
	}
	// 39 iterations of >= 2 ms: >= 78 ms; a look every 64 units (9 a
	// round: ~8 iterations, 16 ms) yields at least every 16 ms: >= 4;
	// counting iterations alone makes 0.
	if want := uint64(3); l.yields < want {
		t.Fatalf("%d yields in %d busy iterations, want >= %d", l.yields, l.iter, want)
	}
}
