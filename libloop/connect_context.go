// SPDX-License-Identifier: MIT

package libloop

import "context"

// DialTCPContext is DialTCPWith bounded by ctx: if ctx is done before the
// connect completes, the lookup's outcome is ignored, the attempts under
// way are closed (a TLS handshake under way too) and done gets ctx.Err();
// no transport is made. Call it on the loop thread; done runs there,
// exactly once.
func (l *Loop) DialTCPContext(ctx context.Context, host string, port int, opts DialOptions, proto Protocol, done DialFunc) error {
	return l.dialContext(ctx, done, func(done DialFunc) (*dialer, error) {
		return l.dialTCP(host, port, opts, proto, done)
	})
}

// DialUnixContext is DialUnix bounded by ctx, as DialTCPContext.
func (l *Loop) DialUnixContext(ctx context.Context, path string, proto Protocol, done DialFunc) error {
	return l.dialContext(ctx, done, func(done DialFunc) (*dialer, error) {
		return l.dialUnix(path, proto, done)
	})
}

// dialContext starts a connect with dial and aborts it when ctx is done
// first (the abort is posted to the loop thread, where the dialer lives).
func (l *Loop) dialContext(ctx context.Context, done DialFunc, dial func(DialFunc) (*dialer, error)) error {
	if ctx == nil || done == nil {
		return EINVAL
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := func() bool { return false }
	d, err := dial(func(t *Transport, err error) {
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
