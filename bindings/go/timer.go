// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// Timer is a timer that may repeat (an ll_handle id from ll_timer_start),
// running until Stop, Release or the loop's Close; Release it when done.
type Timer struct {
	loop *Loop
	id   uint64 // 0 once released
	key  uintptr
}

// StartTimer starts a timer that calls fn after first seconds, then every
// repeat seconds (0: once) until Stop (ll_timer_start). fn runs on the
// loop's thread.
func (l *Loop) StartTimer(first, repeat float64, fn func()) (*Timer, error) {
	if fn == nil {
		return nil, EINVAL
	}
	t := &Timer{loop: l}
	var err error
	t.key, t.id, err = register(&cbEntry{kind: kindPlain, owner: l.id, timer: t, plain: func(uint64) { fn() }},
		func(cb, key uintptr, out unsafe.Pointer) int32 {
			return l.raw().TimerStart(l.id, first, repeat, cb, key, out)
		})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ID returns the timer's ll_handle id, or 0 once released.
func (t *Timer) ID() uint64 { return t.id }

// Again restarts a repeating timer, repeat seconds from now (ll_timer_again).
func (t *Timer) Again() error {
	if t.id == 0 {
		return EBADHANDLE
	}
	return check(t.loop.raw().TimerAgain(t.id))
}

// SetRepeat sets the repeat interval in seconds (ll_timer_set_repeat).
func (t *Timer) SetRepeat(repeat float64) error {
	if t.id == 0 {
		return EBADHANDLE
	}
	return check(t.loop.raw().TimerSetRepeat(t.id, repeat))
}

// When returns the next expiry in loop seconds; ok false while stopped.
func (t *Timer) When() (float64, bool) {
	if t.id == 0 {
		return 0, false
	}
	w := t.loop.raw().TimerWhen(t.id)
	return w, w >= 0
}

// Active reports whether the timer is armed (ll_handle_cancelled is 0).
func (t *Timer) Active() bool {
	return t.id != 0 && t.loop.raw().HandleCancelled(t.id) == 0
}

// Stop stops the timer (ll_handle_cancel); Again or SetRepeat and Again
// can start it again. Stopping a stopped timer does nothing.
func (t *Timer) Stop() error {
	if t.id == 0 {
		return nil
	}
	return check(t.loop.raw().HandleCancel(t.id))
}

// Release stops the timer for good and drops its id (ll_release).
// Releasing twice does nothing.
func (t *Timer) Release() error {
	if t.id == 0 {
		return nil
	}
	if err := check(t.loop.raw().Release(t.id)); err != nil {
		return err
	}
	t.id = 0
	removeEntry(t.key)
	return nil
}

// release drops the id of a timer whose loop was closed.
func (t *Timer) release() {
	if t.id != 0 {
		t.loop.raw().Release(t.id)
		t.id = 0
	}
}
