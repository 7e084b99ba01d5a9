// SPDX-License-Identifier: MIT

package libloop

import "github.com/libloop/libloop/internal/timers"

// Handle is one scheduled callback: a call_soon entry, a timer, or an fd
// watcher's callback. Records are pooled per loop; a Handle is recycled when
// its last reference (the loop's while it is queued, the host's until
// ReleaseHandle) is dropped, so a host must not use one after releasing it.
type Handle struct {
	loop      *Loop
	gofn      func()
	futfn     func(*Future) // a Go done callback, called with fut
	fut       *Future
	call      HostCall
	when      int64  // deadline in loop nanoseconds; timers only
	seq       uint64 // scheduling order: breaks ties between equal deadlines
	pos       int32  // index in the dispatch batch while in one, else -1
	refs      int32
	cancelled bool
	timer     bool // scheduled by CallAt/CallLater
	inHeap    bool
	inBatch   bool
	unrefd    bool // a signal handler's: unreferenced (refs.go)
}

// Cancelled reports whether Cancel was called.
func (h *Handle) Cancelled() bool { return h.cancelled }

// When returns a timer's deadline in loop seconds (0 for a non-timer).
func (h *Handle) When() float64 {
	if !h.timer {
		return 0
	}
	return timers.Seconds(h.when)
}

// IsTimer reports whether the handle was made by CallAt or CallLater.
func (h *Handle) IsTimer() bool { return h.timer }

// Cancel stops the callback from running; cancelling twice, or after it ran,
// does nothing (asyncio's Handle.cancel).
func (h *Handle) Cancel() {
	if h.cancelled {
		return
	}
	h.cancelled = true
	l := h.loop
	if h.inHeap {
		l.timerCancelled++
	}
	if h.inBatch {
		l.dispatchBuf[h.pos].Fn = 0 // the batch skips a cleared slot
	}
	h.gofn = nil // drop what the closure keeps alive
}

// isGo reports whether the handle runs Go code rather than a host callback.
func (h *Handle) isGo() bool { return h.gofn != nil || h.futfn != nil }

// RetainHandle adds a host reference: the record will not be recycled until
// ReleaseHandle.
func (l *Loop) RetainHandle(h *Handle) { h.refs++ }

// ReleaseHandle drops a reference taken by RetainHandle.
func (l *Loop) ReleaseHandle(h *Handle) { l.unref(h) }

func (l *Loop) newHandle() *Handle {
	var h *Handle
	if n := len(l.freeHandles); n > 0 {
		h = l.freeHandles[n-1]
		l.freeHandles = l.freeHandles[:n-1]
	} else {
		h = &Handle{loop: l}
	}
	h.pos = -1
	h.refs = 1 // the loop's, dropped when it runs or is discarded
	l.changed()
	l.seq++
	h.seq = l.seq
	return h
}

func (l *Loop) unref(h *Handle) {
	h.refs--
	if h.refs > 0 {
		return
	}
	if f := h.fut; f != nil {
		h.fut = nil
		f.unhold() // the handle's hold: it ran, or was dropped unrun
	}
	*h = Handle{loop: l, pos: -1}
	if len(l.freeHandles) < maxFreeHandles {
		l.freeHandles = append(l.freeHandles, h)
	}
}

// maxFreeHandles bounds the pool so a burst of a million timers does not pin
// their memory forever.
const maxFreeHandles = 1 << 16
