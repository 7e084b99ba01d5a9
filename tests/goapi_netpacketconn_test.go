// SPDX-License-Identifier: MIT

package tests

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	ll "github.com/libloop/libloop/bindings/go"
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

// isTimeoutErr: os.ErrDeadlineExceeded in a net.Error whose Timeout() is
// true, as net's own deadlines give.
func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

// Datagrams both ways with a net.UDPConn: contents, order on loopback,
// the sender's address (as the peer sees it), LocalAddr.
func TestGoAPINetPacketConnWithGoPeer(t *testing.T) {
	l, _ := runningLoop(t)
	pc := listenPacketConn(t, l)
	peer := udpGoPeer(t)
	la, ok := pc.LocalAddr().(*net.UDPAddr)
	if !ok || !la.IP.Equal(net.IPv4(127, 0, 0, 1)) || la.Port == 0 {
		t.Fatalf("LocalAddr %v: want 127.0.0.1 and the chosen port", pc.LocalAddr())
	}
	const n = 50
	for i := range n {
		if _, err := peer.WriteTo(fmt.Appendf(nil, "ping %d", i), la); err != nil {
			t.Fatal(err)
		}
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 100)
	for i := range n {
		k, from, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if want := fmt.Sprintf("ping %d", i); string(buf[:k]) != want {
			t.Fatalf("datagram %d is %q, want %q", i, buf[:k], want)
		}
		if _, isUDP := from.(*net.UDPAddr); !isUDP || from.String() != peer.LocalAddr().String() {
			t.Fatalf("from %#v, want the peer's %v as a *net.UDPAddr", from, peer.LocalAddr())
		}
		reply := fmt.Appendf(nil, "pong %d", i)
		if k2, err := pc.WriteTo(reply, from); err != nil || k2 != len(reply) {
			t.Fatalf("WriteTo: %d, %v", k2, err)
		}
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := range n {
		k, from, err := peer.ReadFrom(buf)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if want := fmt.Sprintf("pong %d", i); string(buf[:k]) != want || from.String() != la.String() {
			t.Fatalf("reply %d is %q from %v, want %q from %v", i, buf[:k], from, want, la)
		}
	}
}

// An empty datagram is one datagram; a datagram longer than the buffer
// is cut to it and its rest is lost, as a UDP socket's read does.
func TestGoAPINetPacketConnShortBufferAndEmpty(t *testing.T) {
	l, _ := runningLoop(t)
	pc := listenPacketConn(t, l)
	peer := udpGoPeer(t)
	peer.WriteTo([]byte("0123456789"), pc.LocalAddr())
	peer.WriteTo(nil, pc.LocalAddr())
	peer.WriteTo([]byte("next"), pc.LocalAddr())
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	small := make([]byte, 4)
	for _, want := range []string{"0123", "", "next"} {
		k, _, err := pc.ReadFrom(small)
		if err != nil || string(small[:k]) != want {
			t.Fatalf("ReadFrom: %q, %v; want %q", small[:k], err, want)
		}
	}
}

// Deadlines: a past one fails ReadFrom and WriteTo at once, a pending
// ReadFrom ends at its deadline and when a new one is set, and nothing is
// lost: a datagram that comes after is read.
func TestGoAPINetPacketConnDeadlines(t *testing.T) {
	l, _ := runningLoop(t)
	pc := listenPacketConn(t, l)
	peer := udpGoPeer(t)
	pc.SetDeadline(time.Now().Add(-time.Second))
	if _, _, err := pc.ReadFrom(make([]byte, 10)); !isTimeoutErr(err) {
		t.Fatalf("ReadFrom past its deadline: %v", err)
	}
	if _, err := pc.WriteTo([]byte("x"), peer.LocalAddr()); !isTimeoutErr(err) {
		t.Fatalf("WriteTo past its deadline: %v", err)
	}
	pc.SetDeadline(time.Time{})
	start := time.Now()
	pc.SetReadDeadline(start.Add(50 * time.Millisecond))
	if _, _, err := pc.ReadFrom(make([]byte, 10)); !isTimeoutErr(err) || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("ReadFrom with a 50ms deadline: %v after %v", err, time.Since(start))
	}
	pc.SetReadDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() { _, _, err := pc.ReadFrom(make([]byte, 10)); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	pc.SetReadDeadline(time.Now())
	select {
	case err := <-errc:
		if !isTimeoutErr(err) {
			t.Fatalf("pending ReadFrom after a new deadline: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a new deadline did not end a pending ReadFrom")
	}
	pc.SetReadDeadline(time.Time{})
	peer.WriteTo([]byte("after"), pc.LocalAddr())
	buf := make([]byte, 10)
	if k, _, err := pc.ReadFrom(buf); err != nil || string(buf[:k]) != "after" {
		t.Fatalf("ReadFrom after the deadlines: %q, %v", buf[:k], err)
	}
}

// Close wakes a pending ReadFrom with net.ErrClosed; every later call is
// net.ErrClosed; a second Close is an error; the socket is gone (its port
// binds again); no goroutine is left behind.
func TestGoAPINetPacketConnClose(t *testing.T) {
	l, _ := runningLoop(t)
	before := runtime.NumGoroutine()
	pc, err := l.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, _, err := pc.ReadFrom(make([]byte, 10)); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	if err := pc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("pending ReadFrom after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake ReadFrom")
	}
	if _, err := pc.WriteTo([]byte("x"), pc.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("WriteTo after Close: %v", err)
	}
	if _, _, err := pc.ReadFrom(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("ReadFrom after Close: %v", err)
	}
	if err := pc.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetDeadline after Close: %v", err)
	}
	if err := pc.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed PacketConn's port stays bound: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	pc := listenPacketConn(t, l)
	peer := udpGoPeer(t)
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := pc.WriteTo(fmt.Appendf(nil, "%d/%d", w, i), peer.LocalAddr()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	got := make(map[string]bool)
	var mu sync.Mutex
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32)
			for {
				k, _, err := pc.ReadFrom(buf)
				if err != nil {
					return // the deadline ends the readers
				}
				mu.Lock()
				if got[string(buf[:k])] {
					t.Errorf("%q read twice", buf[:k])
				}
				got[string(buf[:k])] = true
				mu.Unlock()
			}
		}()
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 32)
	for i := range writers * each {
		k, from, err := peer.ReadFrom(buf)
		if err != nil {
			t.Fatalf("peer got %d of %d: %v", i, writers*each, err)
		}
		peer.WriteTo(buf[:k], from)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == writers*each || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	pc.SetReadDeadline(time.Now())
	wg.Wait()
	if len(got) != writers*each {
		t.Fatalf("read %d distinct datagrams, want %d", len(got), writers*each)
	}
}

