// SPDX-License-Identifier: MIT

package libloop

import (
	"math"

	"github.com/libloop/libloop/internal/timers"
)

// Timer is a timer that may repeat, libuv's uv_timer_t: started with a
// first delay and a repeat interval, it runs its callback once the first
// delay has passed, then every repeat interval (0: once) until Stop. Each
// expiry re-arms it, before the callback runs, for repeat after the
// moment it ran (libuv's rule: a late iteration delays the rest, it never
// makes the timer run twice to catch up). A Timer is one Handle timer of
// the loop at a time, so it orders with every other timer as usual.
type Timer struct {
	loop   *Loop
	gofn   func()
	call   HostCall
	fire   func() // t.expire, bound once: re-arming allocates nothing
	h      *Handle
	repeat int64 // ns
	unrefd bool  // does not keep the loop alive (refs.go)
	listed bool  // in the loop's list of Timers (walk.go)
	// Tag is the host's id for this timer.
	Tag uint64
}

// StartTimer starts a timer that calls fn after first seconds (a negative
// delay is due at once, as CallLater's), then every repeat seconds (0:
// once). EINVAL for a nil fn, a NaN or too distant delay, or a negative
// repeat; ECLOSED on a closed loop.
func (l *Loop) StartTimer(first, repeat float64, fn func()) (*Timer, error) {
	if fn == nil {
		return nil, EINVAL
	}
	t := &Timer{loop: l, gofn: fn}
	t.fire = t.expire
	return t, t.Start(first, repeat)
}

// StartTimerHost is StartTimer for a host call (run as a batch of one).
func (l *Loop) StartTimerHost(first, repeat float64, c HostCall) (*Timer, error) {
	if c.Fn == 0 || l.host == nil {
		return nil, EINVAL
	}
	t := &Timer{loop: l, call: l.withID(c)}
	t.fire = t.expire
	return t, t.Start(first, repeat)
}

// repeatNs checks a repeat interval and converts it to nanoseconds,
// rounded up as every deadline is.
func repeatNs(repeat float64) (int64, error) {
	if math.IsNaN(repeat) || repeat < 0 || repeat > timers.MaxDelay {
		return 0, EINVAL
	}
	return int64(math.Ceil(repeat * timers.NsPerSecond)), nil
}

// Start (re)starts the timer: first seconds from now, then every repeat.
// A running timer is stopped first.
func (t *Timer) Start(first, repeat float64) error {
	r, err := repeatNs(repeat)
	if err != nil {
		return err
	}
	ns, err := t.loop.Deadline(first, true)
	if err != nil {
		return err
	}
	t.Stop()
	t.repeat = r
	t.arm(ns)
	return nil
}

// Again restarts the timer with its repeat interval as the delay (libuv's
// uv_timer_again): for a repeating timer, running or stopped, the next
// expiry is repeat from now; a timer with repeat 0 is left as it is.
// ECLOSED on a closed loop.
func (t *Timer) Again() error {
	if t.loop.closed.Load() {
		return ECLOSED
	}
	if t.repeat == 0 {
		return nil
	}
	t.Stop()
	t.arm(monoNow() + t.repeat)
	return nil
}

// SetRepeat sets the repeat interval (seconds, 0: no repeat), used from the
// next expiry or Again on; EINVAL for NaN, negative or too long.
func (t *Timer) SetRepeat(repeat float64) error {
	r, err := repeatNs(repeat)
	if err != nil {
		return err
	}
	t.repeat = r
	return nil
}

// Repeat is the repeat interval in seconds.
func (t *Timer) Repeat() float64 { return float64(t.repeat) / timers.NsPerSecond }

// Stop stops the timer; stopping a stopped timer does nothing.
func (t *Timer) Stop() {
	if h := t.h; h != nil {
		t.h = nil
		h.Cancel()
		t.loop.ReleaseHandle(h)
		if t.unrefd {
			t.loop.refs.quietTimers--
		}
	}
}

// Active reports whether the timer is armed (started, and neither stopped
// nor, once, expired; false once the loop is closed).
func (t *Timer) Active() bool { return t.h != nil && !t.loop.closed.Load() }

// When is the next expiry in loop seconds; ok false while not Active.
func (t *Timer) When() (when float64, ok bool) {
	if !t.Active() {
		return 0, false
	}
	return t.h.When(), true
}

// arm schedules the next expiry at when (loop ns), holding the handle.
func (t *Timer) arm(when int64) {
	h := t.loop.scheduleNs(when, t.fire, HostCall{})
	t.loop.RetainHandle(h)
	t.h = h
	if t.unrefd {
		t.loop.refs.quietTimers++
	}
	if !t.listed {
		t.loop.listTimer(t)
	}
}

// expire is the armed handle's callback: drop it, re-arm a repeating timer
// (so the callback may stop or restart it), then run the callback. A Go
// callback's panic is the handle's (callGo reports it).
func (t *Timer) expire() {
	l := t.loop
	if h := t.h; h != nil {
		t.h = nil
		l.ReleaseHandle(h) // the loop drops its own reference after this call
		if t.unrefd {
			l.refs.quietTimers--
		}
	}
	if t.repeat > 0 {
		t.arm(monoNow() + t.repeat)
	}
	if t.gofn != nil {
		t.gofn()
		return
	}
	buf := l.host.Buffer(1)
	buf[0] = t.call
	l.host.Run(l, 1)
}
