// SPDX-License-Identifier: MIT

package tests

import (
	"fmt"
	"testing"
	"time"
)

func TestReadyQueueIsFIFO(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		var want []string
		for i := 0; i < 1000; i++ {
			s := fmt.Sprint(i)
			want = append(want, s)
			switch i % 3 {
			case 0:
				soon(t, loop, r.add(s))
			case 1:
				soonHandle(t, loop, r.add(s))
			default:
				later(t, loop, -1, r.add(s)) // due at once, but after the ready queue
			}
		}
		runNowait(t, loop)
		// Ready callbacks first (FIFO), then the due timers (scheduling order).
		var ready, timers []string
		for i, s := range want {
			if i%3 == 2 {
				timers = append(timers, s)
			} else {
				ready = append(ready, s)
			}
		}
		if !r.equal(append(ready, timers...)...) {
			t.Fatalf("order %v", r.got)
		}
	})
}

// Callbacks scheduled while an iteration runs wait for the next one, in the
// order they were scheduled, whichever entry point scheduled them.
func TestCallbacksAddedDuringIterationRunNext(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		soon(t, loop, func() {
			r.add("A")()
			soon(t, loop, r.add("A1"))       // C fast path (no handle)
			soonHandle(t, loop, r.add("A2")) // through Go (handle)
			soon(t, loop, r.add("A3"))
			later(t, loop, 0, r.add("A4"))
			f, a := cb(func(uint64) { r.add("A5")() })
			expect(t, "ll_call_soon_threadsafe", raw.CallSoonThreadsafe(loop, f, a), 0)
			soon(t, loop, r.add("A6"))
		})
		soon(t, loop, r.add("B"))
		runNowait(t, loop)
		if !r.equal("A", "B") {
			t.Fatalf("first iteration ran %v", r)
		}
		runNowait(t, loop)
		// The ready ones in order, then the due timer A4. A5 was posted
		// thread-safely: the header fixes only the order among posted calls, so
		// it may run before or after A6.
		if !r.equal("A", "B", "A1", "A2", "A3", "A6", "A5", "A4") &&
			!r.equal("A", "B", "A1", "A2", "A3", "A5", "A6", "A4") {
			t.Fatalf("second iteration ran %v", r)
		}
	})
}

func TestChainOfCallbacksOnePerIteration(t *testing.T) {
	loop := newRawLoop(t)
	n := 0
	var step func()
	step = func() {
		n++
		soon(t, loop, step)
	}
	soon(t, loop, step)
	for i := 1; i <= 20; i++ {
		runNowait(t, loop)
		if n != i {
			t.Fatalf("after %d iterations the chain ran %d times", i, n)
		}
	}
}

func TestTimersOrderedByDeadline(t *testing.T) {
	loop := newRawLoop(t)
	r := &recorder{}
	later(t, loop, 0.03, r.add("30ms"))
	later(t, loop, 0.01, r.add("10ms"))
	later(t, loop, 0.02, r.add("20ms"))
	now := raw.Time(loop)
	at(t, loop, now+0.015, r.add("at15ms"))
	at(t, loop, now+0.035, func() { r.add("at35ms")(); raw.Stop(loop) })
	runForever(t, loop, 5*time.Second)
	if !r.equal("10ms", "at15ms", "20ms", "30ms", "at35ms") {
		t.Fatalf("order %v", r)
	}
}

func TestEqualDeadlinesRunInSchedulingOrder(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		var want []string
		when := raw.Time(loop) + 0.02
		for i := 0; i < 50; i++ {
			s := fmt.Sprint(i)
			want = append(want, s)
			at(t, loop, when, r.add(s))
		}
		at(t, loop, when+0.001, func() { raw.Stop(loop) })
		runForever(t, loop, 5*time.Second)
		if !r.equal(want...) {
			t.Fatalf("order %v", r)
		}
		// Equal deadlines in the past too.
		r.got = nil
		past := raw.Time(loop) - 5
		for _, s := range want {
			at(t, loop, past, r.add(s))
		}
		runNowait(t, loop)
		if !r.equal(want...) {
			t.Fatalf("past deadlines ran %v", r)
		}
	})
}

