// SPDX-License-Identifier: MIT

package libloop

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

// udpPeer is a plain net.UDPConn on 127.0.0.1: the real peer the
// PacketConn talks to.
func udpPeer(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// listenPacket opens a PacketConn on 127.0.0.1 of a running loop.
func listenPacket(t *testing.T, l *Loop) *PacketConn {
	t.Helper()
	pc, err := l.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// Datagrams both ways with a std net.UDPConn: contents, order on
// loopback, the sender's address, LocalAddr.
func TestPacketConnWithStdPeer(t *testing.T) {
	checkNoGoroutineLeak(t)
	l := runningLoop(t)
	pc := listenPacket(t, l)
	peer := udpPeer(t)
	la, ok := pc.LocalAddr().(*net.UDPAddr)
	if !ok || !la.IP.Equal(net.IPv4(127, 0, 0, 1)) || la.Port == 0 {
		t.Fatalf("LocalAddr %v: want 127.0.0.1 and the chosen port", pc.LocalAddr())
	}
	const n = 50
	for i := 0; i < n; i++ {
		if _, err := peer.WriteTo(fmt.Appendf(nil, "ping %d", i), la); err != nil {
			t.Fatal(err)
		}
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 100)
	for i := 0; i < n; i++ {
		k, from, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if want := fmt.Sprintf("ping %d", i); string(buf[:k]) != want {
			t.Fatalf("datagram %d is %q, want %q", i, buf[:k], want)
		}
		if from.String() != peer.LocalAddr().String() {
			t.Fatalf("from %v, want the peer's %v", from, peer.LocalAddr())
		}
		if k2, err := pc.WriteTo(fmt.Appendf(nil, "pong %d", i), from); err != nil || k2 != len(fmt.Sprintf("pong %d", i)) {
			t.Fatalf("WriteTo: %d, %v", k2, err)
		}
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := 0; i < n; i++ {
		k, from, err := peer.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if want := fmt.Sprintf("pong %d", i); string(buf[:k]) != want || from.Port != la.Port {
			t.Fatalf("reply %d is %q from %v, want %q from %v", i, buf[:k], from, want, la)
		}
	}
}

// An empty datagram is one datagram; a datagram longer than the buffer
// is cut to it and its rest is lost, as a UDP socket's read does.
func TestPacketConnShortBufferAndEmptyDatagram(t *testing.T) {
	l := runningLoop(t)
	pc := listenPacket(t, l)
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

// Deadlines: a past one fails at once, a pending ReadFrom ends at its
// deadline and when a new one is set; errors are os.ErrDeadlineExceeded
// with Timeout() true.
func TestPacketConnDeadlines(t *testing.T) {
	l := runningLoop(t)
	pc := listenPacket(t, l)
	peer := udpPeer(t)
	pc.SetDeadline(time.Now().Add(-time.Second))
	if _, _, err := pc.ReadFrom(make([]byte, 10)); !isTimeout(err) {
		t.Fatalf("ReadFrom past its deadline: %v", err)
	}
	if _, err := pc.WriteTo([]byte("x"), peer.LocalAddr()); !isTimeout(err) {
		t.Fatalf("WriteTo past its deadline: %v", err)
	}
	pc.SetDeadline(time.Time{})
	start := time.Now()
	pc.SetReadDeadline(start.Add(50 * time.Millisecond))
	if _, _, err := pc.ReadFrom(make([]byte, 10)); !isTimeout(err) || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("ReadFrom with a 50ms deadline: %v after %v", err, time.Since(start))
	}
	pc.SetReadDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() { _, _, err := pc.ReadFrom(make([]byte, 10)); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	pc.SetReadDeadline(time.Now())
	select {
	case err := <-errc:
		if !isTimeout(err) {
			t.Fatalf("pending ReadFrom after a new deadline: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a new deadline did not end a pending ReadFrom")
	}
	// The deadline passed, nothing was lost: the datagram is still read.
	pc.SetReadDeadline(time.Time{})
	peer.WriteTo([]byte("after"), pc.LocalAddr())
	buf := make([]byte, 10)
	if k, _, err := pc.ReadFrom(buf); err != nil || string(buf[:k]) != "after" {
		t.Fatalf("ReadFrom after the deadlines: %q, %v", buf[:k], err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

// Close unblocks a pending ReadFrom with net.ErrClosed; every later call
// is net.ErrClosed; a second Close is an error; the socket is gone (its
// port can be bound again). The loop's Close unblocks a ReadFrom too.
func TestPacketConnClose(t *testing.T) {
	checkNoGoroutineLeak(t)
	l := runningLoop(t)
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
		t.Fatal("Close did not unblock ReadFrom")
	}
	if _, err := pc.WriteTo([]byte("x"), pc.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("WriteTo after Close: %v", err)
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

	l2, _ := New()
	ended := make(chan struct{})
	go func() { l2.RunForever(); close(ended) }()
	pc2, err := l2.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _, err := pc2.ReadFrom(make([]byte, 10)); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	l2.CallSoonThreadsafe(func() { l2.Stop() })
	<-ended
	l2.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Errorf("pending ReadFrom after the loop closed: %v", err)
	}
}

// A reader that falls behind: the PacketConn holds at most its queue's
// bound, with the transport's reading paused, and what comes after waits
// in the kernel; reading resumes it: every datagram arrives, once, in
// order. (The peer sends in steps the socket's receive buffer can hold, so
// that the kernel drops nothing.)
func TestPacketConnReceiveQueueBounded(t *testing.T) {
	l := runningLoop(t)
	pc := listenPacket(t, l)
	peer := udpPeer(t)
	state := func() (queued int, paused bool) {
		st := pc.s.QueueState()
		return st.Queued, st.Paused
	}
	sent := 0
	send := func(k int) {
		for i := 0; i < k; i++ {
			if _, err := peer.WriteTo(fmt.Appendf(nil, "%d", sent), pc.LocalAddr()); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		queued, paused := state()
		if paused {
			break
		}
		if queued == sent {
			send(32)
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading not paused with %d datagrams queued", queued)
		}
		time.Sleep(time.Millisecond)
	}
	if queued, _ := state(); queued != packetconn.QueueMax {
		t.Fatalf("paused with %d datagrams queued, want %d", queued, packetconn.QueueMax)
	}
	send(100) // these wait in the kernel
	time.Sleep(50 * time.Millisecond)
	if queued, paused := state(); queued != packetconn.QueueMax || !paused {
		t.Fatalf("%d datagrams queued, paused %v: the queue grew past its bound", queued, paused)
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	for i := 0; i < sent; i++ {
		k, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("datagram %d of %d: %v", i, sent, err)
		}
		if want := fmt.Sprint(i); string(buf[:k]) != want {
			t.Fatalf("datagram %d is %q", i, buf[:k])
		}
	}
	if _, paused := state(); paused {
		t.Error("reading still paused with the queue empty")
	}
}

// The bytes bound pauses reading too, before the count bound is reached.
func TestPacketConnReceiveQueueBytesBound(t *testing.T) {
	l := runningLoop(t)
	pc := listenPacket(t, l)
	peer := udpPeer(t)
	big := make([]byte, 60000)
	sent := 0
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := pc.s.QueueState()
		queued, qbytes, paused := st.Queued, st.Bytes, st.Paused
		if paused {
			if qbytes < packetconn.QueueBytes || qbytes >= packetconn.QueueBytes+len(big) || queued >= packetconn.QueueMax {
				t.Fatalf("paused with %d datagrams, %d bytes queued: want the bytes bound, %d", queued, qbytes, packetconn.QueueBytes)
			}
			break
		}
		if queued == sent { // one at a time: the receive buffer holds few this big
			if _, err := peer.WriteTo(big, pc.LocalAddr()); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading not paused with %d bytes queued", qbytes)
		}
		time.Sleep(time.Millisecond)
	}
}

// Concurrent readers and writers on one PacketConn, under -race: every
// datagram a writer posts reaches the peer, every one the peer sends is
// read by exactly one reader.
func TestPacketConnConcurrent(t *testing.T) {
	l := runningLoop(t)
	pc := listenPacket(t, l)
	peer := udpPeer(t)
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
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
	for r := 0; r < 3; r++ {
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
	for i := 0; i < writers*each; i++ {
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

// Bad input gets an error, never a panic: an unknown network, a bad
// address, a WriteTo without a UDP address or with a bad one, an
// oversized datagram; a send the kernel refuses later comes back from the
// next WriteTo.
func TestPacketConnErrors(t *testing.T) {
	l := runningLoop(t)
	var unknown net.UnknownNetworkError
	if _, err := l.ListenPacket("tcp", "127.0.0.1:0"); !errors.As(err, &unknown) {
		t.Errorf("ListenPacket tcp: %v", err)
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:70000", "no..such..host:0"} {
		if pc, err := l.ListenPacket("udp", bad); err == nil {
			pc.Close()
			t.Errorf("ListenPacket(%q) succeeded", bad)
		}
	}
	pc := listenPacket(t, l)
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
	// comes back from the next WriteTo.
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
	// Reported once: the PacketConn goes on.
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

// A "udp6" PacketConn on ::1 talks with an IPv6 peer.
func TestPacketConnIPv6(t *testing.T) {
	peer, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	defer peer.Close()
	l := runningLoop(t)
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
	k, from, err := peer.ReadFromUDP(buf)
	if err != nil || string(buf[:k]) != "six" || from.String() != pc.LocalAddr().String() {
		t.Fatalf("peer read %q from %v (%v); want \"six\" from %v", buf[:k], from, err, pc.LocalAddr())
	}
}
