// SPDX-License-Identifier: MIT

package libloop

import "github.com/libloop/libloop/internal/timers"

// Scheduling: one entry per timing for a Go func (CallSoon, CallAt,
// CallLater, CallSoonThreadsafe) and one for a host callback (CallSoonHost,
// CallAtHost, CallSoonThreadsafeHost; threadsafe.go, hostbatch.go). A host
// asks for a Handle only when it will cancel the call; without one, a plain
// call with the loop's own id is kept by value in the ready queue or the
// timer heap, with no record per call (the hot path of ll_call_soon and
// ll_call_later with out == NULL).

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

// CallSoonHost is CallSoon for a host callback (c.ID 0: the loop's Tag).
// With handle false it returns no Handle and the call cannot be cancelled.
func (l *Loop) CallSoonHost(c HostCall, handle bool) (*Handle, error) {
	// The by-value case is the hot path (one per C call_soon that capi
	// flushes): kept small enough to inline, the rest out of line.
	if handle || !l.byValue(c.ID, c.Kind) || c.Fn == 0 || l.closed.Load() {
		return l.callSoonHandle(c, handle)
	}
	l.ready.pushHost(c.Fn, c.Arg)
	return nil, nil
}

// callSoonHandle is CallSoonHost with a record: a handle was asked for,
// or the call is not the loop's own plain call (or is refused).
func (l *Loop) callSoonHandle(c HostCall, handle bool) (*Handle, error) {
	if c.Fn == 0 {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if !handle && l.byValue(c.ID, c.Kind) {
		l.ready.pushHost(c.Fn, c.Arg)
		return nil, nil
	}
	h := l.newHandle()
	h.call = l.withID(c)
	l.ready.push(h)
	if !handle {
		return nil, nil
	}
	return h, nil
}

// byValue reports whether a call with this id and kind can be queued as
// its function and argument alone: a plain call with the loop's id, which
// the ready queue and the handle-less timers give back as
// HostCall{Fn, Arg, ID: l.Tag}.
func (l *Loop) byValue(id uint64, kind HostCallKind) bool {
	return kind == HostPlain && (id == 0 || id == l.Tag)
}

// withID gives a call with ID 0 the loop's Tag.
func (l *Loop) withID(c HostCall) HostCall {
	if c.ID == 0 {
		c.ID = l.Tag
	}
	return c
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
	ns, err := l.Deadline(when, false)
	if err != nil {
		return nil, err
	}
	return l.scheduleNs(ns, fn, HostCall{}), nil
}

// CallLater schedules fn after delay seconds (a negative delay is due at once,
// as in asyncio).
func (l *Loop) CallLater(delay float64, fn func()) (*Handle, error) {
	if fn == nil {
		return nil, EINVAL
	}
	ns, err := l.Deadline(delay, true)
	if err != nil {
		return nil, err
	}
	return l.scheduleNs(ns, fn, HostCall{}), nil
}

// CallAtHost schedules a host callback at when, in loop nanoseconds
// (Deadline converts CallAt's and CallLater's seconds; a host that keeps
// its own clock passes its deadlines as they are). handle as CallSoonHost.
func (l *Loop) CallAtHost(when int64, c HostCall, handle bool) (*Handle, error) {
	if c.Fn == 0 {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if !handle && l.byValue(c.ID, c.Kind) {
		l.pushHostTimer(when, c.Fn, c.Arg)
		return nil, nil
	}
	h := l.scheduleNs(when, nil, l.withID(c))
	if !handle {
		return nil, nil
	}
	return h, nil
}

// Deadline checks a timer's time as CallAt (relative false) or CallLater
// (true) would and returns its deadline in loop nanoseconds, for CallAtHost
// or a host that queues the timer itself (a TimerSource): ECLOSED, EINVAL
// as they.
func (l *Loop) Deadline(t float64, relative bool) (int64, error) {
	if l.closed.Load() {
		return 0, ECLOSED
	}
	if relative {
		return deadlineAfter(t)
	}
	return deadline(t)
}

func (l *Loop) scheduleNs(ns int64, fn func(), c HostCall) *Handle {
	h := l.newHandle()
	h.gofn, h.call = fn, c
	h.timer = true
	h.when = ns
	l.timers.push(h)
	return h
}
