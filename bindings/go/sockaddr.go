// SPDX-License-Identifier: MIT

package libloop

import (
	"encoding/binary"
	"net/netip"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// Addr is a socket address decoded from a C struct sockaddr: an IPv4 or
// IPv6 address and port, or a Unix socket path.
type Addr struct {
	Family   int            // syscall.AF_INET, AF_INET6, AF_UNIX; 0 for none
	AddrPort netip.AddrPort // AF_INET, AF_INET6
	Path     string         // AF_UNIX ("@name" for a Linux abstract name; "" unnamed)
}

// String formats the address as "1.2.3.4:80", "[::1]:80" or the path.
func (a Addr) String() string {
	switch a.Family {
	case syscall.AF_INET, syscall.AF_INET6:
		return a.AddrPort.String()
	case syscall.AF_UNIX:
		return a.Path
	case 0:
		return ""
	}
	return "family " + strconv.Itoa(a.Family)
}

// bsdSockaddr: the BSDs and macOS start a sockaddr with a length byte and a
// family byte; Linux with a 16-bit family in host order.
var bsdSockaddr = runtime.GOOS != "linux" && runtime.GOOS != "android"

func sockaddrFamily(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	if bsdSockaddr {
		return int(b[1])
	}
	return int(binary.NativeEndian.Uint16(b))
}

// ParseSockaddr decodes a raw struct sockaddr; an unknown family gives an
// Addr with only Family set, a short or empty one the zero Addr.
func ParseSockaddr(b []byte) Addr {
	fam := sockaddrFamily(b)
	a := Addr{Family: fam}
	switch fam {
	case 0:
		return Addr{}
	case syscall.AF_INET:
		if len(b) < 8 {
			return Addr{}
		}
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		a.AddrPort = netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:4]))
	case syscall.AF_INET6:
		if len(b) < 24 {
			return Addr{}
		}
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		a.AddrPort = netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:4]))
	case syscall.AF_UNIX:
		p := b[2:]
		if len(p) > 0 && p[0] == 0 && !bsdSockaddr {
			a.Path = "@" + string(p[1:]) // abstract: length-delimited
			return a
		}
		for i, c := range p {
			if c == 0 {
				p = p[:i]
				break
			}
		}
		a.Path = string(p)
	}
	return a
}

// inetSockaddr encodes ap as a struct sockaddr_in (IPv4, including
// IPv4-mapped addresses) or sockaddr_in6.
func inetSockaddr(ap netip.AddrPort) []byte {
	ip := ap.Addr()
	var b []byte
	var fam int
	if ip.Is4() || ip.Is4In6() {
		b, fam = make([]byte, 16), syscall.AF_INET
		v4 := ip.Unmap().As4()
		copy(b[4:8], v4[:])
	} else {
		b, fam = make([]byte, 28), syscall.AF_INET6
		v6 := ip.As16()
		copy(b[8:24], v6[:])
	}
	if bsdSockaddr {
		b[0], b[1] = byte(len(b)), byte(fam)
	} else {
		binary.NativeEndian.PutUint16(b, uint16(fam))
	}
	binary.BigEndian.PutUint16(b[2:4], ap.Port())
	return b
}

// sockaddrRoom is the size of the C buffer the binding reads addresses
// into (sizeof(struct sockaddr_storage)).
const sockaddrRoom = 128

// readSockaddr calls fn with a C buffer and a C length holding its room,
// and decodes what fn wrote.
func readSockaddr(fn func(addr, n unsafe.Pointer) int32) (Addr, error) {
	buf, err := NewCBuf(sockaddrRoom + 8)
	if err != nil {
		return Addr{}, err
	}
	defer buf.Free()
	b := unsafe.Slice((*byte)(buf.Ptr()), sockaddrRoom+8)
	binary.NativeEndian.PutUint32(b[sockaddrRoom:], sockaddrRoom)
	if err := check(fn(buf.Ptr(), unsafe.Add(buf.Ptr(), sockaddrRoom))); err != nil {
		return Addr{}, err
	}
	n := min(binary.NativeEndian.Uint32(b[sockaddrRoom:]), sockaddrRoom)
	return ParseSockaddr(b[:n]), nil
}
