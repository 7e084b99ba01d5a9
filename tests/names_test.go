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

const aiNumericHost = 4 // AI_NUMERICHOST (glibc, musl, the BSDs)

// getaddrinfo resolves numeric hosts and services off the loop thread
// and hands back the C library's entries.
func TestGetAddrInfo(t *testing.T) {
	l := newLoop(t)
	for _, c := range []struct {
		host, service    string
		family, socktype int
		wantFamily       int
		want             string
	}{
		{"127.0.0.1", "8080", syscall.AF_INET, syscall.SOCK_STREAM, syscall.AF_INET, "127.0.0.1:8080"},
		{"::1", "53", syscall.AF_INET6, syscall.SOCK_DGRAM, syscall.AF_INET6, "[::1]:53"},
		{"127.0.0.2", "", 0, syscall.SOCK_STREAM, syscall.AF_INET, "127.0.0.2:0"},
	} {
		f, err := l.GetAddrInfo(c.host, c.service, c.family, c.socktype, aiNumericHost)
		if err != nil {
			t.Fatal(err)
		}
		runUntil(t, l, &f.Future, 10*time.Second)
		addrs, err := f.Addrs()
		f.Release()
		if err != nil || len(addrs) != 1 {
			t.Fatalf("getaddrinfo(%q, %q) = %+v, %v; want one entry", c.host, c.service, addrs, err)
		}
		a := addrs[0]
		if a.Family != c.wantFamily || a.SockType != c.socktype || a.Addr.String() != c.want ||
			a.Addr.AddrPort != netip.MustParseAddrPort(c.want) {
			t.Errorf("getaddrinfo(%q, %q) = %+v (%s), want %s", c.host, c.service, a, a.Addr, c.want)
		}
	}
	// A pending future has no entries yet.
	f, err := l.GetAddrInfo("127.0.0.1", "1", 0, 0, aiNumericHost)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Addrs()
	expectErr(t, "Addrs while pending", err, cESTATE)
	runUntil(t, l, &f.Future, 10*time.Second)
	f.Release()
}

func TestGetAddrInfoErrors(t *testing.T) {
	l := newLoop(t)
	_, err := l.GetAddrInfo("", "", 0, 0, 0)
	expectErr(t, "GetAddrInfo with neither host nor service", err, cEINVAL)
	f, err := l.GetAddrInfo("no-such-host.invalid", "80", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	runUntil(t, l, &f.Future, 30*time.Second)
	_, err = f.Addrs()
	expectErr(t, "getaddrinfo(no-such-host.invalid)", err, cENONAME)
	if !errors.Is(err, ll.ENONAME) {
		t.Errorf("%v does not match ll.ENONAME", err)
	}
	// A numeric-host request with a name is refused by getaddrinfo itself.
	g, err := l.GetAddrInfo("localhost", "80", 0, 0, aiNumericHost)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	runUntil(t, l, &g.Future, 10*time.Second)
	if _, err := g.Addrs(); err == nil {
		t.Error("AI_NUMERICHOST with a name resolved")
	}
}

const (
	niNumericHost = 1 // NI_NUMERICHOST (glibc)
	niNumericServ = 2 // NI_NUMERICSERV (glibc)
)

// getnameinfo gives an address's host and service back, numerically here
// (no name server is asked), off the loop thread; bad addresses get codes.
func TestGetNameInfo(t *testing.T) {
	l := newLoop(t)
	for _, c := range []struct {
		addr, host, service string
	}{
		{"127.0.0.1:8080", "127.0.0.1", "8080"},
		{"[::1]:53", "::1", "53"},
	} {
		f, err := l.GetNameInfo(netip.MustParseAddrPort(c.addr), niNumericHost|niNumericServ)
		if err != nil {
			t.Fatal(err)
		}
		runUntil(t, l, &f.Future, 10*time.Second)
		host, service, err := f.Names()
		f.Release()
		if host != c.host || service != c.service || err != nil {
			t.Errorf("getnameinfo(%s) = %q, %q, %v", c.addr, host, service, err)
		}
	}
	_, err := l.GetNameInfo(netip.AddrPort{}, 0)
	expectErr(t, "GetNameInfo of no address", err, cEINVAL)
	_, err = l.GetNameInfoRaw(make([]byte, 4096), 0)
	expectErr(t, "GetNameInfoRaw beyond sockaddr_storage", err, cEINVAL)
	f, err := l.GetNameInfoRaw([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	runUntil(t, l, &f.Future, 10*time.Second)
	_, _, err = f.Names()
	expectErr(t, "getnameinfo of an unknown family", err, cEINVAL)
}
