// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// DialFunc receives a connect's outcome on the loop thread: the transport
// (its ConnectionMade already queued) or the last attempt's error.
type DialFunc func(t *Transport, err error)

// DialOptions are asyncio's create_connection arguments beyond host and
// port.
type DialOptions struct {
	// LocalHost and LocalPort bind the socket before it connects
	// (local_addr); each remote address is tried from a local address of
	// its family. Zero values: no bind.
	LocalHost string
	LocalPort int
	// HappyEyeballsDelay > 0 races the addresses (RFC 8305): when an
	// attempt has not connected within the delay the next one starts,
	// earlier ones keep going, and the first to connect wins; a failed
	// attempt starts the next at once. 0: one attempt at a time.
	HappyEyeballsDelay time.Duration
	// Interleave reorders the addresses to alternate families, with this
	// many of the first family first (RFC 8305's first address family
	// count). 0: asyncio's default, 1 when HappyEyeballsDelay > 0 and the
	// resolver's order otherwise; negative: the resolver's order.
	Interleave int
	// TLS, when set, makes it a TLS connect (see DialTLS); ServerName as
	// DialTLS's.
	TLS        *TLSConfig
	ServerName string
}

// DialTCP connects to host:port, like asyncio's create_connection: a name
// is resolved on the resolver pool (resolver.go), never on the loop thread;
// each address is tried in turn; the connected transport has TCP_NODELAY
// on. done runs on the loop thread, in a later callback, exactly once
// (unless the loop closes first).
func (l *Loop) DialTCP(host string, port int, proto Protocol, done DialFunc) error {
	return l.DialTCPWith(host, port, DialOptions{}, proto, done)
}

// DialTCPWith is DialTCP with asyncio's other create_connection arguments:
// a local address, happy eyeballs, interleaving, TLS.
func (l *Loop) DialTCPWith(host string, port int, opts DialOptions, proto Protocol, done DialFunc) error {
	_, err := l.dialTCP(host, port, opts, proto, done)
	return err
}

// dialTCP starts DialTCPWith's connect and returns it, for
// DialTCPContext to abort.
func (l *Loop) dialTCP(host string, port int, opts DialOptions, proto Protocol, done DialFunc) (*dialer, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if done == nil || !validPort(port) || !validPort(opts.LocalPort) || opts.HappyEyeballsDelay < 0 {
		return nil, EINVAL
	}
	if opts.TLS != nil && opts.ServerName == "" {
		opts.TLS.mu.Lock()
		opts.ServerName = opts.TLS.serverName
		opts.TLS.mu.Unlock()
		if opts.ServerName == "" {
			opts.ServerName = host
		}
	}
	d := &dialer{loop: l, port: port, proto: proto, done: done, tcp: true, opts: opts}
	bind := opts.LocalHost != "" || opts.LocalPort != 0
	ips, ok := parseNumeric(host)
	locals, localOK := []netip.Addr(nil), true
	if bind {
		locals, localOK = parseNumeric(opts.LocalHost)
		if opts.LocalHost == "" {
			locals, localOK = []netip.Addr{netip.IPv4Unspecified(), netip.IPv6Unspecified()}, true
		}
	}
	if ok && localOK {
		d.resolved(ips, locals, nil)
		if _, err := l.CallSoon(d.next); err != nil {
			return nil, err
		}
		return d, nil
	}
	// Names: both lookups in one job on the resolver pool.
	var lookupErr error
	f, err := l.RunInResolver(func() (uintptr, int) {
		if !ok {
			ips, lookupErr = lookupHost(host)
		}
		if lookupErr == nil && !localOK {
			locals, lookupErr = lookupHost(opts.LocalHost)
		}
		return 0, 0
	})
	if err != nil {
		return nil, err
	}
	f.AddDoneCallback(func(*Future) {
		d.resolved(ips, locals, lookupErr)
		d.next()
	})
	f.Release() // the job's and the callback's holds keep it until it has run
	return d, nil
}

// dialer is a connect in progress: the addresses left to try and the
// attempts under way (more than one only while happy eyeballs races them).
type dialer struct {
	loop     *Loop
	ips      []netip.Addr
	locals   []netip.Addr // addresses to bind to, by family; nil: no bind
	port     int
	unixSA   *unix.SockaddrUnix // a Unix-socket connect instead of ips
	tcp      bool
	opts     DialOptions
	attempts []*dialAttempt
	delay    *Handle // starts the next attempt when the current is slow
	proto    Protocol
	done     DialFunc
	lastErr  error
	finished bool
	// fut is the future the connect belongs to (DialTCPFor, DialUnixFor),
	// or nil: once it is settled, a completing connect is closed unused.
	fut *Future
	// hs is the connected transport while its TLS client handshake runs
	// (the connect is finished but has no outcome yet); abortErr is what
	// an abort during it reports.
	hs       *Transport
	abortErr error
}

// dialAttempt is one socket waiting for its connect to complete.
type dialAttempt struct {
	d  *dialer
	fd int
}

// resolved keeps the lookups' outcome, ordered for the attempts.
func (d *dialer) resolved(ips, locals []netip.Addr, err error) {
	d.lastErr = err
	d.locals = locals
	n := d.opts.Interleave
	if n == 0 && d.opts.HappyEyeballsDelay > 0 {
		n = 1
	}
	if n > 0 {
		ips = interleave(ips, n)
	}
	d.ips = ips
}

