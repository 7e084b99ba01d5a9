// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blackhole listens on 127.0.0.1 with a full accept queue, so a further
// connect to it hangs (the kernel drops its SYNs); it returns the port.
func blackhole(t *testing.T) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	port := sa.(*unix.SockaddrInet4).Port
	for i := 0; i < 2; i++ { // fill the queue: never accepted
		c, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		t.Cleanup(func() { unix.Close(c) })
		unix.Connect(c, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	}
	time.Sleep(20 * time.Millisecond)
	return port
}

// With happy eyeballs a slow first address does not hold the connect up:
// after the delay the next family's address is tried too and wins, and
// the slow attempt is dropped.
func TestDialHappyEyeballs(t *testing.T) {
	l := newTestLoop(t)
	port := blackhole(t)
	srv, _, err := l.listenTCP([]netip.Addr{netip.IPv6Loopback()}, port, 16, 0, false, func(*Event) bool { return false })
	if err != nil {
		t.Fatal("a ::1 listener on the blackhole's port:", err)
	}
	defer srv.Close()
	var conn *Transport
	var dialErr error
	done := false
	start := time.Now()
	opts := DialOptions{HappyEyeballsDelay: 50 * time.Millisecond}
	// "localhost" is 127.0.0.1 then ::1: the slow one first.
	if err := l.DialTCPWith("localhost", port, opts, nil, func(tr *Transport, err error) {
		conn, dialErr, done = tr, err, true
	}); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return done })
	took := time.Since(start)
	if dialErr != nil {
		t.Fatal(dialErr)
	}
	defer conn.Close()
	raw, _ := conn.PeerName()
	if a, _ := sockaddrAddr(raw); a != netip.IPv6Loopback() {
		t.Errorf("connected to %v, want ::1", a)
	}
	if took < 50*time.Millisecond || took > 2*time.Second {
		t.Errorf("connect took %v: want the 50ms delay, not the slow address's timeout", took)
	}
	left := 0
	l.fds.each(func(fd int32, w *fdWatch) {
		if _, ok := w.owner.(*dialAttempt); ok {
			left++
		}
	})
	if left != 0 {
		t.Errorf("%d connect attempts still watched after the race", left)
	}
}

func TestInterleave(t *testing.T) {
	a4 := func(b byte) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, b}) }
	a6 := func(b byte) netip.Addr { return netip.AddrFrom16([16]byte{15: b}) }
	in := []netip.Addr{a6(1), a6(2), a6(3), a4(1), a4(2)}
	for _, c := range []struct {
		n    int
		want []netip.Addr
	}{
		{1, []netip.Addr{a6(1), a4(1), a6(2), a4(2), a6(3)}},
		{2, []netip.Addr{a6(1), a6(2), a4(1), a6(3), a4(2)}},
		{9, in},
	} {
		got := interleave(append([]netip.Addr(nil), in...), c.n)
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("interleave(%d) = %v, want %v", c.n, got, c.want)
				break
			}
		}
	}
}

// A local address binds the socket first; one of no family the remote
// has is EINVAL.
func TestDialLocalAddress(t *testing.T) {
	l := newTestLoop(t)
	var peer string
	srv, err := l.ListenTCP("127.0.0.1", 0, 0, 0, func(ev *Event) bool {
		if ev.Kind == ConnectionMade {
			raw, _ := ev.T.PeerName()
			a, _ := sockaddrAddr(raw)
			peer = a.String()
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	var dialErr error
	done := false
	dial := func(opts DialOptions) {
		done = false
		if err := l.DialTCPWith("127.0.0.1", port, opts, nil, func(tr *Transport, err error) {
			dialErr, done = err, true
			if tr != nil {
				tr.Close()
			}
		}); err != nil {
			t.Fatal(err)
		}
		runUntil(t, l, 5*time.Second, func() bool { return done })
	}
	dial(DialOptions{LocalHost: "127.0.0.2"})
	if dialErr != nil {
		t.Fatal(dialErr)
	}
	runUntil(t, l, 5*time.Second, func() bool { return peer != "" })
	if peer != "127.0.0.2" {
		t.Errorf("the server saw %s, want the local address 127.0.0.2", peer)
	}
	dial(DialOptions{LocalHost: "::1"})
	if dialErr != EINVAL {
		t.Errorf("an IPv6 local address for an IPv4 peer: %v, want EINVAL", dialErr)
	}
	if err := l.DialTCPWith("127.0.0.1", port, DialOptions{HappyEyeballsDelay: -1}, nil, func(*Transport, error) {}); err != EINVAL {
		t.Errorf("a negative delay: %v", err)
	}
}

// sockaddrAddr decodes the IP of a raw IPv4/IPv6 sockaddr.
func sockaddrAddr(raw []byte) (netip.Addr, bool) {
	switch {
	case len(raw) >= 8 && SockaddrPort(raw) >= 0 && len(raw) < 24:
		return netip.AddrFrom4([4]byte(raw[4:8])), true
	case len(raw) >= 24:
		return netip.AddrFrom16([16]byte(raw[8:24])), true
	}
	return netip.Addr{}, false
}
