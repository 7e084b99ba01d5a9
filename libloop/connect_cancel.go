// SPDX-License-Identifier: MIT

package libloop

// A connect can be abandoned before it completes, as asyncio's
// create_connection can be cancelled: the sockets under way are closed (a
// connected one whose TLS handshake runs too), no transport is made, the
// protocol hears nothing, and the connect's done gets the abort's error.
// Two things abort one: its future cancelled (DialTCPFor, DialUnixFor: the
// C ABI's connect futures) and its context done (DialTCPContext,
// DialUnixContext).

// DialTCPFor is DialTCPWith whose connect belongs to f, a pending future of
// the loop that has no other role (one NewFuture made): cancelling f before
// the connect completes aborts the connect, and done then gets ECANCELLED
// after f is cancelled. Otherwise done settles f as it sees fit. A connect
// that completes after f was settled some other way closes its transport
// unused, and done gets ECANCELLED.
func (l *Loop) DialTCPFor(f *Future, host string, port int, opts DialOptions, proto Protocol, done DialFunc) error {
	if err := l.checkDialFuture(f); err != nil {
		return err
	}
	d, err := l.dialTCP(host, port, opts, proto, done)
	if err != nil {
		return err
	}
	d.bind(f)
	return nil
}

// DialUnixFor is DialUnix whose connect belongs to f, as DialTCPFor's.
func (l *Loop) DialUnixFor(f *Future, path string, proto Protocol, done DialFunc) error {
	if err := l.checkDialFuture(f); err != nil {
		return err
	}
	d, err := l.dialUnix(path, proto, done)
	if err != nil {
		return err
	}
	d.bind(f)
	return nil
}

// checkDialFuture refuses a future a connect cannot own: nil, another
// loop's or one with a role (a task, a gather...) is EINVAL, a done one
// ESTATE.
func (l *Loop) checkDialFuture(f *Future) error {
	switch {
	case f == nil || f.loop != l || f.role != nil:
		return EINVAL
	case f.Done():
		return ESTATE
	}
	return nil
}

// bind makes d f's role, so that f's Cancel aborts d.
func (d *dialer) bind(f *Future) {
	d.fut = f
	f.role = d
}

// cancel is Future.Cancel on a connect's future: the future is cancelled
// first, so the abort's done finds it settled.
func (d *dialer) cancel(f *Future, msg string) bool {
	if !f.cancelSelf(msg) {
		return false
	}
	d.abort(ECANCELLED)
	return true
}

// disposed: the future is gone; the connect goes on unowned.
func (d *dialer) disposed(f *Future) {
	if d.fut == f {
		d.fut = nil
	}
}

// settled reports whether the connect's future already has an outcome.
func (d *dialer) settled() bool { return d.fut != nil && d.fut.Done() }

// abort ends a connect that has no outcome yet: its attempts are closed
// and done gets err; a TLS handshake under way is ended (its transport
// closed without events) and its done reports err. It does nothing once
// the connect has an outcome.
func (d *dialer) abort(err error) {
	if d.loop.closed.Load() {
		return
	}
	if t := d.hs; t != nil {
		d.abortErr = err
		t.finish(int(ECANCELLED)) // the handshake's callback calls done
		return
	}
	if d.finished {
		return
	}
	d.finish()
	d.done(nil, err)
}
