// SPDX-License-Identifier: MIT

package tests

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// SendMany sends a batch in one call: every datagram arrives, in order,
// from the sender, whether addressed or sent to the connected peer; the
// caller's slice may be reused at once.
func TestUDPSendManyInOrder(t *testing.T) {
	l := newLoop(t)
	var got []uint32
	var froms []netip.AddrPort
	const n = 90 // more than one sendmmsg, fewer than a socket buffer holds
	recv := openUDP(t, l, "127.0.0.1", 0, "", 0, &ll.ProtocolFuncs{
		Datagram: func(_ *ll.Transport, d []byte, from ll.Addr) {
			got = append(got, binary.LittleEndian.Uint32(d))
			froms = append(froms, from.AddrPort)
			if len(d) != 100 {
				t.Errorf("datagram of %d bytes, want 100", len(d))
			}
			if len(got) == 2*n {
				l.Stop()
			}
		},
	})
	defer recv.Close()
	ra, _ := recv.SockName()
	var senderErrs []error
	sp := &ll.ProtocolFuncs{Error: func(_ *ll.Transport, err error) { senderErrs = append(senderErrs, err) }}
	addressed := openUDP(t, l, "127.0.0.1", 0, "", 0, sp)
	defer addressed.Close()
	connected := openUDP(t, l, "127.0.0.1", 0, "127.0.0.1", int(ra.AddrPort.Port()), sp)
	defer connected.Close()
	ds := make([]ll.Datagram, n)
	for i := range ds {
		ds[i].Data = make([]byte, 100)
		binary.LittleEndian.PutUint32(ds[i].Data, uint32(i))
		ds[i].To = ra.AddrPort
	}
	if err := addressed.SendMany(ds); err != nil {
		t.Fatal(err)
	}
	for i := range ds { // reused at once; the connected peer needs no address
		binary.LittleEndian.PutUint32(ds[i].Data, uint32(n+i))
		ds[i].To = netip.AddrPort{}
	}
	if err := connected.SendMany(ds); err != nil {
		t.Fatal(err)
	}
	runNet(t, l, 10*time.Second)
	aa, _ := addressed.SockName()
	ca, _ := connected.SockName()
	nextA, nextC := uint32(0), uint32(n)
	for k, v := range got {
		switch {
		case v < n:
			if v != nextA || froms[k] != aa.AddrPort {
				t.Fatalf("got %d from %v, want %d from %v", v, froms[k], nextA, aa.AddrPort)
			}
			nextA++
		default:
			if v != nextC || froms[k] != ca.AddrPort {
				t.Fatalf("got %d from %v, want %d from %v", v, froms[k], nextC, ca.AddrPort)
			}
			nextC++
		}
	}
	if nextA != n || nextC != 2*n || len(senderErrs) != 0 {
		t.Fatalf("got %d and %d datagrams, errors %v", nextA, nextC-n, senderErrs)
	}
}

// Bad input: SendMany on a stream transport is EINVAL; an unaddressed
// datagram on an unconnected socket is the kernel's error, reported as
// ErrorReceived, and the ones after it still go.
func TestUDPSendManyErrors(t *testing.T) {
	l := newLoop(t)
	var got []string
	recv := openUDP(t, l, "127.0.0.1", 0, "", 0, &ll.ProtocolFuncs{
		Datagram: func(_ *ll.Transport, d []byte, _ ll.Addr) { got = append(got, string(d)) },
	})
	defer recv.Close()
	ra, _ := recv.SockName()
	var errs []error
	s := openUDP(t, l, "127.0.0.1", 0, "", 0, &ll.ProtocolFuncs{
		Error: func(_ *ll.Transport, err error) {
			errs = append(errs, err)
		},
	})
	defer s.Close()
	if err := s.SendMany(nil); err != nil {
		t.Fatalf("empty SendMany: %v", err)
	}
	err := s.SendMany([]ll.Datagram{
		{Data: []byte("a"), To: ra.AddrPort},
		{Data: []byte("nowhere")}, // no address, not connected: EDESTADDRREQ
		{Data: []byte("b"), To: ra.AddrPort},
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for (len(got) < 2 || len(errs) < 1) && time.Now().Before(deadline) {
		l.CallLater(10*time.Millisecond, func() {})
		l.RunOnce(true)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" || len(errs) != 1 {
		t.Fatalf("received %q, errors %v; want a, b and one error", got, errs)
	}
	s.Close()
	expectErr(t, "SendMany after Close", s.SendMany([]ll.Datagram{{Data: []byte("x"), To: ra.AddrPort}}), cECLOSED)
}
