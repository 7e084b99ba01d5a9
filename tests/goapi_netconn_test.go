// SPDX-License-Identifier: MIT

package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// The binding's net.Conn over a libloop.so transport, with the loop on a
// goroutine of its own and peers from Go's net package: what a program
// that hands a Conn to io.Copy, bufio or an HTTP client relies on.

// goPeer accepts one connection on a Go listener and hands it over.
func goPeer(t *testing.T, network, address string) (addr string, conns <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(ch)
			return
		}
		t.Cleanup(func() { c.Close() })
		ch <- c
	}()
	return ln.Addr().String(), ch
}

// dialPeer dials a Go peer with DialConn and returns both ends.
func dialPeer(t *testing.T, l *ll.Loop) (*ll.Conn, net.Conn) {
	t.Helper()
	addr, conns := goPeer(t, "tcp", "127.0.0.1:0")
	c, err := l.DialConn(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	select {
	case p := <-conns:
		if p == nil {
			t.Fatal("the peer's accept failed")
		}
		return c, p
	case <-time.After(5 * time.Second):
		t.Fatal("the peer accepted nothing")
	}
	return nil, nil
}

// Megabytes both ways through an echoing peer: every byte comes back in
// order, past the Conn's read and write bounds (flow control both ways).
func TestGoAPINetConnBulkEcho(t *testing.T) {
	l, _ := runningLoop(t)
	c, p := dialPeer(t, l)
	go func() { io.Copy(p, p); p.(*net.TCPConn).CloseWrite() }()
	data, sum := pattern(8 << 20)
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		if err == nil {
			err = c.CloseWrite()
		}
		wrote <- err
	}()
	h := sha256.New()
	n, err := io.Copy(h, c) // ends at the peer's EOF
	if err != nil || n != int64(len(data)) {
		t.Fatalf("read back %d bytes, %v; want %d", n, err, len(data))
	}
	if !bytes.Equal(h.Sum(nil), sum[:]) {
		t.Fatal("the bytes came back changed or out of order")
	}
	if err := <-wrote; err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got, err := c.Read(make([]byte, 1)); got != 0 || err != io.EOF {
		t.Errorf("Read after EOF = %d, %v; want io.EOF again", got, err)
	}
}

// After the peer's half-close, Read returns what came, then io.EOF; the
// Conn can still write, and the addresses are the peer's, swapped.
func TestGoAPINetConnHalfCloseAndAddrs(t *testing.T) {
	l, _ := runningLoop(t)
	c, p := dialPeer(t, l)
	if c.LocalAddr().String() != p.RemoteAddr().String() || c.RemoteAddr().String() != p.LocalAddr().String() {
		t.Errorf("addresses %v -> %v, the peer sees %v -> %v", c.LocalAddr(), c.RemoteAddr(), p.RemoteAddr(), p.LocalAddr())
	}
	if _, ok := c.LocalAddr().(*net.TCPAddr); !ok {
		t.Errorf("LocalAddr is a %T, want *net.TCPAddr", c.LocalAddr())
	}
	p.Write([]byte("last words"))
	p.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if string(got) != "last words" || err != nil {
		t.Fatalf("ReadAll = %q, %v; want the data, then EOF (nil from ReadAll)", got, err)
	}
	if _, err := c.Write([]byte("reply")); err != nil {
		t.Fatalf("Write after the peer's EOF: %v", err)
	}
	c.CloseWrite()
	reply, err := io.ReadAll(p)
	if string(reply) != "reply" || err != nil {
		t.Errorf("the peer read %q, %v", reply, err)
	}
}

// A peer that resets: data it sent first is still read, then Read fails
// with ECONNRESET (not io.EOF), and so does a Write.
func TestGoAPINetConnPeerReset(t *testing.T) {
	l, _ := runningLoop(t)
	c, p := dialPeer(t, l)
	p.Write([]byte("partial"))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if string(buf[:n]) != "partial" || err != nil {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	p.(*net.TCPConn).SetLinger(0)
	p.Close() // an RST
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(buf)
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("Read after a reset = %v, want a read *net.OpError matching ECONNRESET", err)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Error("Write after a reset succeeded")
	}
}

