// SPDX-License-Identifier: MIT

package tests

import (
	"math"
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
)

// A repeating timer through the binding: it repeats, never early, until
// stopped from its callback; Again restarts it; Release ends it.
func TestTimersRepeat(t *testing.T) {
	l := newLoop(t)
	start := l.Time()
	var at []float64
	var tm *ll.Timer
	tm, err := l.StartTimer(0.02, 0.01, func() {
		at = append(at, l.Time()-start)
		if len(at) == 3 {
			if err := tm.Stop(); err != nil {
				t.Error(err)
			}
			l.Stop()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !tm.Active() {
		t.Fatal("a started timer is not active")
	}
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if len(at) != 3 || tm.Active() {
		t.Fatalf("ran at %v, active %v; want 3 runs, then stopped", at, tm.Active())
	}
	for i, x := range at {
		if x < 0.02+0.01*float64(i) {
			t.Fatalf("run %d early: %v", i, at)
		}
	}
	if err := tm.SetRepeat(2); err != nil {
		t.Fatal(err)
	}
	if err := tm.Again(); err != nil || !tm.Active() {
		t.Fatalf("Again: %v, active %v", err, tm.Active())
	}
	if w, ok := tm.When(); !ok || w-l.Time() > 2 || w-l.Time() < 1.9 {
		t.Fatalf("When after Again = %v, %v; want 2 s from now", w, ok)
	}
	id := tm.ID()
	if err := tm.Release(); err != nil {
		t.Fatal(err)
	}
	expect(t, "ll_timer_again(released)", raw.TimerAgain(id), cEBADHANDLE)
	if d, _ := l.NextTimeout(); d != -1 {
		t.Fatalf("a released timer still counts: NextTimeout %v", d)
	}
}

// ll_timer_start's bad input, and ids of other kinds.
func TestTimersRepeatBadInput(t *testing.T) {
	loop := newRawLoop(t)
	out := newOut(t)
	f, a := never(t, "bad timer")
	defer ll.Unregister(a)
	expect(t, "ll_timer_start(NaN first)", raw.TimerStart(loop, math.NaN(), 0, f, a, out.Ptr()), cEINVAL)
	expect(t, "ll_timer_start(negative repeat)", raw.TimerStart(loop, 0, -1, f, a, out.Ptr()), cEINVAL)
	expect(t, "ll_timer_start(+Inf repeat)", raw.TimerStart(loop, 0, math.Inf(1), f, a, out.Ptr()), cEINVAL)
	expect(t, "ll_timer_start(NULL cb)", raw.TimerStart(loop, 0, 1, 0, a, out.Ptr()), cEINVAL)
	expect(t, "ll_timer_start(NULL out)", raw.TimerStart(loop, 0, 1, f, a, nil), cEINVAL)
	expect(t, "ll_timer_start(loop 0)", raw.TimerStart(0, 0, 1, f, a, out.Ptr()), cEBADHANDLE)
	plain := later(t, loop, 10, func() {})
	expect(t, "ll_timer_again(call_later handle)", raw.TimerAgain(plain), cEBADHANDLE)
	expect(t, "ll_timer_set_repeat(call_later handle)", raw.TimerSetRepeat(plain, 1), cEBADHANDLE)
	expect(t, "ll_timer_again(loop)", raw.TimerAgain(loop), cEBADHANDLE)
	expect(t, "ll_timer_start", raw.TimerStart(loop, 10, 1, f, a, out.Ptr()), 0)
	tm := out.Value()
	expect(t, "ll_timer_set_repeat(NaN)", raw.TimerSetRepeat(tm, math.NaN()), cEINVAL)
	expect(t, "ll_future_done(timer id)", raw.FutureDone(tm), cEBADHANDLE)
	expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
	expect(t, "ll_handle_cancelled(timer of a closed loop)", raw.HandleCancelled(tm), 1)
	expect(t, "ll_timer_again(closed loop)", raw.TimerAgain(tm), cECLOSED)
	expect(t, "ll_timer_start(closed loop)", raw.TimerStart(loop, 0, 1, f, a, out.Ptr()), cECLOSED)
	expect(t, "ll_release(timer)", raw.Release(tm), 0)
	expect(t, "ll_release(plain)", raw.Release(plain), 0)
}
