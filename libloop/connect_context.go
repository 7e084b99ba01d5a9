// SPDX-License-Identifier: MIT

package libloop

import "context"

// DialTCPContext is DialTCPWith bounded by ctx: if ctx is done before the
// connect completes, the lookup's outcome is ignored, the attempts under
// way are closed and done gets ctx.Err(). A TLS handshake already under way
// is bounded by the TLS config's handshake timeout instead. Call it on the
// loop thread; done runs there, exactly once.
func (l *Loop) DialTCPContext(ctx context.Context, host string, port int, opts DialOptions, proto Protocol, done DialFunc) error {
	if ctx == nil || done == nil {
		return EINVAL
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := func() bool { return false }
	d, err := l.dialTCP(host, port, opts, proto, func(t *Transport, err error) {
		stop()
		done(t, err)
	})
	if err != nil {
		return err
	}
	stop = context.AfterFunc(ctx, func() {
		l.CallSoonThreadsafe(func() { d.abort(ctx.Err()) })
	})
	return nil
}

// abort ends a connect that has not completed: its attempts are closed
// and done gets err. It does nothing once the connect has an outcome.
func (d *dialer) abort(err error) {
	if d.finished || d.loop.closed.Load() {
		return
	}
	d.finish()
	d.done(nil, err)
}
