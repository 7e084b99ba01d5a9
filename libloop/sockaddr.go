// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/libloop/libloop/internal/streamconn"
)

// ENONAME (a name that does not resolve) is declared with the other codes.

// addrSockaddr makes the socket address for ip:port.
func addrSockaddr(ip netip.Addr, port int) (unix.Sockaddr, int) {
	if ip.Is4() || ip.Is4In6() {
		return &unix.SockaddrInet4{Port: port, Addr: ip.Unmap().As4()}, unix.AF_INET
	}
	sa := &unix.SockaddrInet6{Port: port, Addr: ip.As16()}
	return sa, unix.AF_INET6
}

// validPort reports whether port fits a TCP/UDP port.
func validPort(port int) bool { return port >= 0 && port <= 65535 }

// parseNumeric returns host's addresses when it needs no lookup: an IP
// literal, or "localhost" (streamconn.NumericHost, shared with the purego
// binding's LookupHost).
func parseNumeric(host string) ([]netip.Addr, bool) { return streamconn.NumericHost(host) }

// lookupHost resolves host; it blocks, so the loop calls it off its thread
// (connect) or only for names a caller chose to resolve in place.
func lookupHost(host string) ([]netip.Addr, error) {
	if ips, ok := parseNumeric(host); ok {
		return ips, nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil || len(ips) == 0 {
		return nil, ENONAME
	}
	for i := range ips {
		ips[i] = ips[i].Unmap().WithZone("")
	}
	return ips, nil
}

// rawSockaddr returns a copy of fd's own (peer false) or peer's address as
// a raw struct sockaddr.
func rawSockaddr(fd int, peer bool) ([]byte, error) {
	var rsa unix.RawSockaddrAny
	n := uint32(unsafe.Sizeof(rsa))
	call := uintptr(unix.SYS_GETSOCKNAME)
	if peer {
		call = unix.SYS_GETPEERNAME
	}
	_, _, e := unix.RawSyscall(call, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return nil, e
	}
	n = min(n, uint32(unsafe.Sizeof(rsa)))
	b := make([]byte, n)
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&rsa)), n))
	return b, nil
}

// SockName returns the transport's local address as a raw struct sockaddr.
func (t *Transport) SockName() ([]byte, error) {
	if t.state == tClosed {
		return nil, ECLOSED
	}
	return rawSockaddr(int(t.fd), false)
}

// PeerName returns the connected peer's address as a raw struct sockaddr.
func (t *Transport) PeerName() ([]byte, error) {
	if t.state == tClosed {
		return nil, ECLOSED
	}
	return rawSockaddr(int(t.fd), true)
}

// SockaddrPort returns the port of a raw IPv4/IPv6 sockaddr, or -1.
func SockaddrPort(raw []byte) int {
	if len(raw) < 4 {
		return -1
	}
	// The family in host order, read from the bytes themselves: viewing a
	// 4-byte slice as a 16-byte RawSockaddr is an invalid conversion
	// (checkptr: "straddles multiple allocations"; FuzzSockaddrPort).
	fam := binary.NativeEndian.Uint16(raw)
	if fam != unix.AF_INET && fam != unix.AF_INET6 {
		return -1
	}
	return int(raw[2])<<8 | int(raw[3])
}
