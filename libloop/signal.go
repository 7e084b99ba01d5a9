// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// Signals reach the loop through a self-pipe: the host's async-signal-safe
// handler writes the signal number, one byte per delivery, to the pipe's
// write end (SignalFD), and the loop runs the callback registered for that
// signal, once per byte, in a later iteration. The core installs no signal
// handler itself (it has no async-signal-safe code of its own, and Go's
// os/signal would take the signal over from the host).
type signalState struct {
	rfd, wfd int
	handlers map[int]*Handle // signal -> the callback to queue per delivery
}

// signalWatch is the pipe's read end registered with the selector.
type signalWatch struct{ l *Loop }

// SignalFD returns the write end of the loop's signal pipe, creating the
// pipe on first use. The handler writes one byte, the signal number.
func (l *Loop) SignalFD() (int, error) {
	if l.closed.Load() {
		return -1, ECLOSED
	}
	s := &l.signals
	if s.handlers != nil {
		return s.wfd, nil
	}
	var p [2]int
	if err := cloexecPipe(p[:]); err != nil {
		return -1, err
	}
	unix.SetNonblock(p[0], true)
	unix.SetNonblock(p[1], true) // a full pipe drops a delivery, never blocks a handler
	if err := l.watchOwner(p[0], signalWatch{l}, evRead); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return -1, err
	}
	l.setQuiet(p[0], signalWatch{l}, true) // the handlers count, not their pipe (refs.go)
	s.rfd, s.wfd = p[0], p[1]
	s.handlers = make(map[int]*Handle)
	return s.wfd, nil
}

// AddSignalHandler registers fn (a Go func) or fc (a host callback) to run
// once per delivery of sig, replacing any callback sig had.
func (l *Loop) AddSignalHandler(sig int, fn func(), fc HostCall) error {
	if sig <= 0 || sig >= 65 || (fn == nil && fc.Fn == 0) {
		return EINVAL
	}
	if _, err := l.SignalFD(); err != nil {
		return err
	}
	h := l.newHandle()
	h.gofn, h.call = fn, fc
	l.RemoveSignalHandler(sig)
	l.signals.handlers[sig] = h
	return nil
}

// RemoveSignalHandler drops sig's callback; it reports whether there was one.
func (l *Loop) RemoveSignalHandler(sig int) bool {
	h := l.signals.handlers[sig]
	if h == nil {
		return false
	}
	delete(l.signals.handlers, sig)
	if h.unrefd {
		l.refs.quietSignals--
	}
	h.Cancel()
	l.unref(h)
	return true
}

// NumSignalHandlers returns how many signals have a callback on this loop.
func (l *Loop) NumSignalHandlers() int { return len(l.signals.handlers) }

// ioReady reads the signal numbers written since the last time and queues
// each one's callback (a copy of the registered handle, so a removal
// between delivery and run still cancels nothing already queued).
func (w signalWatch) ioReady(mask uint8) {
	l := w.l
	var buf [128]byte
	for {
		n, err := unix.Read(l.signals.rfd, buf[:])
		if n <= 0 || err != nil {
			return
		}
		for _, b := range buf[:n] {
			if h := l.signals.handlers[int(b)]; h != nil {
				c := l.newHandle()
				c.gofn, c.call = h.gofn, h.call
				l.ready.push(c)
			}
		}
		if n < len(buf) {
			return
		}
	}
}

// loopClosing closes the pipe; the host must have unhooked its handler
// from the write end first (capi does, before Close).
func (w signalWatch) loopClosing() {
	s := &w.l.signals
	unix.Close(s.rfd)
	unix.Close(s.wfd)
	for sig, h := range s.handlers {
		h.Cancel()
		w.l.unref(h)
		delete(s.handlers, sig)
	}
	w.l.refs.quietSignals = 0
}
