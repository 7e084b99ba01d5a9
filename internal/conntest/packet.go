// SPDX-License-Identifier: MIT

package conntest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/libloop/libloop/internal/packetconn"
)

// The behaviour a program relies on of a loop's net.PacketConn, the
// core's and the purego binding's alike (both over internal/packetconn):
// each check opens its PacketConns with listen, on a loop that runs on a
// goroutine of its own, and talks with a peer from Go's net package.

// ListenPacket is a loop's ListenPacket as the checks call it: a nil
// net.PacketConn with the error (not a typed nil) when it fails.
type ListenPacket func(network, address string) (net.PacketConn, error)

// listen opens a PacketConn on 127.0.0.1, closed when the test ends.
func (lp ListenPacket) listen(t *testing.T) net.PacketConn {
	t.Helper()
	pc, err := lp("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// udpPeer is a net.UDPConn on 127.0.0.1: the real peer.
func udpPeer(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// IsTimeout: os.ErrDeadlineExceeded in a net.Error whose Timeout() is
// true, as net's own deadlines give.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

// PacketWithPeer: datagrams both ways with a net.UDPConn: contents, order
// on loopback, the sender's address as a *net.UDPAddr, LocalAddr.
func PacketWithPeer(t *testing.T, lp ListenPacket) {
	pc := lp.listen(t)
	peer := udpPeer(t)
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
		k, from, err := peer.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if want := fmt.Sprintf("pong %d", i); string(buf[:k]) != want || from.Port != la.Port {
			t.Fatalf("reply %d is %q from %v, want %q from %v", i, buf[:k], from, want, la)
		}
	}
}

// PacketShortBufferAndEmpty: an empty datagram is one datagram; a
// datagram longer than the buffer is cut to it and its rest is lost, as a
// UDP socket's read does.
func PacketShortBufferAndEmpty(t *testing.T, lp ListenPacket) {
	pc := lp.listen(t)
	peer := udpPeer(t)
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

// PacketDeadlines: a past deadline fails ReadFrom and WriteTo at once, a
// pending ReadFrom ends at its deadline and when a new one is set (errors
// satisfy IsTimeout), and nothing is lost: a datagram that comes after is
// read.
func PacketDeadlines(t *testing.T, lp ListenPacket) {
	pc := lp.listen(t)
	peer := udpPeer(t)
	pc.SetDeadline(time.Now().Add(-time.Second))
	if _, _, err := pc.ReadFrom(make([]byte, 10)); !IsTimeout(err) {
		t.Fatalf("ReadFrom past its deadline: %v", err)
	}
	if _, err := pc.WriteTo([]byte("x"), peer.LocalAddr()); !IsTimeout(err) {
		t.Fatalf("WriteTo past its deadline: %v", err)
	}
	pc.SetDeadline(time.Time{})
	start := time.Now()
	pc.SetReadDeadline(start.Add(50 * time.Millisecond))
	if _, _, err := pc.ReadFrom(make([]byte, 10)); !IsTimeout(err) || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("ReadFrom with a 50ms deadline: %v after %v", err, time.Since(start))
	}
	pc.SetReadDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() { _, _, err := pc.ReadFrom(make([]byte, 10)); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	pc.SetReadDeadline(time.Now())
	select {
	case err := <-errc:
		if !IsTimeout(err) {
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

// PacketConcurrent: four goroutines write and three read one PacketConn
// at once, against an echoing peer: every datagram is read exactly once.
func PacketConcurrent(t *testing.T, lp ListenPacket) {
	pc := lp.listen(t)
	peer := udpPeer(t)
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
		peer.WriteTo(buf[:k], from) // echo: the readers see each once
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

// PacketErrors: bad input gets an error, never a panic: an unknown
// network (net.UnknownNetworkError), a bad address, a WriteTo to anything
// but a valid *net.UDPAddr (EINVAL), an oversized datagram (EMSGSIZE); a
// send the kernel refuses later comes back, as a syscall.Errno, from a
// later WriteTo, once, and the PacketConn goes on. badListen checks each
// bad address's error further (nil: only that it fails).
func PacketErrors(t *testing.T, lp ListenPacket, badListen func(address string, err error)) {
	var unknown net.UnknownNetworkError
	if _, err := lp("tcp", "127.0.0.1:0"); !errors.As(err, &unknown) {
		t.Errorf("ListenPacket tcp: %v", err)
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:70000", "no..such..host:0"} {
		pc, err := lp("udp", bad)
		if err == nil {
			pc.Close()
			t.Errorf("ListenPacket(%q) succeeded", bad)
		} else if badListen != nil {
			badListen(bad, err)
		}
	}
	pc := lp.listen(t)
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
	peer := udpPeer(t)
	if _, err := pc.WriteTo(make([]byte, packetconn.MaxDatagram+1), peer.LocalAddr()); !errors.Is(err, syscall.EMSGSIZE) {
		t.Errorf("WriteTo of %d bytes: %v, want EMSGSIZE", packetconn.MaxDatagram+1, err)
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

// PacketIPv6: a "udp6" PacketConn on ::1 talks with an IPv6 peer both
// ways. Skipped where the machine has no IPv6 loopback.
func PacketIPv6(t *testing.T, lp ListenPacket) {
	peer, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	defer peer.Close()
	pc, err := lp("udp6", "[::1]:0")
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

// PacketClose: Close wakes a pending ReadFrom with net.ErrClosed; every
// later call is net.ErrClosed, a second Close too; the socket is gone (its
// port binds again). The PacketConn is opened here and returned closed.
func PacketClose(t *testing.T, lp ListenPacket) net.PacketConn {
	pc, err := lp("udp", "127.0.0.1:0")
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
	return pc
}