// Deadlines: a Read past its deadline fails with os.ErrDeadlineExceeded
// (a net.Error whose Timeout is true) without ending the connection; a
// deadline set while Read waits wakes it; a deadline cleared lets the
// next Read wait for data.
func TestGoAPINetConnReadDeadline(t *testing.T) {
	l, _ := runningLoop(t)
	c, p := dialPeer(t, l)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	t0 := time.Now()
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline = %v, want os.ErrDeadlineExceeded with Timeout()", err)
	}
	if d := time.Since(t0); d < 20*time.Millisecond {
		t.Errorf("Read gave up after %v, before its 20ms deadline", d)
	}
	c.SetReadDeadline(time.Time{})
	woken := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 8)); woken <- err }()
	time.Sleep(10 * time.Millisecond)
	c.SetReadDeadline(time.Now().Add(-time.Second)) // in the past: wakes the waiting Read
	select {
	case err := <-woken:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the waiting Read got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a deadline set while Read waited did not wake it")
	}
	c.SetDeadline(time.Time{})
	go func() { time.Sleep(10 * time.Millisecond); p.Write([]byte("late")) }()
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	if string(buf[:n]) != "late" || err != nil {
		t.Errorf("Read after the deadline was cleared = %q, %v", buf[:n], err)
	}
}

// Back-pressure: to a peer that does not read, Write blocks once the
// socket and the transport are full instead of buffering without bound,
// and its deadline ends it with the count of bytes handed over.
func TestGoAPINetConnWriteBackPressure(t *testing.T) {
	l, _ := runningLoop(t)
	c, p := dialPeer(t, l)
	big := make([]byte, 64<<20)
	c.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
	n, err := c.Write(big)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write to a peer that does not read = %d, %v; want the write deadline", n, err)
	}
	t.Logf("Write handed over %d bytes before its deadline", n)
	if n <= 0 || n >= len(big)/2 {
		t.Errorf("Write handed over %d of %d bytes before its deadline: no back-pressure", n, len(big))
	}
	// The bytes handed over do reach the peer, in order.
	c.SetWriteDeadline(time.Time{})
	c.CloseWrite()
	got, err := io.Copy(io.Discard, p)
	if err != nil || got != int64(n) {
		t.Errorf("the peer read %d bytes, %v; Write reported %d", got, err, n)
	}
}

// Close: a waiting Read returns net.ErrClosed, later calls too, a second
// Close fails; data written before Close reaches the peer, then EOF.
func TestGoAPINetConnClose(t *testing.T) {
	l, _ := runningLoop(t)
	c, p := dialPeer(t, l)
	reading := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 8)); reading <- err }()
	time.Sleep(10 * time.Millisecond)
	c.Write([]byte("bye"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-reading:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("the Read waiting across Close got %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake a waiting Read")
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Close = %v", err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a second Close = %v, want net.ErrClosed", err)
	}
	if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("SetDeadline after Close = %v", err)
	}
	p.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(p)
	if string(got) != "bye" || err != nil {
		t.Errorf("the peer read %q, %v; want the bytes written before Close, then EOF", got, err)
	}
}

// The loop's close ends a waiting Read with net.ErrClosed.
func TestGoAPINetConnLoopClose(t *testing.T) {
	l, stop := runningLoop(t)
	c, _ := dialPeer(t, l)
	reading := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 8)); reading <- err }()
	time.Sleep(10 * time.Millisecond)
	stop()
	select {
	case err := <-reading:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read across the loop's close = %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the loop's close did not wake a waiting Read")
	}
}

