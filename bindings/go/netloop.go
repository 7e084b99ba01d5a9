// SPDX-License-Identifier: MIT

package libloop

// streamLoop is the loop as internal/streamconn sees it, for the Conn
// and Listener that goroutines other than the loop's use.
type streamLoop struct{ l *Loop }

// Post runs f on the loop thread (CallSoonThreadsafe).
func (s streamLoop) Post(f func()) error { return s.l.CallSoonThreadsafe(f) }

// Closed reports whether the loop was closed (or released), after which
// nothing posted to it runs; it reads the Go-side channel, no call into
// the library.
func (s streamLoop) Closed() bool {
	select {
	case <-s.l.closed:
		return true
	default:
		return false
	}
}

// Done returns the channel closed once the loop is closed.
func (s streamLoop) Done() <-chan struct{} { return s.l.closed }
