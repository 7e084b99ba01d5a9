// SPDX-License-Identifier: MIT

package libloop

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Fuzz targets for what the ABI hands the core as text or bytes: host
// strings (parseNumeric), raw struct sockaddr bytes (SockaddrPort, and
// datagram destinations through SendTo).

// A host string is either an address literal (or "localhost"), whose
// addresses have no zone and make a socket address of the right family that
// carries the port, or it is left to the resolver; it never panics.
func FuzzParseNumeric(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::1", "localhost", "fe80::1%eth0", "::ffff:10.0.0.1", "1.2.3",
		"", "256.1.1.1", "[::1]", "0x7f.1", "example.com", "::", "1::2::3", "\x00"} {
		f.Add(s, uint16(80))
	}
	f.Fuzz(func(t *testing.T, host string, port uint16) {
		ips, ok := parseNumeric(host)
		if !ok {
			if len(ips) != 0 {
				t.Fatalf("%q: not numeric but %v", host, ips)
			}
			return
		}
		if len(ips) == 0 {
			t.Fatalf("%q: numeric with no address", host)
		}
		for _, ip := range ips {
			if !ip.IsValid() || ip.Zone() != "" {
				t.Fatalf("%q: address %v (zone %q)", host, ip, ip.Zone())
			}
			sa, fam := addrSockaddr(ip, int(port))
			switch a := sa.(type) {
			case *unix.SockaddrInet4:
				if fam != unix.AF_INET || a.Port != int(port) || netip.AddrFrom4(a.Addr) != ip.Unmap() {
					t.Fatalf("%q: %v -> inet4 %v:%d", host, ip, a.Addr, a.Port)
				}
			case *unix.SockaddrInet6:
				if fam != unix.AF_INET6 || a.Port != int(port) || netip.AddrFrom16(a.Addr) != ip {
					t.Fatalf("%q: %v -> inet6 %v:%d", host, ip, a.Addr, a.Port)
				}
			default:
				t.Fatalf("%q: sockaddr %T", host, sa)
			}
			// the literal's own text parses back to the same address
			if back, ok := parseNumeric(ip.String()); !ok || back[0] != ip {
				t.Fatalf("%q: %v does not round-trip (%v)", host, ip, back)
			}
		}
	})
}

// rawInet builds a struct sockaddr_in / sockaddr_in6 as the kernel lays it
// out (port in network order).
func rawInet(v6 bool, port uint16) []byte {
	if v6 {
		var sa unix.RawSockaddrInet6
		sa.Family = unix.AF_INET6
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], port)
		sa.Addr = netip.IPv6Loopback().As16()
		return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))...)
	}
	var sa unix.RawSockaddrInet4
	sa.Family = unix.AF_INET
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], port)
	sa.Addr = [4]byte{127, 0, 0, 1}
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))...)
}

// SockaddrPort reads any bytes without panicking: -1 unless they start
// like an IPv4/IPv6 sockaddr, else the port the kernel would read.
func FuzzSockaddrPort(f *testing.F) {
	f.Add([]byte{}, uint16(0), false)
	f.Add(rawInet(false, 8080), uint16(8080), false)
	f.Add(rawInet(true, 443), uint16(443), true)
	f.Add([]byte{1, 0, 0, 0}, uint16(0), false) // AF_UNIX
	f.Fuzz(func(t *testing.T, raw []byte, port uint16, v6 bool) {
		got := SockaddrPort(raw)
		if got < -1 || got > 65535 {
			t.Fatalf("SockaddrPort(%x) = %d", raw, got)
		}
		if len(raw) >= 2 {
			fam := binary.NativeEndian.Uint16(raw)
			if (fam == unix.AF_INET || fam == unix.AF_INET6) != (got >= 0) && len(raw) >= 4 {
				t.Fatalf("SockaddrPort(%x) = %d for family %d", raw, got, fam)
			}
		}
		if p := SockaddrPort(rawInet(v6, port)); p != int(port) {
			t.Fatalf("port %d read back as %d", port, p)
		}
	})
}

// A datagram's destination is raw bytes from the host. Whatever they are,
// SendTo returns nil (sent, queued, or reported as LL_ERROR_RECEIVED with
// a negative code) or EINVAL (too long), and the transport stays usable.
// Addresses of the inet families are pointed at the transport's own
// loopback address and port first: the test never sends a packet off this
// machine, nor to another program's socket.
func FuzzSendToAddr(f *testing.F) {
	f.Add(rawInet(false, 9), []byte("x"))
	f.Add(rawInet(true, 9), []byte{})
	f.Add([]byte{1, 0, '/', 't', 'm', 'p'}, []byte("unix"))
	f.Add(make([]byte, 200), []byte("long"))
	f.Add([]byte{2}, []byte("short"))
	l, err := New()
	if err != nil {
		f.Fatal(err)
	}
	var codes []int
	tr, err := l.OpenUDP("127.0.0.1", 0, "", 0, 0, func(ev *Event) bool {
		if ev.Kind == ErrorReceived {
			codes = append(codes, ev.Code)
		}
		return false
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { l.Close() })
	self, err := tr.SockName()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, addr, data []byte) {
		addr = append([]byte(nil), addr...)
		if len(addr) >= 4 {
			copy(addr[2:4], self[2:4]) // our own port
		}
		if len(addr) > 4 {
			// 127.0.0.1 where an IPv4 address sits: Linux reads it for
			// AF_UNSPEC too (udp_sendmsg's compatibility case)
			copy(addr[4:min(8, len(addr))], []byte{127, 0, 0, 1})
		}
		if len(addr) >= 2 {
			switch binary.NativeEndian.Uint16(addr) {
			case unix.AF_INET:
			case unix.AF_INET6:
				if len(addr) > 8 {
					lo := netip.IPv6Loopback().As16()
					copy(addr[8:min(24, len(addr))], lo[:])
				}
			default:
				if binary.NativeEndian.Uint16(addr) != unix.AF_UNIX {
					binary.NativeEndian.PutUint16(addr, unix.AF_UNSPEC) // refused by the kernel
				}
			}
		}
		err := tr.SendTo(data, addr)
		if err != nil && err != EINVAL {
			t.Fatalf("SendTo(%x): %v", addr, err)
		}
		if err == EINVAL && len(addr) <= int(unsafe.Sizeof(unix.RawSockaddrAny{})) {
			t.Fatalf("SendTo(%x) refused an address of a valid length", addr)
		}
		l.RunOnce(true)
		for _, c := range codes {
			if c >= 0 {
				t.Fatalf("error_received with code %d", c)
			}
		}
		codes = codes[:0]
		if tr.IsClosing() {
			t.Fatal("a bad destination closed the transport")
		}
	})
}
