// SPDX-License-Identifier: MIT

package libloop

import "context"

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

// openFor makes a transport for a goroutine other than the loop's: open
// runs on the loop thread (a connect, a UDP open: anything whose
// DialFuture gives the transport) and openFor waits for its transport.
// When ctx is done or the loop closes first, the future is cancelled,
// which aborts the connect (no transport, no fd left), and the error is
// ctx.Err() or ECLOSED; a transport made as ctx ended is aborted, since
// nobody will use it. Open's protocol hears ConnectionMade before
// openFor returns.
func (l *Loop) openFor(ctx context.Context, open func() (*DialFuture, error)) (*Transport, error) {
	if ctx == nil {
		return nil, EINVAL
	}
	var d *DialFuture
	var openErr error
	w := &waitOutcome{done: make(chan struct{})}
	start := func() {
		d1, err := open()
		w.complete(func() { d, openErr, d1 = d1, err, nil })
		if d1 != nil { // the caller gave up meanwhile
			d1.Cancel("open abandoned")
			d1.Release()
		}
	}
	if err := l.CallSoonThreadsafe(start); err != nil {
		return nil, err
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		if !w.abandon() {
			return nil, ctx.Err()
		}
	case <-l.closed:
		if !w.abandon() {
			return nil, ECLOSED
		}
	}
	if openErr != nil {
		return nil, openErr
	}
	t, err := d.Wait(ctx)
	l.CallSoonThreadsafe(func() {
		d.Release() // the transport lives on
		if err != nil && d.t != nil && !d.t.Lost() {
			// ctx ended just as the open completed (the future was
			// done, so the cancel did nothing): nobody will use it.
			d.t.Abort()
		}
	})
	return t, err
}
