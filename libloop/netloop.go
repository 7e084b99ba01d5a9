// SPDX-License-Identifier: MIT

package libloop

// streamLoop is the loop as internal/streamconn sees it, for the Conn,
// Listener and PacketConn that goroutines other than the loop's use. A
// one-pointer struct, so storing it in the interface allocates nothing.
type streamLoop struct{ l *Loop }

// Post runs f on the loop thread; ECLOSED once the loop is closed.
func (s streamLoop) Post(f func()) error { return s.l.CallSoonThreadsafe(f) }

// Closed reports whether the loop is closed.
func (s streamLoop) Closed() bool { return s.l.IsClosed() }

// Done returns the channel Close closes.
func (s streamLoop) Done() <-chan struct{} { return s.l.closeSig.wait() }
