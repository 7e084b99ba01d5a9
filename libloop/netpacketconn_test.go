// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/libloop/libloop/internal/conntest"
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

// packetListen is l's ListenPacket as internal/conntest's PacketConn
// checks call it.
func packetListen(l *Loop) conntest.ListenPacket {
	return func(network, address string) (net.PacketConn, error) {
		pc, err := l.ListenPacket(network, address)
		if err != nil {
			return nil, err
		}
		return pc, nil
	}
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
	conntest.PacketWithPeer(t, packetListen(runningLoop(t)))
}

// An empty datagram is one datagram; a datagram longer than the buffer
// is cut to it and its rest is lost, as a UDP socket's read does.
func TestPacketConnShortBufferAndEmptyDatagram(t *testing.T) {
	conntest.PacketShortBufferAndEmpty(t, packetListen(runningLoop(t)))
}

// Deadlines: a past one fails at once, a pending ReadFrom ends at its
// deadline and when a new one is set; errors are os.ErrDeadlineExceeded
// with Timeout() true.
func TestPacketConnDeadlines(t *testing.T) {
	conntest.PacketDeadlines(t, packetListen(runningLoop(t)))
}

// Close unblocks a pending ReadFrom with net.ErrClosed; every later call
// is net.ErrClosed; a second Close is an error; the socket is gone (its
// port can be bound again). The loop's Close unblocks a ReadFrom too.
func TestPacketConnClose(t *testing.T) {
	checkNoGoroutineLeak(t)
	conntest.PacketClose(t, packetListen(runningLoop(t)))

	errc := make(chan error, 1)
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
	conntest.PacketConcurrent(t, packetListen(runningLoop(t)))
}

// Bad input gets an error, never a panic: an unknown network, a bad
// address, a WriteTo without a UDP address or with a bad one, an
// oversized datagram; a send the kernel refuses later comes back from the
// next WriteTo.
func TestPacketConnErrors(t *testing.T) {
	conntest.PacketErrors(t, packetListen(runningLoop(t)), nil)
}

// A "udp6" PacketConn on ::1 talks with an IPv6 peer.
func TestPacketConnIPv6(t *testing.T) {
	conntest.PacketIPv6(t, packetListen(runningLoop(t)))
}
