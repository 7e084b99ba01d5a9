// SPDX-License-Identifier: MIT

package libloop

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// ReusePort asks ListenTCP for SO_REUSEPORT (LL_REUSE_PORT).
const ReusePort = 1

// ListenTCP listens on host:port. An empty host means every interface,
// IPv4 and IPv6 (both on the same port, also when port is 0); a name is
// resolved in place, so pass an address where blocking matters. Each
// accepted connection is a stream transport with TCP_NODELAY whose events
// go to proto (nil: to the loop's sink).
func (l *Loop) ListenTCP(host string, port, backlog, flags int, proto Protocol) (*Server, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if !validPort(port) || backlog < 0 || flags&^ReusePort != 0 {
		return nil, EINVAL
	}
	if backlog == 0 {
		backlog = 100 // asyncio's default
	}
	var ips []netip.Addr
	if host == "" {
		ips = []netip.Addr{netip.IPv4Unspecified(), netip.IPv6Unspecified()}
	} else {
		var err error
		if ips, err = lookupHost(host); err != nil {
			return nil, err
		}
	}
	s := l.newServer(proto)
	var firstErr error
	for _, ip := range ips {
		fd, err := bindTCP(ip, port, flags, host == "")
		if err == nil {
			if err = s.listenOn(fd, backlog, true); err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if port == 0 {
			// Every address of the server shares the port the first one got.
			port, _ = s.Port()
		}
	}
	if len(s.sockets) == 0 {
		return nil, firstErr
	}
	return s, nil
}

func bindTCP(ip netip.Addr, port, flags int, wildcard bool) (int, error) {
	sa, family := addrSockaddr(ip, port)
	fd, err := newSocket(family, unix.SOCK_STREAM)
	if err != nil {
		return -1, err
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if flags&ReusePort != 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if family == unix.AF_INET6 && wildcard {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
