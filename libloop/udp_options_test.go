// SPDX-License-Identifier: MIT

package libloop

import (
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openUDPTest opens a datagram transport bound to host:0 that records what
// it receives.
func openUDPTest(t *testing.T, l *Loop, host string, got *[]string) *Transport {
	t.Helper()
	tr, err := l.OpenUDP(host, 0, "", 0, 0, func(ev *Event) bool {
		if ev.Kind == DatagramReceived && got != nil {
			*got = append(*got, string(ev.Data))
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func sockoptInt(t *testing.T, fd, level, opt int) int {
	t.Helper()
	v, err := unix.GetsockoptInt(fd, level, opt)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Each setter reaches the socket: read back with getsockopt.
func TestUDPOptionsReachSocket(t *testing.T) {
	l := newTestLoop(t)
	v4 := openUDPTest(t, l, "127.0.0.1", nil)
	v6 := openUDPTest(t, l, "::1", nil)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("SetBroadcast", v4.SetBroadcast(true))
	if sockoptInt(t, int(v4.fd), unix.SOL_SOCKET, unix.SO_BROADCAST) != 1 {
		t.Error("SO_BROADCAST not set")
	}
	must("SetBroadcast off", v4.SetBroadcast(false))
	if sockoptInt(t, int(v4.fd), unix.SOL_SOCKET, unix.SO_BROADCAST) != 0 {
		t.Error("SO_BROADCAST not cleared")
	}
	must("SetTTL", v4.SetTTL(7))
	must("SetTTL v6", v6.SetTTL(9))
	must("SetMulticastTTL", v4.SetMulticastTTL(3))
	must("SetMulticastTTL v6", v6.SetMulticastTTL(4))
	must("SetMulticastLoop", v4.SetMulticastLoop(false))
	must("SetMulticastLoop v6", v6.SetMulticastLoop(false))
	for _, c := range []struct {
		tr             *Transport
		level, opt, is int
	}{
		{v4, unix.IPPROTO_IP, unix.IP_TTL, 7},
		{v6, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, 9},
		{v4, unix.IPPROTO_IP, unix.IP_MULTICAST_TTL, 3},
		{v6, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS, 4},
		{v4, unix.IPPROTO_IP, unix.IP_MULTICAST_LOOP, 0},
		{v6, unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_LOOP, 0},
	} {
		if got := sockoptInt(t, int(c.tr.fd), c.level, c.opt); got != c.is {
			t.Errorf("option %d/%d = %d, want %d", c.level, c.opt, got, c.is)
		}
	}
	must("SetMulticastInterface", v4.SetMulticastInterface("127.0.0.1"))
	a, err := unix.GetsockoptInet4Addr(int(v4.fd), unix.IPPROTO_IP, unix.IP_MULTICAST_IF)
	if err != nil || a != [4]byte{127, 0, 0, 1} {
		t.Errorf("IP_MULTICAST_IF = %v, %v", a, err)
	}
	must("SetMulticastInterface v6", v6.SetMulticastInterface("::%lo"))
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if got := sockoptInt(t, int(v6.fd), unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_IF); got != lo.Index {
		t.Errorf("IPV6_MULTICAST_IF = %d, want lo's index %d", got, lo.Index)
	}
}

// Bad input is EINVAL or ECLOSED and changes nothing.
func TestUDPOptionsBadInput(t *testing.T) {
	l := newTestLoop(t)
	v4 := openUDPTest(t, l, "127.0.0.1", nil)
	v6 := openUDPTest(t, l, "::1", nil)
	for _, c := range []struct {
		what string
		err  error
		want error
	}{
		{"TTL 0", v4.SetTTL(0), EINVAL},
		{"TTL 256", v4.SetTTL(256), EINVAL},
		{"multicast TTL -1", v4.SetMulticastTTL(-1), EINVAL},
		{"interface not an address", v4.SetMulticastInterface("eth0"), EINVAL},
		{"IPv6 interface on IPv4", v4.SetMulticastInterface("::1"), EINVAL},
		{"IPv4 interface on IPv6", v6.SetMulticastInterface("127.0.0.1"), EINVAL},
		{"unknown zone", v6.SetMulticastInterface("::%no-such-if"), EINVAL},
		{"unicast group", v4.SetMembership("127.0.0.1", "", Join), EINVAL},
		{"IPv6 group on IPv4", v4.SetMembership("ff12::1", "", Join), EINVAL},
		{"IPv4 group on IPv6", v6.SetMembership("239.1.1.1", "", Join), EINVAL},
		{"bad op", v4.SetMembership("239.1.1.1", "", 3), EINVAL},
		{"multicast source", v4.SetSourceMembership("232.1.1.1", "", "239.1.1.1", Join), EINVAL},
		{"source of the other family", v4.SetSourceMembership("232.1.1.1", "", "::1", Join), EINVAL},
		{"leave a group not joined", v4.SetMembership("239.1.1.9", "127.0.0.1", Leave), unix.EADDRNOTAVAIL},
	} {
		if c.err != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.err, c.want)
		}
	}
	if err := v4.SetTTL(42); err != nil {
		t.Fatal(err)
	}
	v4.SetTTL(0)
	if got := sockoptInt(t, int(v4.fd), unix.IPPROTO_IP, unix.IP_TTL); got != 42 {
		t.Errorf("a refused SetTTL changed the TTL to %d", got)
	}
	// Not a datagram transport: a stream socket.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[1])
	stream, err := l.OpenTransport(pair[0], Stream, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SetBroadcast(true); err != EINVAL {
		t.Errorf("SetBroadcast on a stream: %v, want EINVAL", err)
	}
	stream.Close()
	v4.Close()
	if err := v4.SetTTL(5); err != ECLOSED {
		t.Errorf("SetTTL after Close: %v, want ECLOSED", err)
	}
}

// A member of a group hears what a sender on the same host sends to it,
// until it leaves; joining twice is the kernel's EADDRINUSE.
func TestUDPMulticastMembership(t *testing.T) {
	l := newTestLoop(t)
	var got []string
	member := openUDPTest(t, l, "0.0.0.0", &got)
	if err := member.SetMembership("239.255.77.1", "127.0.0.1", Join); err != nil {
		t.Fatal(err)
	}
	if err := member.SetMembership("239.255.77.1", "127.0.0.1", Join); err != unix.EADDRINUSE {
		t.Errorf("second join: %v, want EADDRINUSE", err)
	}
	sender := openUDPTest(t, l, "127.0.0.1", nil)
	if err := sender.SetMulticastInterface("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	raw, _ := member.SockName()
	to := sockaddr4([4]byte{239, 255, 77, 1}, SockaddrPort(raw))
	sender.SendTo([]byte("one"), to)
	runUntil(t, l, 5*time.Second, func() bool { return len(got) == 1 })
	if got[0] != "one" {
		t.Fatalf("member got %q", got)
	}
	if err := member.SetMembership("239.255.77.1", "127.0.0.1", Leave); err != nil {
		t.Fatal(err)
	}
	// Source-specific: joined for 127.0.0.1's datagrams only.
	if err := member.SetSourceMembership("232.1.2.3", "127.0.0.1", "127.0.0.1", Join); err != nil {
		t.Fatal(err)
	}
	sender.SendTo([]byte("two"), sockaddr4([4]byte{232, 1, 2, 3}, SockaddrPort(raw)))
	runUntil(t, l, 5*time.Second, func() bool { return len(got) == 2 })
	if got[1] != "two" {
		t.Fatalf("member got %q", got)
	}
	if err := member.SetSourceMembership("232.1.2.3", "127.0.0.1", "127.0.0.1", Leave); err != nil {
		t.Fatal(err)
	}
	// IPv6 on loopback: join and leave by interface name.
	v6 := openUDPTest(t, l, "::", nil)
	if err := v6.SetMembership("ff12::77", "::%lo", Join); err != nil {
		t.Fatal(err)
	}
	if err := v6.SetSourceMembership("ff32::8000:1", "::%lo", "::1", Join); err != nil {
		t.Fatal(err)
	}
	if err := v6.SetMembership("ff12::77", "::%lo", Leave); err != nil {
		t.Fatal(err)
	}
}

// sockaddr4 is a raw struct sockaddr_in for a:port.
func sockaddr4(a [4]byte, port int) []byte {
	var sa unix.RawSockaddrInet4
	sa.Family = unix.AF_INET
	sa.Port = uint16(port>>8) | uint16(port&0xff)<<8
	sa.Addr = a
	return (*[unix.SizeofSockaddrInet4]byte)(unsafe.Pointer(&sa))[:]
}
