// SPDX-License-Identifier: MIT

package libloop

import "time"

// time.Duration forms of the calls that take float seconds. The float
// forms are asyncio's and the C ABI's (capi calls them); a Go program
// passes a time.Duration to these instead. Each converts and calls its
// float form, whose deadline is rounded up, so a timer never fires before
// the duration has passed.

// CallLaterDuration is CallLater with a time.Duration.
func (l *Loop) CallLaterDuration(d time.Duration, fn func()) (*Handle, error) {
	return l.CallLater(d.Seconds(), fn)
}

// SleepDuration is Sleep with a time.Duration.
func (l *Loop) SleepDuration(d time.Duration) (*Future, error) { return l.Sleep(d.Seconds()) }

// SleepDuration is Task.Sleep with a time.Duration.
func (t *Task) SleepDuration(d time.Duration) error { return t.Sleep(d.Seconds()) }

// WaitForDuration is WaitFor with a time.Duration.
func (l *Loop) WaitForDuration(f *Future, timeout time.Duration) (*Future, error) {
	return l.WaitFor(f, timeout.Seconds())
}

// StartTimerDuration is StartTimer with time.Durations (repeat 0: once).
func (l *Loop) StartTimerDuration(first, repeat time.Duration, fn func()) (*Timer, error) {
	return l.StartTimer(first.Seconds(), repeat.Seconds(), fn)
}

// Now is the loop's clock (Time) as a time.Duration since an arbitrary
// origin: compare it with other readings, not with wall time.
func (l *Loop) Now() time.Duration { return time.Duration(monoNow()) }
