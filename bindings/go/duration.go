// SPDX-License-Identifier: MIT

package libloop

import (
	"math"
	"time"
)

// time.Duration forms of the calls first published with float seconds
// (the C ABI's unit). Those keep their names and signatures; each form
// here carries a Duration suffix, as the core package names its own
// (StartTimerDuration, Now), and converts, then calls the float form. The
// library rounds a deadline up, so a timer never fires before its
// duration has passed. Calls that took a time.Duration from the start
// have the plain name and a Seconds float form (CallLater and
// CallLaterSeconds, Sleep and SleepSeconds, WaitFor and WaitForSeconds,
// Task.Sleep and Task.SleepSeconds): see doc.go.

// secondsToDuration converts loop seconds to a Duration, rounded to the
// nearest nanosecond (a float64 of the monotonic clock carries well under
// a microsecond of error for years of uptime); a negative value stays
// negative and an out-of-range one saturates.
func secondsToDuration(s float64) time.Duration {
	ns := math.Round(s * 1e9)
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}

// Now is the loop's clock (Time) as a time.Duration since an arbitrary
// origin: compare it with other readings of the same loop's clock (Timer's
// WhenDuration, Handle's WhenDuration, CallAtDuration), not with wall time.
func (l *Loop) Now() time.Duration { return secondsToDuration(l.Time()) }

// CallAtDuration is CallAt with when on Now's clock.
func (l *Loop) CallAtDuration(when time.Duration, fn func()) (*Handle, error) {
	return l.CallAt(when.Seconds(), fn)
}

// WhenDuration is When on Now's clock: a timer's deadline, or 0 for a
// handle made by CallSoon.
func (h *Handle) WhenDuration() time.Duration { return secondsToDuration(h.when) }

// StartTimerDuration is StartTimer with time.Durations: fn runs after
// first, then every repeat (0: once) until Stop.
func (l *Loop) StartTimerDuration(first, repeat time.Duration, fn func()) (*Timer, error) {
	return l.StartTimer(first.Seconds(), repeat.Seconds(), fn)
}

// SetRepeatDuration is SetRepeat with a time.Duration (0: the timer
// stops after its next run).
func (t *Timer) SetRepeatDuration(repeat time.Duration) error { return t.SetRepeat(repeat.Seconds()) }

// WhenDuration is When on Now's clock; ok false while stopped.
func (t *Timer) WhenDuration() (when time.Duration, ok bool) {
	w, ok := t.When()
	if !ok {
		return 0, false
	}
	return secondsToDuration(w), true
}

// SetTimeoutsDuration is SetTimeouts with time.Durations (0: the
// library's default for that timeout).
func (c *TLSConfig) SetTimeoutsDuration(handshake, shutdown time.Duration) error {
	return c.SetTimeouts(handshake.Seconds(), shutdown.Seconds())
}
