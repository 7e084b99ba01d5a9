// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	ll "github.com/libloop/libloop/bindings/go"
	"github.com/libloop/libloop/internal/conntest"
)

// The binding's net.PacketConn over a libloop.so UDP transport, with the
// loop on a goroutine of its own and a peer from Go's net package: what a
// program that hands a PacketConn to a DNS or QUIC library relies on.

// udpGoPeer is a net.UDPConn on 127.0.0.1 (nettest's local packet
// listener): the real peer the PacketConn talks to.
func udpGoPeer(t *testing.T) net.PacketConn {
	t.Helper()
	c, err := nettest.NewLocalPacketListener("udp4")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// bindingPacketListen is l's ListenPacket as internal/conntest's
// PacketConn checks call it.
func bindingPacketListen(l *ll.Loop) conntest.ListenPacket {
	return func(network, address string) (net.PacketConn, error) {
		pc, err := l.ListenPacket(network, address)
		if err != nil {
			return nil, err
		}
		return pc, nil
	}
}

// listenPacketConn opens a PacketConn on 127.0.0.1 of a running loop.
func listenPacketConn(t *testing.T, l *ll.Loop) *ll.PacketConn {
	t.Helper()
	pc, err := l.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// Datagrams both ways with a net.UDPConn: contents, order on loopback,
// the sender's address (as the peer sees it), LocalAddr.
func TestGoAPINetPacketConnWithGoPeer(t *testing.T) {
	l, _ := runningLoop(t)
	conntest.PacketWithPeer(t, bindingPacketListen(l))
}

// An empty datagram is one datagram; a datagram longer than the buffer
// is cut to it and its rest is lost, as a UDP socket's read does.
func TestGoAPINetPacketConnShortBufferAndEmpty(t *testing.T) {
	l, _ := runningLoop(t)
	conntest.PacketShortBufferAndEmpty(t, bindingPacketListen(l))
}

// Deadlines: a past one fails ReadFrom and WriteTo at once, a pending
// ReadFrom ends at its deadline and when a new one is set, and nothing is
// lost: a datagram that comes after is read.
func TestGoAPINetPacketConnDeadlines(t *testing.T) {
	l, _ := runningLoop(t)
	conntest.PacketDeadlines(t, bindingPacketListen(l))
}

// Close wakes a pending ReadFrom with net.ErrClosed; every later call is
// net.ErrClosed; a second Close is an error; the socket is gone (its port
// binds again); no goroutine is left behind.
func TestGoAPINetPacketConnClose(t *testing.T) {
	l, _ := runningLoop(t)
	before := runtime.NumGoroutine()
	conntest.PacketClose(t, bindingPacketListen(l))
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && runtime.NumGoroutine() > before {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before ListenPacket", n, before)
	}
}

// The loop's close wakes a pending ReadFrom and WriteTo's later calls with
// net.ErrClosed.
func TestGoAPINetPacketConnLoopClose(t *testing.T) {
	l, stop := runningLoop(t)
	pc, err := l.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, _, err := pc.ReadFrom(make([]byte, 10)); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	stop()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("pending ReadFrom after the loop closed: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loop's close did not wake ReadFrom")
	}
	if _, err := pc.WriteTo([]byte("x"), pc.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("WriteTo after the loop closed: %v", err)
	}
}

// A reader that falls behind past the receive queue's bound (256
// datagrams): the PacketConn pauses the transport and the rest waits in
// the kernel; reading resumes it, and every datagram arrives once, in
// order. (The peer sends in small steps, so the kernel drops nothing.)
func TestGoAPINetPacketConnPastTheQueueBound(t *testing.T) {
	l, _ := runningLoop(t)
	pc := listenPacketConn(t, l)
	peer := udpGoPeer(t)
	const total = 256 + 64
	for i := range total {
		if _, err := peer.WriteTo(fmt.Appendf(nil, "%d", i), pc.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		if i%16 == 15 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	for i := range total {
		k, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("datagram %d of %d: %v", i, total, err)
		}
		if want := fmt.Sprint(i); string(buf[:k]) != want {
			t.Fatalf("datagram %d is %q", i, buf[:k])
		}
	}
}

// Concurrent readers and writers on one PacketConn: every datagram a
// writer posts reaches the peer, every one the peer echoes is read by
// exactly one reader.
func TestGoAPINetPacketConnConcurrent(t *testing.T) {
	l, _ := runningLoop(t)
	conntest.PacketConcurrent(t, bindingPacketListen(l))
}

// Bad input gets an error, never a panic: an unknown network, a bad
// address, a WriteTo to anything but a valid *net.UDPAddr (EINVAL), an
// oversized datagram (EMSGSIZE); a send the kernel refuses later comes
// back, as a syscall.Errno, from the next WriteTo, once.
func TestGoAPINetPacketConnErrors(t *testing.T) {
	l, _ := runningLoop(t)
	conntest.PacketErrors(t, bindingPacketListen(l), func(address string, err error) {
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "listen" {
			t.Errorf("ListenPacket(%q): %v, want a *net.OpError with Op listen", address, err)
		}
	})
}

// A "udp6" PacketConn on ::1 talks with an IPv6 peer both ways.
func TestGoAPINetPacketConnIPv6(t *testing.T) {
	l, _ := runningLoop(t)
	conntest.PacketIPv6(t, bindingPacketListen(l))
}

// PacketConns opened, used and closed leave no callback entry behind
// (the loop's own, the batch sink's and the route's come with its first
// transport and stay), and no goroutine.
func TestGoAPINetPacketConnNoLeak(t *testing.T) {
	l, _ := runningLoop(t)
	peer := udpGoPeer(t)
	base := -1
	goroutines := 0
	buf := make([]byte, 8)
	for i := range 21 {
		if i == 1 {
			base = liveCallbacksSettled(t, l, base)
			goroutines = runtime.NumGoroutine()
		}
		pc, err := l.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		pc.WriteTo([]byte("x"), peer.LocalAddr())
		peer.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, from, err := peer.ReadFrom(buf); err != nil {
			t.Fatal(err)
		} else {
			peer.WriteTo([]byte("y"), from)
		}
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := pc.ReadFrom(buf); err != nil {
			t.Fatal(err)
		}
		pc.Close()
	}
	if n := liveCallbacksSettled(t, l, base); n > base {
		t.Errorf("%d callback entries left after 20 closed PacketConns", n-base)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after 20 closed PacketConns, %d after the first", n, goroutines)
	}
}

// linkLocal finds an interface with an IPv6 link-local address, or skips.
func linkLocal(t *testing.T) (net.IP, string) {
	t.Helper()
	ifs, _ := net.Interfaces()
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, _ := ifi.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() == nil && n.IP.IsLinkLocalUnicast() {
				return n.IP, ifi.Name
			}
		}
	}
	t.Skip("no interface with an IPv6 link-local address")
	return nil, ""
}

