// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/libloop/libloop/internal/packetconn"
)

// A reader that falls behind: the binding's PacketConn holds at most the
// queue's bound of datagrams, with the transport's reading paused (the
// library's transport stops delivering: what comes after waits in the
// kernel), and reading resumes it. The black-box half of this is
// tests/goapi_netpacketconn_test.go; here the queue itself is read.
func TestPacketConnQueueBoundPausesTheTransport(t *testing.T) {
	l := newLoop(t)
	ended := make(chan error, 1)
	go func() { ended <- l.RunForever() }()
	t.Cleanup(func() {
		l.CallSoonThreadsafe(func() { l.Stop() })
		<-ended
	})
	pc, err := l.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	sent := 0
	send := func(k int) {
		for range k {
			if _, err := peer.WriteTo(fmt.Appendf(nil, "%d", sent), pc.LocalAddr()); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := pc.s.QueueState()
		if st.Paused {
			break
		}
		if st.Queued == sent {
			send(32)
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading not paused with %d datagrams queued", st.Queued)
		}
		time.Sleep(time.Millisecond)
	}
	if st := pc.s.QueueState(); st.Queued != packetconn.QueueMax {
		t.Fatalf("paused with %d datagrams queued, want %d", st.Queued, packetconn.QueueMax)
	}
	send(100) // these wait in the kernel: the transport delivers nothing
	time.Sleep(50 * time.Millisecond)
	if st := pc.s.QueueState(); st.Queued != packetconn.QueueMax || !st.Paused {
		t.Fatalf("%d datagrams queued, paused %v: the queue grew past its bound", st.Queued, st.Paused)
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	for i := range sent {
		k, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("datagram %d of %d: %v", i, sent, err)
		}
		if want := fmt.Sprint(i); string(buf[:k]) != want {
			t.Fatalf("datagram %d is %q", i, buf[:k])
		}
	}
	if st := pc.s.QueueState(); st.Paused {
		t.Error("reading still paused with the queue empty")
	}
}
