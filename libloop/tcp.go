// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// ReusePort asks ListenTCP for SO_REUSEPORT (LL_REUSE_PORT).
const ReusePort = 1

// ListenTCP listens on host:port. An empty host means every interface,
// IPv4 and IPv6 (both on the same port, also when port is 0). A host name
// (not an address, not "localhost") is looked up in place only while the
// loop is not running; while it runs that would block it, and the answer
// is ENEEDASYNC: ListenTCPWith resolves off the loop thread. Each
// accepted connection is a stream transport with TCP_NODELAY whose events
// go to proto (nil: to the loop's sink). All or nothing, as asyncio's
// create_server: if any address fails to bind or listen (EADDRINUSE when
// the port is taken on one family) the sockets made so far are closed and
// that error returned; only an address family the system cannot make a
// socket for is skipped.
func (l *Loop) ListenTCP(host string, port, backlog, flags int, proto Protocol) (*Server, error) {
	if err := l.checkListen(port, backlog, flags); err != nil {
		return nil, err
	}
	ips, err := l.syncLookup(host)
	if err != nil {
		return nil, err
	}
	return l.listenAddrs(host, ips, port, backlog, flags, proto)
}

// ListenOptions are ListenTCPWith's arguments beside the address: the
// backlog (0: asyncio's 100), ReusePort, and TLS for a TLS server
// (ListenTLS).
type ListenOptions struct {
	Backlog, Flags int
	TLS            *TLSConfig
}

// ListenFunc receives a listen's outcome on the loop thread: the server,
// or the error.
type ListenFunc func(*Server, error)

// ListenTCPWith is ListenTCP (ListenTLS with opts.TLS) for any host, as
// asyncio's create_server: a name is resolved on the resolver pool
// (resolver.go), never on the loop thread. done runs on the loop thread,
// in a later callback, exactly once (unless the loop closes first); bad
// arguments are refused here, before anything is queued.
func (l *Loop) ListenTCPWith(host string, port int, opts ListenOptions, proto Protocol, done ListenFunc) error {
	if done == nil {
		return EINVAL
	}
	if err := l.checkListen(port, opts.Backlog, opts.Flags); err != nil {
		return err
	}
	listen := func(addrs [][]netip.Addr, err error) {
		var s *Server
		if err == nil {
			ips := addrs[0]
			if host == "" {
				ips = []netip.Addr{netip.IPv4Unspecified(), netip.IPv6Unspecified()}
			}
			s, err = l.listenAddrs(host, ips, port, opts.Backlog, opts.Flags, proto)
		}
		if err == nil && opts.TLS != nil {
			s.tls = opts.TLS
		}
		done(s, err)
	}
	return l.lookupThen([]string{host}, listen)
}

// checkListen refuses ListenTCP's bad arguments.
func (l *Loop) checkListen(port, backlog, flags int) error {
	if l.closed.Load() {
		return ECLOSED
	}
	if !validPort(port) || backlog < 0 || flags&^ReusePort != 0 {
		return EINVAL
	}
	return nil
}

// listenAddrs listens on ips (every interface when host is empty).
func (l *Loop) listenAddrs(host string, ips []netip.Addr, port, backlog, flags int, proto Protocol) (*Server, error) {
	if backlog == 0 {
		backlog = 100 // asyncio's default
	}
	for attempt := 0; ; attempt++ {
		s, shared, err := l.listenTCP(ips, port, backlog, flags, host == "", proto)
		// Port 0: the port the first socket got may be taken on another
		// family; another free port is tried a few times.
		if err == unix.EADDRINUSE && shared && attempt < 8 {
			continue
		}
		return s, err
	}
}

// listenTCP binds and listens on every address, or on none: on an error
// it closes what it opened. shared reports that the error came from a
// later socket binding the port the first one picked for port 0.
func (l *Loop) listenTCP(ips []netip.Addr, port, backlog, flags int, wildcard bool, proto Protocol) (*Server, bool, error) {
	s := l.newServer(proto)
	var skipped error
	for _, ip := range ips {
		fd, made, err := bindTCP(ip, port, flags, wildcard)
		if err != nil && !made {
			skipped = err // no socket of this family here (asyncio skips it too)
			continue
		}
		if err == nil {
			if err = s.listenOn(fd, backlog, true); err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			shared := len(s.sockets) > 0 && port != 0
			s.Close()
			return nil, shared, err
		}
		if port == 0 {
			// Every address of the server shares the port the first one got.
			port, _ = s.Port()
		}
	}
	if len(s.sockets) == 0 {
		return nil, false, skipped
	}
	return s, false, nil
}

// bindTCP makes a TCP socket bound to ip:port; made is false when the
// socket itself could not be made (its family is missing here).
func bindTCP(ip netip.Addr, port, flags int, wildcard bool) (fd int, made bool, err error) {
	sa, family := addrSockaddr(ip, port)
	fd, err = newSocket(family, unix.SOCK_STREAM)
	if err != nil {
		return -1, false, err
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if flags&ReusePort != 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			unix.Close(fd)
			return -1, true, err
		}
	}
	if family == unix.AF_INET6 && wildcard {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, true, err
	}
	return fd, true, nil
}