// A datagram from a link-local peer names the peer's interface as its
// zone (the sender's scope id), as a net.UDPConn's ReadFrom does, and
// WriteTo answers to it there.
func TestGoAPINetPacketConnLinkLocalZone(t *testing.T) {
	ip, ifname := linkLocal(t)
	peer, err := net.ListenUDP("udp6", &net.UDPAddr{IP: ip, Zone: ifname})
	if err != nil {
		t.Skip("cannot bind the link-local address:", err)
	}
	defer peer.Close()
	l, _ := runningLoop(t)
	pc, err := l.ListenPacket("udp6", "[::]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	to := &net.UDPAddr{IP: ip, Zone: ifname, Port: pc.LocalAddr().(*net.UDPAddr).Port}
	if _, err := peer.WriteTo([]byte("hello"), to); err != nil {
		t.Fatal(err)
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 8)
	k, from, err := pc.ReadFrom(buf)
	if err != nil || string(buf[:k]) != "hello" {
		t.Fatalf("ReadFrom = %q, %v", buf[:k], err)
	}
	ua := from.(*net.UDPAddr)
	if !ua.IP.Equal(ip) || ua.Zone != ifname || ua.Port != peer.LocalAddr().(*net.UDPAddr).Port {
		t.Fatalf("the sender is %v, want %v", from, peer.LocalAddr())
	}
	if _, err := pc.WriteTo([]byte("back"), from); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	if k, _, err := peer.ReadFrom(buf); err != nil || string(buf[:k]) != "back" {
		t.Fatalf("the peer read %q, %v", buf[:k], err)
	}
}
