// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"time"
)

// netWaits is what Conn, PacketConn and Listener share: the lock over
// their state, the signal their blocking calls sleep on, Close's flag and
// the deadlines. Each change a waiting call may care about (data, room,
// close, loss, a new deadline) is followed by broadcast under mu; a woken
// call checks its condition again, so a spurious wake-up is harmless.
type netWaits struct {
	loop    *Loop
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	closed  bool          // Close was called
	readDL  time.Time
	writeDL time.Time
}

func newNetWaits(l *Loop) netWaits {
	return netWaits{loop: l, changed: make(chan struct{})}
}

// broadcast wakes every call waiting; mu is held.
func (w *netWaits) broadcast() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// wait releases mu until a broadcast, the deadline passes (zero: none) or
// the loop closes, then takes it again. The caller checks its condition
// again.
func (w *netWaits) wait(deadline time.Time) {
	ch := w.changed
	closed := w.loop.closeSig.wait()
	w.mu.Unlock()
	defer w.mu.Lock()
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

// setDeadline sets the read and/or write deadline and wakes waiting calls
// to take it; false once Close was called.
func (w *netWaits) setDeadline(t time.Time, read, write bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	if read {
		w.readDL = t
	}
	if write {
		w.writeDL = t
	}
	w.broadcast()
	return true
}
