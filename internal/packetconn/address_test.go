// SPDX-License-Identifier: MIT

package packetconn

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A *net.UDPAddr goes to a raw sockaddr and back: IPv4 on an IPv4 socket,
// IPv4 mapped on an IPv6 one, IPv6; what is not an inet sockaddr decodes
// to nil.
func TestUDPAddrRoundTrip(t *testing.T) {
	cases := []struct {
		in   *net.UDPAddr
		v6   bool
		want string
		size uintptr // the sockaddr's family: sockaddr_in or sockaddr_in6
	}{
		{&net.UDPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 53}, false, "10.1.2.3:53", unix.SizeofSockaddrInet4},
		{&net.UDPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 53}, true, "10.1.2.3:53", unix.SizeofSockaddrInet6},
		{&net.UDPAddr{IP: net.IPv6loopback, Port: 65535}, true, "[::1]:65535", unix.SizeofSockaddrInet6},
		{&net.UDPAddr{IP: net.ParseIP("::ffff:192.0.2.1"), Port: 1}, false, "192.0.2.1:1", unix.SizeofSockaddrInet4},
	}
	for _, c := range cases {
		raw, err := UDPAddrToRaw(c.in, c.v6)
		if err != nil {
			t.Fatalf("UDPAddrToRaw(%v, v6 %v): %v", c.in, c.v6, err)
		}
		back := RawToUDPAddr(raw)
		if uintptr(len(raw)) != c.size || back == nil || back.String() != c.want {
			t.Errorf("%v (v6 %v) came back as %v, want %s", c.in, c.v6, back, c.want)
		}
	}
	if a := RawToUDPAddr([]byte{1, 0}); a != nil {
		t.Errorf("a unix sockaddr decoded as %v", a)
	}
	if a := RawToUDPAddr(nil); a != nil {
		t.Errorf("no bytes decoded as %v", a)
	}
	if _, err := UDPAddrToRaw(&net.UDPAddr{IP: net.IPv6loopback, Zone: "no-such-interface"}, true); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("an unknown zone: %v, want EINVAL", err)
	}
}

// ListenAddress takes the udp networks and net's address forms, with the
// network's wildcard for an empty host.
func TestListenAddress(t *testing.T) {
	if h, p, err := ListenAddress("udp6", ":53"); h != "::" || p != 53 || err != nil {
		t.Errorf("udp6 :53 = %q %d %v", h, p, err)
	}
	if h, p, err := ListenAddress("udp", "127.0.0.1:0"); h != "127.0.0.1" || p != 0 || err != nil {
		t.Errorf("udp 127.0.0.1:0 = %q %d %v", h, p, err)
	}
	if h, _, err := ListenAddress("udp4", ":1"); h != "0.0.0.0" || err != nil {
		t.Errorf("udp4 :1 = %q %v", h, err)
	}
	var une net.UnknownNetworkError
	if _, _, err := ListenAddress("tcp", ":1"); !errors.As(err, &une) {
		t.Errorf("tcp: %v", err)
	}
	var oe *net.OpError
	if _, _, err := ListenAddress("udp", "no-port"); !errors.As(err, &oe) || oe.Op != "listen" {
		t.Errorf("no port: %v", err)
	}
}
