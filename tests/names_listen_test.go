// SPDX-License-Identifier: MIT

package tests

import (
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

const cENEEDASYNC = -10020 // LL_ENEEDASYNC

// hostName is a name this machine resolves without a lookup server (its
// own, from /etc/hosts), and its first IPv4 address.
func hostName(t *testing.T) (string, netip.Addr) {
	t.Helper()
	name, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(t.Context(), "ip4", name)
	if err != nil || len(addrs) == 0 {
		t.Fatalf("this machine's own name %q does not resolve: %v", name, err)
	}
	return name, addrs[0].Unmap()
}

// The synchronous calls refuse a name while the loop runs (no lookup on the
// loop thread) and take addresses and "localhost" as before; the _ex forms
// take the name, resolved off the loop thread, and give a working server
// and transport.
func TestListenByNameWhileRunning(t *testing.T) {
	name, addr := hostName(t)
	l := newLoop(t)
	var syncErrs []error
	var lf *ll.ListenFuture
	var uf *ll.DialFuture
	factory := func() ll.Protocol { return &ll.BaseProtocol{} }
	l.CallSoon(func() {
		_, err := l.ListenTCP(name, 0, factory)
		syncErrs = append(syncErrs, err)
		_, err = l.OpenUDP(name, 0, "", 0, &ll.BaseProtocol{})
		syncErrs = append(syncErrs, err)
		s, err := l.ListenTCP("localhost", 0, factory)
		syncErrs = append(syncErrs, err)
		if err == nil {
			s.Release()
		}
		if lf, err = l.ListenTCPWith(name, 0, nil, factory); err != nil {
			t.Errorf("ListenTCPWith: %v", err)
		}
		if uf, err = l.OpenUDPWith(ll.UDPOptions{LocalHost: name}, &ll.BaseProtocol{}); err != nil {
			t.Errorf("OpenUDPWith: %v", err)
		}
		l.Stop()
	})
	runNet(t, l, 10*time.Second)
	expectErr(t, "ListenTCP(name) on the running loop", syncErrs[0], cENEEDASYNC)
	expectErr(t, "OpenUDP(name) on the running loop", syncErrs[1], cENEEDASYNC)
	if syncErrs[2] != nil {
		t.Fatalf("ListenTCP(localhost) on the running loop: %v", syncErrs[2])
	}
	if lf == nil || uf == nil {
		t.Fatal("no futures")
	}
	defer lf.Release()
	defer uf.Release()
	runUntil(t, l, &lf.Future, 10*time.Second)
	runUntil(t, l, &uf.Future, 10*time.Second)
	srv, err := lf.Server()
	if err != nil {
		t.Fatalf("ListenTCPWith(%q): %v", name, err)
	}
	defer srv.Release()
	sa, err := srv.SockName(0)
	if err != nil || sa.AddrPort.Addr().Unmap() != addr || sa.AddrPort.Port() == 0 {
		t.Fatalf("server listens on %v, %v; want %v", sa, err, addr)
	}
	tr, err := uf.Transport()
	if err != nil {
		t.Fatalf("OpenUDPWith(%q): %v", name, err)
	}
	defer tr.Close()
	ua, err := tr.SockName()
	if err != nil || ua.AddrPort.Addr().Unmap() != addr {
		t.Fatalf("UDP bound to %v, %v; want %v", ua, err, addr)
	}
}

// While the loop does not run, the synchronous calls still take a name (the
// caller blocks itself, no loop); the _ex forms fail their future with
// ENONAME for a name that does not resolve and refuse bad input at once.
func TestListenExErrors(t *testing.T) {
	name, _ := hostName(t)
	l := newLoop(t)
	factory := func() ll.Protocol { return &ll.BaseProtocol{} }
	s, err := l.ListenTCP(name, 0, factory)
	if err != nil {
		t.Fatalf("ListenTCP(%q), loop not running: %v", name, err)
	}
	s.Release()
	f, err := l.ListenTCPWith("no-such-host.invalid", 0, nil, factory)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	runUntil(t, l, &f.Future, 30*time.Second)
	_, err = f.Server()
	expectErr(t, "ListenTCPWith(no-such-host.invalid)", err, cENONAME)
	_, err = l.ListenTCPWith("127.0.0.1", 1<<20, nil, factory)
	expectErr(t, "ListenTCPWith(bad port)", err, cEINVAL)
	_, err = l.ListenTCPWith("127.0.0.1", 0, nil, nil)
	expectErr(t, "ListenTCPWith(nil factory)", err, cEINVAL)
	_, err = l.OpenUDPWith(ll.UDPOptions{}, &ll.BaseProtocol{})
	expectErr(t, "OpenUDPWith(no side)", err, cEINVAL)
	_, err = l.OpenUDPWith(ll.UDPOptions{LocalHost: "127.0.0.1", LocalPort: -1}, &ll.BaseProtocol{})
	expectErr(t, "OpenUDPWith(bad port)", err, cEINVAL)
}
