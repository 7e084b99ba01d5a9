// SPDX-License-Identifier: MIT

package libloop

import "github.com/libloop/libloop/internal/timers"

// CallSoon schedules fn to run in a later iteration, after everything already
// scheduled (FIFO). The returned handle belongs to the loop: use it only until
// the callback runs unless RetainHandle was called.
func (l *Loop) CallSoon(fn func()) (*Handle, error) {
	if fn == nil {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	h := l.newHandle()
	h.gofn = fn
	l.ready.push(h)
	return h, nil
}

// CallSoonForeign schedules a host callback; see CallSoon.
func (l *Loop) CallSoonForeign(fc ForeignCall) (*Handle, error) {
	if fc.Fn == 0 {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	h := l.newHandle()
	h.foreign = fc
	l.ready.push(h)
	return h, nil
}

// CallSoonHost queues a host callback with no Handle: it cannot be
// cancelled, and it is called with the loop's Tag as its id (ForeignPlain),
// in FIFO order with every other callback. The cheapest call_soon.
func (l *Loop) CallSoonHost(fn, arg uintptr) error {
	if fn == 0 {
		return EINVAL
	}
	if l.closed.Load() {
		return ECLOSED
	}
	l.ready.pushHost(fn, arg)
	return nil
}

// deadline converts loop-clock seconds to loop nanoseconds by the deadline
// rules (timers.Absolute): EINVAL for NaN and times too far ahead.
func deadline(when float64) (int64, error) {
	ns, ok := timers.Absolute(when)
	if !ok {
		return 0, EINVAL
	}
	return ns, nil
}

// deadlineAfter is deadline for a delay from now (timers.Relative).
func deadlineAfter(delay float64) (int64, error) {
	ns, ok := timers.Relative(delay, monoNow())
	if !ok {
		return 0, EINVAL
	}
	return ns, nil
}

// CallAt schedules fn at loop time when (seconds). A deadline in the past
// runs in the next iteration; equal deadlines run in scheduling order.
func (l *Loop) CallAt(when float64, fn func()) (*Handle, error) {
	if fn == nil {
		return nil, EINVAL
	}
	return l.schedule(when, fn, ForeignCall{})
}

// CallAtForeign is CallAt for a host callback.
func (l *Loop) CallAtForeign(when float64, fc ForeignCall) (*Handle, error) {
	if fc.Fn == 0 {
		return nil, EINVAL
	}
	return l.schedule(when, nil, fc)
}

// CallLater schedules fn after delay seconds (a negative delay is due at once,
// as in asyncio).
func (l *Loop) CallLater(delay float64, fn func()) (*Handle, error) {
	if fn == nil {
		return nil, EINVAL
	}
	return l.scheduleAfter(delay, fn, ForeignCall{})
}

// CallLaterForeign is CallLater for a host callback.
func (l *Loop) CallLaterForeign(delay float64, fc ForeignCall) (*Handle, error) {
	if fc.Fn == 0 {
		return nil, EINVAL
	}
	return l.scheduleAfter(delay, nil, fc)
}

func (l *Loop) scheduleAfter(delay float64, fn func(), fc ForeignCall) (*Handle, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	d, err := deadlineAfter(delay)
	if err != nil {
		return nil, err
	}
	return l.scheduleNs(d, fn, fc), nil
}

// Deadline checks a timer's time as CallAt (relative false) or CallLater
// (true) would and returns its deadline in loop nanoseconds, for a host
// that queues the timer itself (a TimerSource): ECLOSED, EINVAL as they.
func (l *Loop) Deadline(t float64, relative bool) (int64, error) {
	if l.closed.Load() {
		return 0, ECLOSED
	}
	if relative {
		return deadlineAfter(t)
	}
	return deadline(t)
}

func (l *Loop) schedule(when float64, fn func(), fc ForeignCall) (*Handle, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	ns, err := deadline(when)
	if err != nil {
		return nil, err
	}
	return l.scheduleNs(ns, fn, fc), nil
}

func (l *Loop) scheduleNs(ns int64, fn func(), fc ForeignCall) *Handle {
	h := l.newHandle()
	h.gofn, h.foreign = fn, fc
	h.timer = true
	h.when = ns
	l.timers.push(h)
	return h
}
