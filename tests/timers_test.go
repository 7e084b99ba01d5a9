// SPDX-License-Identifier: MIT

package tests

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/libloop/libloop/internal/timers"
)

// No timer runs before its deadline, by the loop clock (ll_timer_when) or by
// Go's monotonic clock, whatever the delay's size relative to the poll's
// millisecond timeout.
func TestTimersNeverFireEarly(t *testing.T) {
	loop := newRawLoop(t)
	delays := []float64{0.0001, 0.0005, 0.0009, 0.001, 0.0011, 0.0015, 0.002, 0.0025}
	for ms := 3; ms <= 40; ms += 3 {
		delays = append(delays, float64(ms)/1000, float64(ms)/1000+0.0004)
	}
	left := len(delays)
	start := time.Now()
	for _, d := range delays {
		d := d
		var h uint64
		h = later(t, loop, d, func() {
			now := raw.Time(loop)
			elapsed := time.Since(start).Seconds()
			when := raw.TimerWhen(h)
			if now < when {
				t.Errorf("timer of %gs ran at loop time %.9f, before its deadline %.9f", d, now, when)
			}
			if elapsed < d {
				t.Errorf("timer of %gs ran after %.6fs", d, elapsed)
			}
			if left--; left == 0 {
				raw.Stop(loop)
			}
		})
	}
	runForever(t, loop, 10*time.Second)
	if left != 0 {
		t.Fatalf("%d timers did not run", left)
	}
}

func TestCallAtNeverEarly(t *testing.T) {
	loop := newRawLoop(t)
	for i := 0; i < 20; i++ {
		when := raw.Time(loop) + 0.0037
		ran := false
		at(t, loop, when, func() {
			ran = true
			if now := raw.Time(loop); now < when {
				t.Errorf("ll_call_at(%.9f) ran at %.9f", when, now)
			}
		})
		for !ran {
			expect(t, "ll_loop_run_once(ONCE)", raw.RunOnce(loop, cRunOnce), 0)
		}
	}
}

func TestTimerWhen(t *testing.T) {
	loop := newRawLoop(t)
	t0 := raw.Time(loop)
	h := later(t, loop, 1.5, func() {})
	t1 := raw.Time(loop)
	if w := raw.TimerWhen(h); w < t0+1.5 || w > t1+1.5+1e-6 {
		t.Fatalf("ll_timer_when = %.9f, want in [%.9f, %.9f]", w, t0+1.5, t1+1.5)
	}
	h2 := at(t, loop, 123.25, func() {})
	if w := raw.TimerWhen(h2); w != 123.25 {
		t.Fatalf("ll_timer_when(call_at 123.25) = %.9f", w)
	}
	hs := soonHandle(t, loop, func() {})
	if w := raw.TimerWhen(hs); w >= 0 {
		t.Fatalf("ll_timer_when(call_soon handle) = %g, want negative", w)
	}
	for _, id := range []uint64{h, h2, hs} {
		expect(t, "ll_handle_cancel", raw.HandleCancel(id), 0)
		expect(t, "ll_release", raw.Release(id), 0)
	}
}

// ll_call_at on an idle loop schedules in C (cloop/timers.c's fast path), with
// its own copy of the deadline rules: the deadlines it makes are the ones
// internal/timers gives, to the nanosecond, and it refuses exactly what Go
// refuses at the largest delay (capi's deadline_rules_test.go reads the
// copy itself).
func TestCDeadlinesAreGos(t *testing.T) {
	loop := newRawLoop(t)
	f, a := never(t, "deadline rules")
	out := newOut(t)
	rng := rand.New(rand.NewSource(5))
	whens := []float64{0, 1e-9, 1.5e-9, -1.5e-9, 123.0000000001, timers.MaxDelay, -timers.MaxDelay}
	for i := 0; i < 2000; i++ {
		whens = append(whens, (rng.Float64()-0.5)*2e6) // ns-exact as a double up to ~9e6 s
	}
	for _, when := range whens {
		expect(t, "ll_call_at", raw.CallAt(loop, when, f, a, out.Ptr()), 0)
		h := out.Value()
		ns, _ := timers.Absolute(when)
		if got, want := raw.TimerWhen(h), float64(ns)/1e9; got != want {
			t.Errorf("ll_call_at(%.12g): deadline %.12g s, internal/timers says %.12g s", when, got, want)
		}
		expect(t, "ll_handle_cancel", raw.HandleCancel(h), 0)
		expect(t, "ll_release", raw.Release(h), 0)
	}
	expect(t, "ll_call_later(MaxDelay)", raw.CallLater(loop, timers.MaxDelay, f, a, out.Ptr()), 0)
	expect(t, "ll_handle_cancel", raw.HandleCancel(out.Value()), 0)
	expect(t, "ll_release", raw.Release(out.Value()), 0)
	past := math.Nextafter(timers.MaxDelay, math.Inf(1))
	expect(t, "ll_call_at(past MaxDelay)", raw.CallAt(loop, past, f, a, out.Ptr()), cEINVAL)
	expect(t, "ll_call_later(past MaxDelay)", raw.CallLater(loop, past, f, a, out.Ptr()), cEINVAL)
	expect(t, "ll_call_at(past MaxDelay, no handle)", raw.CallAt(loop, past, f, a, nil), cEINVAL)
	runNowait(t, loop)
}