// Bad input gets an error, never a panic: an unknown network, a bad
// address, a WriteTo to anything but a valid *net.UDPAddr (EINVAL), an
// oversized datagram (EMSGSIZE); a send the kernel refuses later comes
// back, as a syscall.Errno, from the next WriteTo, once.
func TestGoAPINetPacketConnErrors(t *testing.T) {
	l, _ := runningLoop(t)
	var unknown net.UnknownNetworkError
	if _, err := l.ListenPacket("tcp", "127.0.0.1:0"); !errors.As(err, &unknown) {
		t.Errorf("ListenPacket tcp: %v", err)
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:70000", "no..such..host:0"} {
		pc, err := l.ListenPacket("udp", bad)
		var oe *net.OpError
		if err == nil {
			pc.Close()
			t.Errorf("ListenPacket(%q) succeeded", bad)
		} else if !errors.As(err, &oe) || oe.Op != "listen" {
			t.Errorf("ListenPacket(%q): %v, want a *net.OpError with Op listen", bad, err)
		}
	}
	pc := listenPacketConn(t, l)
	cases := []net.Addr{
		nil,
		(*net.UDPAddr)(nil),
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9},
		&net.UDPAddr{IP: net.IP{1, 2, 3}, Port: 9},
		&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: -1},
		&net.UDPAddr{IP: net.IPv6loopback, Port: 9, Zone: "no-such-interface"},
	}
	for _, a := range cases {
		if _, err := pc.WriteTo([]byte("x"), a); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("WriteTo(%#v): %v, want EINVAL", a, err)
		}
	}
	peer := udpGoPeer(t)
	if _, err := pc.WriteTo(make([]byte, 65536), peer.LocalAddr()); !errors.Is(err, syscall.EMSGSIZE) {
		t.Errorf("WriteTo of 65536 bytes: %v, want EMSGSIZE", err)
	}
	// An IPv4 socket cannot send to an IPv6 peer: the kernel's error
	// comes back from a later WriteTo.
	v6 := &net.UDPAddr{IP: net.IPv6loopback, Port: 9}
	if _, err := pc.WriteTo([]byte("x"), v6); err != nil {
		t.Fatalf("first WriteTo to %v: %v (posted, not yet sent)", v6, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		_, err = pc.WriteTo([]byte("y"), peer.LocalAddr())
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		t.Fatalf("the refused send: %v, want a syscall.Errno", err)
	}
	if _, err := pc.WriteTo([]byte("z"), peer.LocalAddr()); err != nil {
		t.Fatalf("WriteTo after the reported error: %v", err)
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4)
	for {
		k, _, err := peer.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(buf[:k], []byte("z")) {
			break
		}
	}
}

// A "udp6" PacketConn on ::1 talks with an IPv6 peer both ways.
func TestGoAPINetPacketConnIPv6(t *testing.T) {
	if !nettest.SupportsIPv6() {
		t.Skip("no IPv6")
	}
	peer, err := nettest.NewLocalPacketListener("udp6")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	l, _ := runningLoop(t)
	pc, err := l.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.WriteTo([]byte("six"), peer.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 8)
	k, from, err := peer.ReadFrom(buf)
	if err != nil || string(buf[:k]) != "six" || from.String() != pc.LocalAddr().String() {
		t.Fatalf("peer read %q from %v (%v); want \"six\" from %v", buf[:k], from, err, pc.LocalAddr())
	}
	peer.WriteTo([]byte("back"), from)
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	k, from2, err := pc.ReadFrom(buf)
	if err != nil || string(buf[:k]) != "back" || from2.String() != peer.LocalAddr().String() {
		t.Fatalf("ReadFrom: %q from %v (%v)", buf[:k], from2, err)
	}
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
