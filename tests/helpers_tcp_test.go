// SPDX-License-Identifier: MIT

package tests

import (
	"crypto/sha256"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// Helpers for the transport, server, UDP and name tests. Every address is
// a loopback one.

const cENONAME = -10010 // LL_ENONAME

// runNet runs l until a callback calls Stop, failing the test if limit
// passes first.
func runNet(t *testing.T, l *ll.Loop, limit time.Duration) {
	t.Helper()
	timedOut := false
	h, err := l.CallLater(limit, func() { timedOut = true; l.Stop() })
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	h.Cancel()
	if timedOut {
		t.Fatalf("loop did not stop within %v", limit)
	}
}

// echoProto writes back what it reads; on EOF it closes (after flushing).
type echoProto struct {
	ll.BaseProtocol
	lost chan error // gets ConnectionLost's error, when not nil
}

func (e *echoProto) DataReceived(t *ll.Transport, data []byte) { t.Write(data) }

func (e *echoProto) ConnectionLost(_ *ll.Transport, err error) {
	if e.lost != nil {
		e.lost <- err
	}
}

// collector records a client's events: bytes (copied), EOFs, the lost
// error, and the order of event kinds.
type collector struct {
	ll.BaseProtocol
	data   []byte
	kinds  []ll.EventKind
	eofs   int
	keep   bool // EOFReceived's answer
	lost   bool
	err    error
	onMade func(t *ll.Transport)
	onLost func(t *ll.Transport)
}

func (c *collector) ConnectionMade(t *ll.Transport) {
	c.kinds = append(c.kinds, ll.ConnectionMade)
	if c.onMade != nil {
		c.onMade(t)
	}
}

func (c *collector) DataReceived(_ *ll.Transport, data []byte) {
	if n := len(c.kinds); n == 0 || c.kinds[n-1] != ll.DataReceived {
		c.kinds = append(c.kinds, ll.DataReceived)
	}
	c.data = append(c.data, data...)
}

func (c *collector) EOFReceived(*ll.Transport) bool {
	c.kinds = append(c.kinds, ll.EOFReceived)
	c.eofs++
	return c.keep
}

func (c *collector) ConnectionLost(t *ll.Transport, err error) {
	c.kinds = append(c.kinds, ll.ConnectionLost)
	c.lost, c.err = true, err
	if c.onLost != nil {
		c.onLost(t)
	}
}

// pattern returns n pseudo-random bytes and their SHA-256.
func pattern(n int) ([]byte, [32]byte) {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b, sha256.Sum256(b)
}

// listenEcho starts an echo server on 127.0.0.1 and returns it and its port.
func listenEcho(t *testing.T, l *ll.Loop, lost chan error) (*ll.Server, int) {
	t.Helper()
	srv, err := l.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return &echoProto{lost: lost} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Release() })
	port, err := srv.Port()
	if err != nil || port <= 0 || port > 65535 {
		t.Fatalf("Port() = %d, %v", port, err)
	}
	return srv, port
}

// dial connects p to 127.0.0.1:port and releases the future when t ends.
func dial(t *testing.T, l *ll.Loop, port int, p ll.Protocol) *ll.DialFuture {
	t.Helper()
	d, err := l.DialTCP("127.0.0.1", port, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Release() })
	return d
}

// closedPort returns a loopback TCP port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) }) // bound, never listening, until t ends
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*unix.SockaddrInet4).Port
}
