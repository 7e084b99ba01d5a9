// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// udpRecorder opens a transport on 127.0.0.1:0 that records every
// datagram (data and sender) and every error it hears.
type udpRecorder struct {
	tr      *Transport
	data    [][]byte
	senders []int // the sender's port of each datagram
	errs    []int
}

func newUDPRecorder(t *testing.T, l *Loop) *udpRecorder {
	t.Helper()
	r := &udpRecorder{}
	tr, err := l.OpenUDP("127.0.0.1", 0, "", 0, 0, func(ev *Event) bool {
		switch ev.Kind {
		case DatagramReceived:
			r.data = append(r.data, bytes.Clone(ev.Data))
			r.senders = append(r.senders, SockaddrPort(ev.Addr))
		case ErrorReceived:
			r.errs = append(r.errs, ev.Code)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	r.tr = tr
	t.Cleanup(func() { tr.Abort() })
	return r
}

func (r *udpRecorder) port(t *testing.T) int {
	raw, err := r.tr.SockName()
	if err != nil {
		t.Fatal(err)
	}
	return SockaddrPort(raw)
}

// addr is the transport's own address: a raw sockaddr to send to.
func (r *udpRecorder) addr(t *testing.T) []byte {
	raw, err := r.tr.SockName()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func seqDatagram(i, size int) []byte {
	b := make([]byte, max(size, 4))
	binary.LittleEndian.PutUint32(b, uint32(i))
	for j := 4; j < len(b); j++ {
		b[j] = byte(i + j)
	}
	return b
}

// Many datagrams sent from plain sockets before the loop reads (so one
// readiness finds them all, more than one recvmmsg holds) arrive every one,
// whole, in each sender's order, with the right sender.
func TestUDPBatchReceiveOrderAndPeers(t *testing.T) {
	l := newTestLoop(t)
	r := newUDPRecorder(t, l)
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: r.port(t)}
	a, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n = 150 // more than maxDatagramsPerWake and than one recvmmsg
	for i := range n {
		c := a
		if i%3 == 2 {
			c = b
		}
		if _, err := c.WriteToUDP(seqDatagram(i, 64+i), dst); err != nil {
			t.Fatal(err)
		}
	}
	runUntil(t, l, 5*time.Second, func() bool { return len(r.data) == n })
	aPort, bPort := a.LocalAddr().(*net.UDPAddr).Port, b.LocalAddr().(*net.UDPAddr).Port
	lastA, lastB := -1, -1
	for k, d := range r.data {
		i := int(binary.LittleEndian.Uint32(d))
		if !bytes.Equal(d, seqDatagram(i, 64+i)) {
			t.Fatalf("datagram %d: wrong bytes (%d long)", i, len(d))
		}
		want, last := aPort, &lastA
		if i%3 == 2 {
			want, last = bPort, &lastB
		}
		if r.senders[k] != want {
			t.Fatalf("datagram %d: sender port %d, want %d", i, r.senders[k], want)
		}
		if i <= *last {
			t.Fatalf("datagram %d after %d from the same sender", i, *last)
		}
		*last = i
	}
	if len(r.errs) != 0 {
		t.Fatalf("errors %v", r.errs)
	}
}

// Datagrams up to UDP's limit arrive whole (not truncated to a batch
// slot), in order among small ones read in the same batch.
func TestUDPBatchLargeDatagramsWhole(t *testing.T) {
	l := newTestLoop(t)
	r := newUDPRecorder(t, l)
	if err := unix.SetsockoptInt(int(r.tr.fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20); err != nil {
		t.Fatal(err)
	}
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: r.port(t)}
	c, err := net.DialUDP("udp4", nil, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetWriteBuffer(1 << 20); err != nil {
		t.Fatal(err)
	}
	sizes := []int{10, 65507, 3000, 65507, 5, 40000, 1}
	for i, sz := range sizes {
		if _, err := c.Write(seqDatagram(i, sz)); err != nil {
			t.Fatal(err)
		}
	}
	runUntil(t, l, 5*time.Second, func() bool { return len(r.data) == len(sizes) })
	for i, sz := range sizes {
		if !bytes.Equal(r.data[i], seqDatagram(i, sz)) {
			t.Fatalf("datagram %d: %d bytes, want %d intact", i, len(r.data[i]), max(sz, 4))
		}
	}
}

// SendMany sends every datagram in order, to each one's address or the
// connected peer, and copies what it queues.
func TestUDPSendMany(t *testing.T) {
	l := newTestLoop(t)
	r1 := newUDPRecorder(t, l)
	r2 := newUDPRecorder(t, l)
	to1 := r1.addr(t)
	to2 := r2.addr(t)
	s := newUDPRecorder(t, l)
	const n = 100 // more than one sendmmsg
	ds := make([]OutDatagram, n)
	for i := range ds {
		ds[i] = OutDatagram{Data: seqDatagram(i, 32), Addr: to1}
		if i%4 == 3 {
			ds[i].Addr = to2
		}
	}
	if err := s.tr.SendMany(ds); err != nil {
		t.Fatal(err)
	}
	for i := range ds { // the caller's memory is free again
		ds[i].Data[0] = 0xff
	}
	if err := s.tr.SendMany(nil); err != nil {
		t.Fatalf("empty SendMany: %v", err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return len(r1.data)+len(r2.data) == n })
	check := func(r *udpRecorder, pick func(int) bool) {
		t.Helper()
		k := 0
		for i := range n {
			if !pick(i) {
				continue
			}
			if !bytes.Equal(r.data[k], seqDatagram(i, 32)) {
				t.Fatalf("datagram %d: wrong or out of order", i)
			}
			if r.senders[k] != s.port(t) {
				t.Fatalf("datagram %d from port %d", i, r.senders[k])
			}
			k++
		}
	}
	check(r1, func(i int) bool { return i%4 != 3 })
	check(r2, func(i int) bool { return i%4 == 3 })
	if len(s.errs) != 0 {
		t.Fatalf("sender errors %v", s.errs)
	}
}

// A datagram the kernel rejects (too large) inside a SendMany is reported
// once as ErrorReceived and dropped; the ones after it still go, and no
// stale error fails a later send.
func TestUDPSendManyOneBad(t *testing.T) {
	l := newTestLoop(t)
	r := newUDPRecorder(t, l)
	to := r.addr(t)
	s := newUDPRecorder(t, l)
	ds := []OutDatagram{
		{Data: []byte("a"), Addr: to},
		{Data: []byte("b"), Addr: to},
		{Data: make([]byte, 70000), Addr: to}, // EMSGSIZE
		{Data: []byte("c"), Addr: to},
	}
	if err := s.tr.SendMany(ds); err != nil {
		t.Fatal(err)
	}
	if err := s.tr.SendTo([]byte("d"), to); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return len(r.data) == 4 && len(s.errs) >= 1 })
	for i := 0; i < 20; i++ { // a late second report would show here
		l.CallLater(0.001, func() {})
		l.RunOnce(false)
	}
	got := ""
	for _, d := range r.data {
		got += string(d)
	}
	if got != "abcd" {
		t.Fatalf("received %q, want abcd", got)
	}
	if len(s.errs) != 1 || s.errs[0] != -int(unix.EMSGSIZE) {
		t.Fatalf("errors %v, want one EMSGSIZE", s.errs)
	}
}

// Bad input: an address longer than any sockaddr fails the whole call,
// with nothing sent; after close, ECLOSED.
func TestUDPSendManyBadInput(t *testing.T) {
	l := newTestLoop(t)
	r := newUDPRecorder(t, l)
	to := r.addr(t)
	s := newUDPRecorder(t, l)
	bad := []OutDatagram{{Data: []byte("x"), Addr: to}, {Data: []byte("y"), Addr: make([]byte, 200)}}
	if err := s.tr.SendMany(bad); err != EINVAL {
		t.Fatalf("long address: %v, want EINVAL", err)
	}
	for i := 0; i < 5; i++ {
		l.CallLater(0.001, func() {})
		l.RunOnce(false)
	}
	if len(r.data) != 0 {
		t.Fatalf("sent %d datagrams of a refused call", len(r.data))
	}
	s.tr.Close()
	if err := s.tr.SendMany([]OutDatagram{{Data: []byte("x"), Addr: to}}); err != ECLOSED {
		t.Fatalf("after close: %v, want ECLOSED", err)
	}
}

// An ICMP error on a connected transport (nobody listens) is one
// ErrorReceived; the transport goes on receiving what else arrives.
func TestUDPRefusedEndsNothing(t *testing.T) {
	l := newTestLoop(t)
	gone := newUDPRecorder(t, l)
	port := gone.port(t)
	gone.tr.Abort()
	var data []string
	var errs []int
	cli, err := l.OpenUDP("127.0.0.1", 0, "127.0.0.1", port, 0, func(ev *Event) bool {
		switch ev.Kind {
		case DatagramReceived:
			data = append(data, string(ev.Data))
		case ErrorReceived:
			errs = append(errs, ev.Code)
		case ConnectionLost:
			t.Error("connection lost")
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ds := []OutDatagram{{Data: []byte("1")}, {Data: []byte("2")}}
	if err := cli.SendMany(ds); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return len(errs) > 0 })
	if errs[0] != -int(unix.ECONNREFUSED) {
		t.Fatalf("error %d, want ECONNREFUSED", errs[0])
	}
	if cli.state != tOpen {
		t.Fatal("the transport did not stay open")
	}
	// A datagram from the connected peer's address still arrives.
	peer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatalf("rebinding the closed port: %v", err)
	}
	defer peer.Close()
	raw, _ := cli.SockName()
	if _, err := peer.WriteToUDP([]byte("back"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: SockaddrPort(raw)}); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return len(data) == 1 })
	if data[0] != "back" {
		t.Fatalf("received %q", data[0])
	}
}
