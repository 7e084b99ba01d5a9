// SPDX-License-Identifier: MIT

package libloop

import (
	"time"
	"unsafe"
)

type handleState uint8

const (
	handlePending handleState = iota
	handleRan
	handleCancelled
)

// Handle is a scheduled callback (an ll_handle id). The binding releases the
// library id by itself once the callback has run or was cancelled, so a
// Handle needs no Release unless dropped early. Use it on the loop's thread.
type Handle struct {
	loop  *Loop
	id    uint64 // 0 once released
	key   uintptr
	when  float64
	state handleState
}

// ID returns the ll_handle id, or 0 once it has been released.
func (h *Handle) ID() uint64 { return h.id }

// When returns a timer's deadline in loop seconds (see Loop.Time), or 0 for
// a handle made by CallSoon.
func (h *Handle) When() float64 { return h.when }

// Cancel stops the callback from running; cancelling twice or after it ran
// does nothing. It fails with EBADHANDLE after an early Release.
func (h *Handle) Cancel() error {
	if h.state != handlePending {
		return nil
	}
	if h.id == 0 {
		return EBADHANDLE
	}
	if err := check(h.loop.raw().HandleCancel(h.id)); err != nil {
		return err
	}
	h.state = handleCancelled
	removeEntry(h.key)
	h.release()
	return nil
}

// Cancelled reports whether the handle was cancelled (asked of the library
// while the id is live).
func (h *Handle) Cancelled() bool {
	if h.id != 0 {
		if rc := h.loop.raw().HandleCancelled(h.id); rc >= 0 {
			return rc == 1
		}
	}
	return h.state == handleCancelled
}

// Release drops the library id early (ll_release); the callback still runs
// unless cancelled, but the Handle can no longer cancel it. Idempotent.
func (h *Handle) Release() error {
	if h.id == 0 {
		return nil
	}
	err := check(h.loop.raw().Release(h.id))
	if err == nil {
		h.id = 0
	}
	return err
}

func (h *Handle) release() {
	if h.id != 0 {
		h.loop.raw().Release(h.id)
		h.id = 0
	}
}

// fire runs the callback: the handle counts as run from the start (so the
// callback cancelling itself does nothing) and its id is released after.
func (h *Handle) fire(fn func()) {
	h.state = handleRan
	defer h.release()
	fn()
}

// drop is called when the loop was closed with the callback pending.
func (h *Handle) drop() {
	h.state = handleCancelled
	h.release()
}

// schedule registers fn and calls the scheduling function with the plain
// trampoline, its key and a C out slot for the handle id.
func (l *Loop) schedule(fn func(), timer bool, call func(cb, key uintptr, out unsafe.Pointer) int32) (*Handle, error) {
	if fn == nil {
		return nil, EINVAL
	}
	h := &Handle{loop: l}
	var err error
	h.key, h.id, err = register(&cbEntry{kind: kindPlain, once: true, owner: l.id, handle: h,
		plain: func(uint64) { h.fire(fn) }}, call)
	if err != nil {
		return nil, err
	}
	if timer {
		h.when = l.raw().TimerWhen(h.id)
	}
	return h, nil
}

// register adds the callback entry e and calls call with the plain
// trampoline, e's key and a C out slot; it returns the key and the id call
// wrote there (the entry removed again if call fails). Handles, hooks and
// repeating timers are made this way.
func register(e *cbEntry, call func(cb, key uintptr, out unsafe.Pointer) int32) (uintptr, uint64, error) {
	out, err := getSlot()
	if err != nil {
		return 0, 0, err
	}
	defer putSlot(out)
	key := addEntry(e)
	if err := check(call(CallbackPtr(), key, out)); err != nil {
		removeEntry(key)
		return 0, 0, err
	}
	return key, *(*uint64)(out), nil
}

// CallSoon schedules fn for the next iteration, after everything already
// ready (FIFO).
func (l *Loop) CallSoon(fn func()) (*Handle, error) {
	return l.schedule(fn, false, func(cb, key uintptr, out unsafe.Pointer) int32 {
		return l.raw().CallSoon(l.id, cb, key, out)
	})
}

// CallLater schedules fn after d. A timer never runs before its deadline;
// equal deadlines run in scheduling order; a negative d is due at once.
func (l *Loop) CallLater(d time.Duration, fn func()) (*Handle, error) {
	return l.CallLaterSeconds(d.Seconds(), fn)
}

// CallLaterSeconds is CallLater with the delay in seconds, as the C API
// takes it (NaN and values over ~100 years fail with EINVAL).
func (l *Loop) CallLaterSeconds(delay float64, fn func()) (*Handle, error) {
	return l.schedule(fn, true, func(cb, key uintptr, out unsafe.Pointer) int32 {
		return l.raw().CallLater(l.id, delay, cb, key, out)
	})
}

// CallAt schedules fn at loop time when (seconds, see Time).
func (l *Loop) CallAt(when float64, fn func()) (*Handle, error) {
	return l.schedule(fn, true, func(cb, key uintptr, out unsafe.Pointer) int32 {
		return l.raw().CallAt(l.id, when, cb, key, out)
	})
}

// CallSoonThreadsafe schedules fn from any goroutine and wakes the loop if
// it is blocked in poll. Every posted callback runs exactly once, in post order.
func (l *Loop) CallSoonThreadsafe(fn func()) error {
	if fn == nil {
		return EINVAL
	}
	key := addEntry(&cbEntry{kind: kindPlain, once: true, owner: l.id,
		plain: func(uint64) { fn() }})
	if err := check(l.raw().CallSoonThreadsafe(l.id, CallbackPtr(), key)); err != nil {
		removeEntry(key)
		return err
	}
	return nil
}
