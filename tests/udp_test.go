// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"net/netip"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// openUDP opens a UDP transport or fails the test.
func openUDP(t *testing.T, l *ll.Loop, lh string, lp int, rh string, rp int, p ll.Protocol) *ll.Transport {
	t.Helper()
	tr, err := l.OpenUDP(lh, lp, rh, rp, p)
	if err != nil {
		t.Fatalf("OpenUDP(%q, %d, %q, %d): %v", lh, lp, rh, rp, err)
	}
	return tr
}

// Datagrams echo through a UDP server, one event each with its sender's
// address; a connected client sends with Write and SendTo alike.
func TestUDPEcho(t *testing.T) {
	l := newLoop(t)
	server := &ll.ProtocolFuncs{
		Datagram: func(tr *ll.Transport, d []byte, from ll.Addr) {
			if err := tr.SendTo(append([]byte("echo:"), d...), from.AddrPort); err != nil {
				t.Errorf("SendTo(%v): %v", from, err)
			}
		},
	}
	st := openUDP(t, l, "127.0.0.1", 0, "", 0, server)
	defer st.Close()
	saddr, err := st.SockName()
	if err != nil || saddr.Family != syscall.AF_INET || saddr.AddrPort.Port() == 0 {
		t.Fatalf("server SockName = %+v, %v", saddr, err)
	}
	if ok, _ := st.CanWriteEOF(); ok {
		t.Error("a datagram transport claims it can write EOF")
	}
	expectErr(t, "WriteEOF on UDP", st.WriteEOF(), cEINVAL)

	var got []string
	var froms []ll.Addr
	client := &ll.ProtocolFuncs{
		Made: func(tr *ll.Transport) {
			tr.Write([]byte("one"))
			tr.SendTo([]byte("two"), netip.AddrPort{})
			tr.SendTo([]byte{}, netip.AddrPort{}) // an empty datagram is one too
		},
		Datagram: func(_ *ll.Transport, d []byte, from ll.Addr) {
			got = append(got, string(d))
			froms = append(froms, from)
			if len(got) == 3 {
				l.Stop()
			}
		},
	}
	ct := openUDP(t, l, "", 0, "127.0.0.1", int(saddr.AddrPort.Port()), client)
	defer ct.Close()
	if peer, err := ct.PeerName(); err != nil || peer.AddrPort != saddr.AddrPort {
		t.Errorf("client PeerName = %v, %v; want %v", peer, err, saddr)
	}
	runNet(t, l, 10*time.Second)
	want := []string{"echo:one", "echo:two", "echo:"}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("client got %q, want %q", got, want)
		}
		if froms[i].AddrPort != saddr.AddrPort {
			t.Errorf("datagram %d from %v, want %v", i, froms[i], saddr)
		}
	}
}

// A connected UDP socket whose peer port is closed hears of the ICMP
// error through ErrorReceived and stays open.
func TestUDPErrorReceived(t *testing.T) {
	l := newLoop(t)
	// A bound port, then closed: nothing listens there any more.
	probe := openUDP(t, l, "127.0.0.1", 0, "", 0, &ll.BaseProtocol{})
	a, err := probe.SockName()
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	l.RunOnce(true)
	var errs []error
	client := &ll.ProtocolFuncs{
		Made: func(tr *ll.Transport) { tr.Write([]byte("anyone?")) },
		Error: func(tr *ll.Transport, err error) {
			errs = append(errs, err)
			if c, _ := tr.IsClosing(); c {
				t.Error("ErrorReceived closed the transport")
			}
			l.Stop()
		},
	}
	ct := openUDP(t, l, "", 0, "127.0.0.1", int(a.AddrPort.Port()), client)
	defer ct.Close()
	runNet(t, l, 10*time.Second)
	if len(errs) != 1 || !errors.Is(errs[0], syscall.ECONNREFUSED) {
		t.Fatalf("ErrorReceived got %v, want one ECONNREFUSED", errs)
	}
	if err := ct.Write([]byte("still open")); err != nil {
		t.Errorf("Write after ErrorReceived: %v", err)
	}
}

// OpenUDP needs at least one side and valid ports.
func TestUDPOpenArguments(t *testing.T) {
	l := newLoop(t)
	for _, c := range []struct {
		lh     string
		lp     int
		rh     string
		rp     int
		expect int
	}{
		{"", 0, "", 0, cEINVAL},
		{"127.0.0.1", -1, "", 0, cEINVAL},
		{"127.0.0.1", 70000, "", 0, cEINVAL},
		{"", 0, "127.0.0.1", 70000, cEINVAL},
		{"", 0, "no-such-host.invalid", 9, cENONAME},
	} {
		tr, err := l.OpenUDP(c.lh, c.lp, c.rh, c.rp, &ll.BaseProtocol{})
		if tr != nil {
			tr.Close()
		}
		expectErr(t, "OpenUDP", err, c.expect)
	}
}
