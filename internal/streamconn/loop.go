// SPDX-License-Identifier: MIT

package streamconn

// Loop is what a Conn, Listener or Waits needs of the event loop its
// transport lives on.
type Loop interface {
	// Post runs f on the loop thread (CallSoonThreadsafe); an error once
	// the loop is closed, and then f never runs.
	Post(f func()) error
	// Closed reports whether the loop is closed.
	Closed() bool
	// Done returns a channel closed when the loop closes.
	Done() <-chan struct{}
}

// Transport is the loop-side half of a Conn: the stream transport's
// calls, made on the loop thread only. The core's and the binding's
// *Transport have these methods as they are.
type Transport interface {
	Write(p []byte) error
	WriteEOF() error
	Close() error
	PauseReading() error
	ResumeReading() error
}

// WritePauseReporter is a Transport that says at once, after a Write,
// whether it is above its high-water mark. A Conn over one takes that as
// its write pause after each chunk (besides the PauseWriting and
// ResumeWriting events), as the core's Conn always did.
type WritePauseReporter interface {
	WritePaused() bool
}
