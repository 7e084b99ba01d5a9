// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"math"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// The time.Duration forms of the binding's float-seconds calls: a Go
// program passes durations and reads the loop's clock as one, and gets
// the same timers and the same refusals as with the float forms.

// A repeating timer started with durations never fires early, repeats at
// its interval, takes a new interval from SetRepeatDuration, and reports
// its next deadline on Now's clock.
func TestGoAPIDurationRepeatingTimer(t *testing.T) {
	l := newLoop(t)
	start := l.Now()
	var fired []time.Duration
	var tm *ll.Timer
	var err error
	tm, err = l.StartTimerDuration(20*time.Millisecond, 10*time.Millisecond, func() {
		fired = append(fired, l.Now()-start)
		switch len(fired) {
		case 2:
			if err := tm.SetRepeatDuration(30 * time.Millisecond); err != nil {
				t.Errorf("SetRepeatDuration: %v", err)
			}
		case 4:
			tm.Stop()
			l.Stop()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Release()
	when, ok := tm.WhenDuration()
	secs, _ := tm.When()
	if !ok || when-start < 20*time.Millisecond || math.Abs(float64(when)/1e9-secs) > 1e-6 {
		t.Fatalf("WhenDuration = %v, %v (When %v s, start %v): want >= start+20ms, equal to When", when, ok, secs, start)
	}
	runForever(t, l.ID(), 5*time.Second)
	if len(fired) != 4 {
		t.Fatalf("fired %d times, want 4", len(fired))
	}
	// Each run is at or after its deadline: 20, 30, 40 ms (a timer is
	// re-armed before its callback runs, as libuv's, so the new interval
	// counts from the third run on), then 30 ms later (at 50 ms, had
	// SetRepeatDuration done nothing).
	wants := []time.Duration{20, 30, 40, 70}
	for i, w := range wants {
		if fired[i] < w*time.Millisecond {
			t.Errorf("run %d at %v, before its deadline %v", i+1, fired[i], w*time.Millisecond)
		}
	}
	if _, ok := tm.WhenDuration(); ok {
		t.Error("a stopped timer still has a deadline")
	}
}

// Now is the loop's clock (Time) in nanoseconds; CallAtDuration schedules
// on it and the Handle's WhenDuration gives the deadline back.
func TestGoAPIDurationClockAndCallAt(t *testing.T) {
	l := newLoop(t)
	before := l.Time()
	now := l.Now()
	after := l.Time()
	if float64(now)/1e9 < before-1e-6 || float64(now)/1e9 > after+1e-6 {
		t.Fatalf("Now %v outside Time's readings %v..%v", now, before, after)
	}
	due := l.Now() + 15*time.Millisecond
	var ranAt time.Duration
	h, err := l.CallAtDuration(due, func() { ranAt = l.Now(); l.Stop() })
	if err != nil {
		t.Fatal(err)
	}
	if d := h.WhenDuration() - due; d < -time.Microsecond || d > time.Microsecond {
		t.Fatalf("Handle.WhenDuration %v, scheduled at %v", h.WhenDuration(), due)
	}
	runForever(t, l.ID(), 5*time.Second)
	if ranAt < due {
		t.Fatalf("CallAtDuration's callback ran at %v, before %v", ranAt, due)
	}
	soon, _ := l.CallSoon(func() {})
	if soon.WhenDuration() != 0 {
		t.Errorf("a CallSoon handle's WhenDuration is %v, want 0", soon.WhenDuration())
	}
}

// The Duration forms refuse what the float forms refuse, with the same
// error, and leave nothing registered.
func TestGoAPIDurationRefusals(t *testing.T) {
	l := newLoop(t)
	before := ll.LiveCallbacks()
	if _, err := l.StartTimerDuration(time.Millisecond, 0, nil); !errors.Is(err, ll.EINVAL) {
		t.Errorf("StartTimerDuration(nil fn) = %v, want EINVAL", err)
	}
	var released ll.Timer
	if err := released.SetRepeatDuration(time.Second); !errors.Is(err, ll.EBADHANDLE) {
		t.Errorf("SetRepeatDuration on a released timer = %v, want EBADHANDLE", err)
	}
	if _, ok := released.WhenDuration(); ok {
		t.Error("a released timer has a deadline")
	}
	if ll.LiveCallbacks() != before {
		t.Errorf("refused calls left %d callback entries", ll.LiveCallbacks()-before)
	}
	l.Close()
	if _, err := l.StartTimerDuration(time.Millisecond, time.Millisecond, func() {}); !errors.Is(err, ll.ECLOSED) {
		t.Errorf("StartTimerDuration on a closed loop = %v, want ECLOSED", err)
	}
	if _, err := l.CallAtDuration(l.Now(), func() {}); !errors.Is(err, ll.ECLOSED) {
		t.Errorf("CallAtDuration on a closed loop = %v, want ECLOSED", err)
	}

	cfg, err := lib.NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.Release()
	if err := cfg.SetTimeoutsDuration(5*time.Second, 2*time.Second); err != nil {
		t.Errorf("SetTimeoutsDuration(5s, 2s) = %v", err)
	}
	if err := cfg.SetTimeoutsDuration(-time.Second, 0); !errors.Is(err, ll.EINVAL) {
		t.Errorf("SetTimeoutsDuration(-1s) = %v, want EINVAL as SetTimeouts(-1)", err)
	}
	if err := cfg.SetTimeoutsDuration(0, 25*time.Hour); !errors.Is(err, ll.EINVAL) {
		t.Errorf("SetTimeoutsDuration(0, 25h) = %v, want EINVAL (over a day)", err)
	}
}
