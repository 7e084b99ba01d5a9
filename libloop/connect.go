// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// DialFunc receives a connect's outcome on the loop thread: the transport
// (its ConnectionMade already queued) or the last attempt's error.
type DialFunc func(t *Transport, err error)

// DialTCP connects to host:port, like asyncio's create_connection: a name
// is resolved on another goroutine, never on the loop thread; each address
// is tried in turn; the connected transport has TCP_NODELAY on. done runs
// on the loop thread, in a later callback, exactly once (unless the loop
// closes first).
func (l *Loop) DialTCP(host string, port int, proto Protocol, done DialFunc) error {
	return l.dialTCP(host, port, proto, done, nil)
}

// dialTCP is DialTCP; setup, when given, adjusts the dialer first.
func (l *Loop) dialTCP(host string, port int, proto Protocol, done DialFunc, setup func(*dialer)) error {
	if l.closed.Load() {
		return ECLOSED
	}
	if done == nil || !validPort(port) {
		return EINVAL
	}
	d := &dialer{loop: l, port: port, proto: proto, done: done, tcp: true}
	if setup != nil {
		setup(d)
	}
	if ips, ok := parseNumeric(host); ok {
		d.ips = ips
		_, err := l.CallSoon(d.next)
		return err
	}
	go func() {
		ips, err := lookupHost(host)
		l.CallSoonThreadsafe(func() {
			d.ips, d.lastErr = ips, err
			d.next()
		})
	}()
	return nil
}

// dialer is a connect in progress: the addresses left to try, and the
// socket of the current attempt while it waits for writability.
type dialer struct {
	loop    *Loop
	ips     []netip.Addr
	port    int
	unixSA  *unix.SockaddrUnix // a Unix-socket connect instead of ips
	tcp     bool
	fd      int
	proto   Protocol
	done    DialFunc
	lastErr error
	// tlsCfg set: a TLS connect (tls_dial.go) that handshakes with
	// serverName before ConnectionMade.
	tlsCfg     *TLSConfig
	serverName string
}

// next tries the next address; with none left it reports the last error.
func (d *dialer) next() {
	if d.loop.closed.Load() {
		return
	}
	for len(d.ips) > 0 || d.unixSA != nil {
		var sa unix.Sockaddr
		family := unix.AF_UNIX
		if d.unixSA != nil {
			sa, d.unixSA = d.unixSA, nil
		} else {
			sa, family = addrSockaddr(d.ips[0], d.port)
			d.ips = d.ips[1:]
		}
		fd, err := newSocket(family, unix.SOCK_STREAM)
		if err != nil {
			d.lastErr = err
			continue
		}
		err = unix.Connect(fd, sa)
		if err == nil {
			d.connected(fd)
			return
		}
		if err == unix.EINPROGRESS || err == unix.EINTR {
			d.fd = fd
			if err = d.loop.watchOwner(fd, d, evWrite); err == nil {
				return
			}
		}
		unix.Close(fd)
		d.lastErr = err
	}
	if d.lastErr == nil {
		d.lastErr = ENONAME
	}
	d.done(nil, d.lastErr)
}

// ioReady: the attempt finished; SO_ERROR says how.
func (d *dialer) ioReady(mask uint8) {
	d.loop.unwatchOwner(d.fd, d)
	errno, err := unix.GetsockoptInt(d.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && errno == 0 {
		d.connected(d.fd)
		return
	}
	unix.Close(d.fd)
	if err == nil {
		err = unix.Errno(errno)
	}
	d.lastErr = err
	d.next()
}

func (d *dialer) connected(fd int) {
	if d.tcp {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	t := d.loop.newTransport(fd, Stream, true, d.proto)
	if d.tlsCfg != nil {
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

// loopClosing abandons the attempt: the loop will not run again.
func (d *dialer) loopClosing() { unix.Close(d.fd) }