// interleave alternates the families of ips, first taking n of the first
// address's family, then one of each in turn (RFC 8305 section 4).
func interleave(ips []netip.Addr, n int) []netip.Addr {
	if len(ips) < 2 {
		return ips
	}
	first := ips[0].Is4()
	var same, other []netip.Addr
	for _, ip := range ips {
		if ip.Is4() == first {
			same = append(same, ip)
		} else {
			other = append(other, ip)
		}
	}
	out := make([]netip.Addr, 0, len(ips))
	take := min(n, len(same))
	out, same = append(out, same[:take]...), same[take:]
	for len(same) > 0 || len(other) > 0 {
		if len(other) > 0 {
			out, other = append(out, other[0]), other[1:]
		}
		if len(same) > 0 {
			out, same = append(out, same[0]), same[1:]
		}
	}
	return out
}

// next starts the next attempt. Addresses that fail at once are skipped;
// with none left and no attempt under way it reports the last error.
func (d *dialer) next() {
	if d.loop.closed.Load() || d.finished {
		return
	}
	if d.delay != nil {
		d.delay.Cancel()
		d.delay = nil
	}
	for len(d.ips) > 0 || d.unixSA != nil {
		fd, err := d.start()
		if err == nil {
			d.connected(fd)
			return
		}
		if err == unix.EINPROGRESS {
			a := &dialAttempt{d: d, fd: fd}
			if err = d.loop.watchOwner(fd, a, evWrite); err == nil {
				d.attempts = append(d.attempts, a)
				if d.opts.HappyEyeballsDelay > 0 && len(d.ips) > 0 {
					d.delay, _ = d.loop.CallLater(d.opts.HappyEyeballsDelay.Seconds(), d.next)
				}
				return
			}
			unix.Close(fd)
		}
		d.lastErr = err
	}
	if len(d.attempts) > 0 {
		return // the ones under way decide
	}
	if d.lastErr == nil {
		d.lastErr = ENONAME
	}
	d.finished = true
	d.done(nil, d.lastErr)
}

// start makes a socket for the next address and starts its connect: nil
// when it connected at once, EINPROGRESS when it is under way (the fd is
// returned either way), or the failure with the fd closed.
func (d *dialer) start() (int, error) {
	var sa, local unix.Sockaddr
	family := unix.AF_UNIX
	if d.unixSA != nil {
		sa, d.unixSA = d.unixSA, nil
	} else {
		ip := d.ips[0]
		d.ips = d.ips[1:]
		sa, family = addrSockaddr(ip, d.port)
		if d.locals != nil {
			l, ok := localFor(d.locals, ip.Is4())
			if !ok {
				return -1, EINVAL // asyncio: no local address of the family
			}
			local, _ = addrSockaddr(l, d.opts.LocalPort)
		}
	}
	fd, err := newSocket(family, unix.SOCK_STREAM)
	if err != nil {
		return -1, err
	}
	if local != nil {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
		if err := unix.Bind(fd, local); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	err = unix.Connect(fd, sa)
	if err == unix.EINTR {
		err = unix.EINPROGRESS // the connect goes on; SO_ERROR will say
	}
	if err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return -1, err
	}
	return fd, err
}

// localFor picks the first local address of the family.
func localFor(locals []netip.Addr, v4 bool) (netip.Addr, bool) {
	for _, l := range locals {
		if l.Is4() == v4 {
			return l, true
		}
	}
	return netip.Addr{}, false
}

// ioReady: the attempt finished; SO_ERROR says how. A failure starts the
// next address at once.
func (a *dialAttempt) ioReady(mask uint8) {
	d := a.d
	d.loop.unwatchOwner(a.fd, a)
	d.dropAttempt(a)
	errno, err := unix.GetsockoptInt(a.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && errno == 0 {
		d.connected(a.fd)
		return
	}
	unix.Close(a.fd)
	if err == nil {
		err = unix.Errno(errno)
	}
	d.lastErr = err
	d.next()
}

// loopClosing abandons the attempt: the loop will not run again.
func (a *dialAttempt) loopClosing() { unix.Close(a.fd) }

func (d *dialer) dropAttempt(a *dialAttempt) {
	for i, x := range d.attempts {
		if x == a {
			d.attempts = append(d.attempts[:i], d.attempts[i+1:]...)
			return
		}
	}
}

// finish marks the connect decided and drops its attempts still in
// flight and its happy-eyeballs delay.
func (d *dialer) finish() {
	d.finished = true
	if d.delay != nil {
		d.delay.Cancel()
		d.delay = nil
	}
	for _, a := range d.attempts {
		d.loop.unwatchOwner(a.fd, a)
		unix.Close(a.fd)
	}
	d.attempts = nil
}

// connected: fd won. The other attempts and the delay are dropped. A
// connect whose future was settled meanwhile (by its owner, not by a
// cancel, which aborts the attempts at once) closes fd unused.
func (d *dialer) connected(fd int) {
	d.finish()
	if d.settled() {
		unix.Close(fd)
		d.done(nil, ECANCELLED)
		return
	}
	if d.tcp {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	t := d.loop.newTransport(fd, Stream, true, d.proto)
	if d.opts.TLS != nil {
		d.handshake(t)
		return
	}
	if err := t.start(); err != nil {
		t.Refuse()
		d.done(nil, err)
		return
	}
	d.done(t, nil)
}
