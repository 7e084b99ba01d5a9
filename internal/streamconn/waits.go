// SPDX-License-Identifier: MIT

package streamconn

import (
	"sync"
	"time"
)

// Waits is what a Conn, a Listener and the core's PacketConn share: the
// lock over their state, the signal their blocking calls sleep on,
// Close's flag and the deadlines. Each change a waiting call may care
// about (data, room, close, loss, a new deadline) is followed by
// Broadcast under Mu; a woken call checks its condition again, so a
// spurious wake-up is harmless. Init it before use.
type Waits struct {
	// Mu guards the fields below and the owner's own state.
	Mu sync.Mutex
	// Closed is set by the owner's Close.
	Closed bool
	// ReadDL and WriteDL are the deadlines (zero: none).
	ReadDL  time.Time
	WriteDL time.Time

	loop    Loop
	changed chan struct{} // closed and replaced on every change
}

// Init readies w for a loop.
func (w *Waits) Init(loop Loop) {
	w.loop = loop
	w.changed = make(chan struct{})
}

// Broadcast wakes every call waiting; Mu is held.
func (w *Waits) Broadcast() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// Wait releases Mu until a Broadcast, the deadline passes (zero: none)
// or the loop closes, then takes it again. The caller checks its
// condition again.
func (w *Waits) Wait(deadline time.Time) {
	ch := w.changed
	closed := w.loop.Done()
	w.Mu.Unlock()
	defer w.Mu.Lock()
	if deadline.IsZero() {
		select {
		case <-ch:
		case <-closed:
		}
		return
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-ch:
	case <-closed:
	case <-timer.C:
	}
}

// SetDeadline sets the read and/or write deadline and wakes waiting calls
// to take it; false once Closed is set.
func (w *Waits) SetDeadline(t time.Time, read, write bool) bool {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	if w.Closed {
		return false
	}
	if read {
		w.ReadDL = t
	}
	if write {
		w.WriteDL = t
	}
	w.Broadcast()
	return true
}

// Expired reports whether deadline is set and passed.
func Expired(deadline time.Time) bool {
	return !deadline.IsZero() && !time.Now().Before(deadline)
}