// Dial errors are *net.OpError wrapping the cause; a done context wins.
func TestGoAPINetConnDialErrors(t *testing.T) {
	l, _ := runningLoop(t)
	_, err := l.DialConn(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(closedPort(t))))
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &op) || op.Op != "dial" {
		t.Errorf("DialConn to a closed port = %v, want a dial *net.OpError matching ECONNREFUSED", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.DialConn(ctx, "tcp", "127.0.0.1:1"); !errors.Is(err, context.Canceled) {
		t.Errorf("DialConn with a done context = %v, want context.Canceled", err)
	}
	if _, err := l.DialConn(context.Background(), "udp", "127.0.0.1:1"); err == nil {
		t.Error("DialConn accepted network udp")
	}
	if _, err := l.DialConn(context.Background(), "tcp", "no-port"); err == nil {
		t.Error("DialConn accepted an address without a port")
	}
}

// ListenConn's Conns, a Go client; Unix sockets; Accept after Close.
func TestGoAPINetConnListenerAndUnix(t *testing.T) {
	l, _ := runningLoop(t)
	for _, network := range []string{"tcp", "unix"} {
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = filepath.Join(t.TempDir(), "s")
		}
		ln, err := l.ListenConn(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		peer, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatalf("%s: dial %v: %v", network, ln.Addr(), err)
		}
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if network == "tcp" && c.RemoteAddr().String() != peer.LocalAddr().String() {
			t.Errorf("accepted Conn's RemoteAddr %v, the client is %v", c.RemoteAddr(), peer.LocalAddr())
		}
		if _, ok := c.LocalAddr().(*net.UnixAddr); network == "unix" && !ok {
			t.Errorf("a Unix Conn's LocalAddr is a %T", c.LocalAddr())
		}
		go func() { io.Copy(c, c); c.Close() }()
		peer.Write([]byte(network))
		peer.(interface{ CloseWrite() error }).CloseWrite()
		got, err := io.ReadAll(peer)
		if string(got) != network || err != nil {
			t.Errorf("%s: echo %q, %v", network, got, err)
		}
		peer.Close()
		ln.Close()
		if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v", err)
		}
		if err := ln.Close(); err == nil {
			t.Error("a second Listener.Close succeeded")
		}
	}
}

// NewConn adopts a transport in its ConnectionMade: here one end of a
// socketpair, the other end a Go net.Conn.
func TestGoAPINetConnNewConn(t *testing.T) {
	l, _ := runningLoop(t)
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[1]), "peer")
	peer, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	made := make(chan *ll.Conn, 1)
	onLoop(t, l, func() {
		_, err := l.OpenTransport(fds[0], ll.KindStream, &ll.ProtocolFuncs{Made: func(tr *ll.Transport) {
			c, err := ll.NewConn(tr)
			if err != nil {
				t.Errorf("NewConn: %v", err)
			}
			made <- c
		}})
		if err != nil {
			t.Errorf("OpenTransport: %v", err)
		}
		if _, err := ll.NewConn(nil); !errors.Is(err, ll.EINVAL) {
			t.Errorf("NewConn(nil) = %v", err)
		}
	})
	c := <-made
	if c == nil {
		t.FailNow()
	}
	defer c.Close()
	if _, ok := c.LocalAddr().(*net.UnixAddr); !ok {
		t.Errorf("a socketpair Conn's LocalAddr is a %T, want *net.UnixAddr", c.LocalAddr())
	}
	peer.Write([]byte("over a socketpair"))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if string(buf[:n]) != "over a socketpair" || err != nil {
		t.Errorf("Read = %q, %v", buf[:n], err)
	}
	c.Write([]byte("back"))
	n, err = peer.Read(buf)
	if string(buf[:n]) != "back" || err != nil {
		t.Errorf("the peer read %q, %v", buf[:n], err)
	}
}

// A connection's callback entries go once it is closed and lost (the
// loop's own two, the batch sink's and the route's, come with its first
// transport and stay).
func TestGoAPINetConnNoLeak(t *testing.T) {
	l, _ := runningLoop(t)
	base := -1
	for i := range 21 {
		if i == 1 {
			base = liveCallbacksSettled(t, l, base)
		}
		c, p := dialPeer(t, l)
		c.Write([]byte("x"))
		io.ReadFull(p, make([]byte, 1))
		c.Close()
		p.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.ReadAll(p) // EOF: the transport closed
		p.Close()
	}
	if n := liveCallbacksSettled(t, l, base); n > base {
		t.Fatalf("%d callback entries left after 20 closed connections", n-base)
	}
}

// liveCallbacksSettled reads LiveCallbacks on the loop's thread until it
// is at most want (want < 0: until it stops changing), for at most 5 s.
func liveCallbacksSettled(t *testing.T, l *ll.Loop, want int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	prev := -1
	for {
		var n int
		onLoop(t, l, func() { n = ll.LiveCallbacks() })
		if (want >= 0 && n <= want) || (want < 0 && n == prev) || time.Now().After(deadline) {
			return n
		}
		prev = n
		time.Sleep(20 * time.Millisecond)
	}
}
