// SPDX-License-Identifier: MIT

//go:build linux

package tests

import (
	"net/netip"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// blackholePort listens on 127.0.0.1 with a full accept queue, so a
// further connect to it hangs; it returns the port.
func blackholePort(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := syscall.Getsockname(fd)
	port := sa.(*syscall.SockaddrInet4).Port
	for i := 0; i < 2; i++ {
		c, _ := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		t.Cleanup(func() { syscall.Close(c) })
		syscall.Connect(c, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	}
	time.Sleep(20 * time.Millisecond)
	return port
}

// DialTCPWith from Go: happy eyeballs passes a hanging first address after
// the delay, and the local address binds the socket.
func TestTCPConnectWithOptions(t *testing.T) {
	l := newLoop(t)
	port := blackholePort(t)
	srv, err := l.ListenTCP("::1", port, func() ll.Protocol { return &echoProto{} })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := time.Now()
	d, err := l.DialTCPWith("localhost", port, ll.DialOptions{HappyEyeballsDelay: 50 * time.Millisecond}, &ll.BaseProtocol{})
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, &d.Future, 5*time.Second)
	tr, err := d.Transport()
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 40*time.Millisecond || took > 2*time.Second {
		t.Errorf("connect took %v, want about the delay", took)
	}
	peer, _ := tr.PeerName()
	if peer.AddrPort.Addr() != netip.IPv6Loopback() {
		t.Errorf("connected to %v, want ::1", peer)
	}
	tr.Close()
	d.Release()

	v4, err := l.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return &echoProto{} })
	if err != nil {
		t.Fatal(err)
	}
	defer v4.Close()
	p4, _ := v4.Port()
	d, err = l.DialTCPWith("127.0.0.1", p4, ll.DialOptions{LocalHost: "127.0.0.4"}, &ll.BaseProtocol{})
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, &d.Future, 5*time.Second)
	tr, err = d.Transport()
	if err != nil {
		t.Fatal(err)
	}
	me, _ := tr.SockName()
	if me.AddrPort.Addr() != netip.MustParseAddr("127.0.0.4") {
		t.Errorf("bound to %v, want 127.0.0.4", me)
	}
	tr.Close()
	d.Release()
	_, err = l.DialTCPWith("127.0.0.1", p4, ll.DialOptions{HappyEyeballsDelay: -time.Second}, &ll.BaseProtocol{})
	expectErr(t, "a negative delay", err, cEINVAL)
}