func TestCancelledHandlesAreSkipped(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		var hb, hd uint64
		soon(t, loop, func() {
			r.add("A")()
			expect(t, "ll_handle_cancel(B, same batch)", raw.HandleCancel(hb), 0)
			expect(t, "ll_handle_cancel(D timer)", raw.HandleCancel(hd), 0)
		})
		hb = soonHandle(t, loop, r.add("B"))
		soon(t, loop, r.add("C"))
		hd = later(t, loop, -1, r.add("D"))
		he := later(t, loop, 0.01, r.add("E"))
		expect(t, "ll_handle_cancel(E)", raw.HandleCancel(he), 0)
		later(t, loop, 0.02, func() { raw.Stop(loop) })
		runForever(t, loop, 5*time.Second)
		if !r.equal("A", "C") {
			t.Fatalf("ran %v", r)
		}
		for _, h := range []uint64{hb, hd, he} {
			expect(t, "ll_handle_cancelled", raw.HandleCancelled(h), 1)
			expect(t, "ll_release(handle)", raw.Release(h), 0)
		}
	})
}

// Over 100 timers with more than half cancelled makes the loop rebuild its
// heap (asyncio's purge); the others still run, in order.
func TestMassCancelKeepsTimerOrder(t *testing.T) {
	loop := newRawLoop(t)
	r := &recorder{}
	var want []string
	base := raw.Time(loop) + 0.01
	var handles []uint64
	for i := 0; i < 300; i++ {
		s := fmt.Sprint(i)
		h := at(t, loop, base+float64(i%30)*0.001, r.add(s))
		if i%4 == 0 {
			handles = append(handles, 0)
		} else {
			expect(t, "ll_handle_cancel", raw.HandleCancel(h), 0)
			handles = append(handles, h)
		}
	}
	for j := 0; j < 30; j++ {
		for i := j; i < 300; i += 30 {
			if i%4 == 0 {
				want = append(want, fmt.Sprint(i))
			}
		}
	}
	at(t, loop, base+0.05, func() { raw.Stop(loop) })
	runForever(t, loop, 5*time.Second)
	if !r.equal(want...) {
		t.Fatalf("ran %d callbacks %v, want %v", len(r.got), r.got, want)
	}
	for _, h := range handles {
		if h != 0 {
			expect(t, "ll_release", raw.Release(h), 0)
		}
	}
}

// ll_loop_stop finishes the current iteration: callbacks already ready in
// it still run; the ones they schedule wait.
func TestStopFinishesCurrentIteration(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		soon(t, loop, func() {
			r.add("A")()
			expect(t, "ll_loop_stop", raw.Stop(loop), 0)
			soon(t, loop, r.add("C"))
		})
		soon(t, loop, r.add("B"))
		later(t, loop, -1, r.add("T")) // due in this iteration
		runForever(t, loop, 5*time.Second)
		if !r.equal("A", "B", "T") {
			t.Fatalf("run_forever after stop ran %v", r)
		}
		runNowait(t, loop)
		if !r.equal("A", "B", "T", "C") {
			t.Fatalf("next iteration ran %v", r)
		}
	})
}

// Stop before run_forever: the run does exactly one iteration, and the loop
// runs normally afterwards.
func TestStopBeforeRunForeverRunsOneIteration(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		soon(t, loop, func() {
			r.add("A")()
			soon(t, loop, r.add("A1"))
		})
		expect(t, "ll_loop_stop", raw.Stop(loop), 0)
		start := time.Now()
		runForever(t, loop, 5*time.Second)
		if !r.equal("A") {
			t.Fatalf("one iteration ran %v", r)
		}
		// With nothing ready, the single iteration must not block either.
		expect(t, "ll_loop_stop", raw.Stop(loop), 0)
		runForever(t, loop, 5*time.Second)
		if !r.equal("A", "A1") {
			t.Fatalf("second stopped run ran %v", r)
		}
		expect(t, "ll_loop_stop", raw.Stop(loop), 0)
		runForever(t, loop, 5*time.Second)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("stopped runs took %v", d)
		}
		// The stop was consumed: the next run goes on until its own stop.
		n := 0
		var step func()
		step = func() {
			if n++; n == 5 {
				raw.Stop(loop)
			} else {
				soon(t, loop, step)
			}
		}
		soon(t, loop, step)
		runForever(t, loop, 5*time.Second)
		if n != 5 {
			t.Fatalf("run after a consumed stop ran %d steps, want 5", n)
		}
	})
}