func TestNegativeAndZeroDelaysRunAtOnce(t *testing.T) {
	loop := newRawLoop(t)
	r := &recorder{}
	type timer struct {
		name string
		h    uint64
	}
	timers := []timer{
		{"zero", later(t, loop, 0, r.add("zero"))},
		{"minus1", later(t, loop, -1, r.add("minus1"))},
		{"minus1h", later(t, loop, -3600, r.add("minus1h"))},
		{"past", at(t, loop, raw.Time(loop)-10, r.add("past"))},
		{"negative when", at(t, loop, -5, r.add("negative when"))},
	}
	runNowait(t, loop)
	// Each is due at once; they run in deadline order.
	sort.SliceStable(timers, func(i, j int) bool { return raw.TimerWhen(timers[i].h) < raw.TimerWhen(timers[j].h) })
	var want []string
	for _, tm := range timers {
		want = append(want, tm.name)
		expect(t, "ll_release", raw.Release(tm.h), 0)
	}
	if !r.equal(want...) {
		t.Fatalf("ran %v, want %v", r, want)
	}
}

func TestCancelTimer(t *testing.T) {
	loop := newRawLoop(t)
	h := later(t, loop, 0.005, func() { t.Error("cancelled timer ran") })
	expect(t, "ll_handle_cancelled(pending)", raw.HandleCancelled(h), 0)
	expect(t, "ll_handle_cancel", raw.HandleCancel(h), 0)
	expect(t, "ll_handle_cancelled", raw.HandleCancelled(h), 1)
	expect(t, "ll_handle_cancel(twice)", raw.HandleCancel(h), 0)
	if w := raw.TimerWhen(h); w <= 0 {
		t.Fatalf("ll_timer_when(cancelled timer) = %g", w)
	}
	later(t, loop, 0.02, func() { raw.Stop(loop) })
	runForever(t, loop, 5*time.Second)
	expect(t, "ll_release", raw.Release(h), 0)

	// Cancel after the callback ran does nothing (and cannot fail).
	n := 0
	h2 := later(t, loop, 0, func() { n++ })
	runNowait(t, loop)
	expect(t, "ll_handle_cancel(after run)", raw.HandleCancel(h2), 0)
	runNowait(t, loop)
	if n != 1 {
		t.Fatalf("timer ran %d times", n)
	}
	expect(t, "ll_release", raw.Release(h2), 0)
	assertAlive(t, loop)
}

// A handle released before its callback ran: the callback still runs.
func TestReleasedHandleStillRuns(t *testing.T) {
	loop := newRawLoop(t)
	n := 0
	h := soonHandle(t, loop, func() { n++ })
	ht := later(t, loop, 0, func() { n++ })
	expect(t, "ll_release(handle)", raw.Release(h), 0)
	expect(t, "ll_release(timer)", raw.Release(ht), 0)
	runNowait(t, loop)
	if n != 2 {
		t.Fatalf("%d of 2 released handles ran", n)
	}
}

func TestLongTimerDoesNotBlockEarlierWork(t *testing.T) {
	loop := newRawLoop(t)
	h := later(t, loop, 1e6, func() { t.Error("a 1e6 s timer ran") })
	if w := raw.TimerWhen(h); w < 1e6 {
		t.Fatalf("ll_timer_when = %g", w)
	}
	later(t, loop, 0.01, func() { raw.Stop(loop) })
	start := time.Now()
	runForever(t, loop, 5*time.Second)
	if d := time.Since(start); d < 10*time.Millisecond {
		t.Fatalf("stopped after %v, before the 10ms timer", d)
	}
	expect(t, "ll_handle_cancel", raw.HandleCancel(h), 0)
	expect(t, "ll_release", raw.Release(h), 0)
}
