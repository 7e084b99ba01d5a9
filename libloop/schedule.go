// SPDX-License-Identifier: MIT

package libloop

import "math"

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
func (l *Loop) CallSoonForeign(fc HostCall) (*Handle, error) {
	if fc.Fn == 0 {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	h := l.newHandle()
	h.call = fc
	l.ready.push(h)
	return h, nil
}

// CallSoonHost queues a host callback with no Handle: it cannot be
// cancelled, and it is called with the loop's Tag as its id (HostPlain),
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

// maxDelay bounds deadlines so nanosecond arithmetic cannot overflow (~100
// years); larger values are rejected as EINVAL.
const maxDelay = 100 * 365 * 24 * 3600.0

// deadline converts loop-clock seconds to nanoseconds, rejecting NaN and
// values too far in the future.
func deadline(when float64) (int64, error) {
	if math.IsNaN(when) || when > maxDelay {
		return 0, EINVAL
	}
	if math.IsInf(when, -1) {
		return math.MinInt64, nil // before every finite deadline, as asyncio's -inf
	}
	if when < -maxDelay {
		when = -maxDelay // any finite time in the distant past is simply due
	}
	return int64(math.Ceil(when * 1e9)), nil
}

// CallAt schedules fn at loop time when (seconds). A deadline in the past
// runs in the next iteration; equal deadlines run in scheduling order.
func (l *Loop) CallAt(when float64, fn func()) (*Handle, error) {
	if fn == nil {
		return nil, EINVAL
	}
	return l.schedule(when, fn, HostCall{})
}

// CallAtForeign is CallAt for a host callback.
func (l *Loop) CallAtForeign(when float64, fc HostCall) (*Handle, error) {
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
	return l.scheduleAfter(delay, fn, HostCall{})
}

// CallLaterForeign is CallLater for a host callback.
func (l *Loop) CallLaterForeign(delay float64, fc HostCall) (*Handle, error) {
	if fc.Fn == 0 {
		return nil, EINVAL
	}
	return l.scheduleAfter(delay, nil, fc)
}

func (l *Loop) scheduleAfter(delay float64, fn func(), fc HostCall) (*Handle, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	d, err := deadline(delay)
	if err != nil {
		return nil, err
	}
	// asyncio computes now + delay: for -inf that is -inf, and for a delay
	// past -100 years "now" vanishes into it, so those are absolute
	// deadlines here too (call_later(-1e300) ties with call_at(-1e300)).
	if delay >= -maxDelay {
		d += monoNow()
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
	ns, err := deadline(t)
	if err == nil && relative && t >= -maxDelay { // as scheduleAfter
		ns += monoNow()
	}
	return ns, err
}

func (l *Loop) schedule(when float64, fn func(), fc HostCall) (*Handle, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	ns, err := deadline(when)
	if err != nil {
		return nil, err
	}
	return l.scheduleNs(ns, fn, fc), nil
}

func (l *Loop) scheduleNs(ns int64, fn func(), fc HostCall) *Handle {
	h := l.newHandle()
	h.gofn, h.call = fn, fc
	h.timer = true
	h.when = ns
	l.timers.push(h)
	return h
}
