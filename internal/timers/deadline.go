// SPDX-License-Identifier: MIT

package timers

import "math"

// The deadline rules: which times a timer may be given, how loop-clock
// seconds become the loop nanoseconds the queues order, and when a timer
// is due. Every scheduling path of the core uses these; capi's C fast
// paths (ll_call_later, ll_call_at) keep a copy of MaxDelay and of the
// rounding for the delays they take themselves, which capi's
// deadline_rules_test.go checks against this file.

// MaxDelay bounds delays and deadlines, in seconds (~100 years), so that
// nanosecond arithmetic cannot overflow: anything later is refused
// (EINVAL), and anything earlier than -MaxDelay is simply due.
const MaxDelay = 100 * 365 * 24 * 3600.0

// NsPerSecond converts loop-clock seconds to loop nanoseconds.
const NsPerSecond = 1e9

// Resolution is the loop clock's resolution in nanoseconds: a timer whose
// deadline is before now + Resolution is due in the current iteration
// (asyncio's _clock_resolution). The clock counts nanoseconds.
const Resolution = 1

// Refused reports whether a time or delay t (seconds) is refused: NaN, or
// later than MaxDelay (+Inf included).
func Refused(t float64) bool { return math.IsNaN(t) || t > MaxDelay }

// Absolute converts a loop time in seconds to loop nanoseconds, rounded up
// so that a timer never runs before the time it was given; ok is false if
// the time is refused. -Inf is before every finite deadline (asyncio's
// -inf); a finite time before -MaxDelay is -MaxDelay.
func Absolute(when float64) (ns int64, ok bool) {
	if Refused(when) {
		return 0, false
	}
	if math.IsInf(when, -1) {
		return math.MinInt64, true
	}
	if when < -MaxDelay {
		when = -MaxDelay
	}
	return int64(math.Ceil(when * NsPerSecond)), true
}

// Relative is the deadline of a timer delay seconds after now (loop ns);
// ok is false if the delay is refused. asyncio computes now + delay: for
// -Inf that is -Inf, and for a delay before -MaxDelay "now" vanishes into
// it, so those are the absolute deadlines Absolute gives (call_later(-1e300)
// ties with call_at(-1e300)).
func Relative(delay float64, now int64) (ns int64, ok bool) {
	ns, ok = Absolute(delay)
	if ok && delay >= -MaxDelay {
		ns += now
	}
	return ns, ok
}

// DueBy is the end of the due window at time now (loop ns): every timer
// whose deadline is before it is due.
func DueBy(now int64) int64 { return now + Resolution }

// Seconds is a deadline in loop seconds, as the host reads it back
// (Handle.When, ll_timer_when): math.MinInt64 is -Inf, as Absolute made it.
func Seconds(ns int64) float64 {
	if ns == math.MinInt64 {
		return math.Inf(-1)
	}
	return float64(ns) / NsPerSecond
}
