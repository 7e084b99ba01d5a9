// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	"github.com/libloop/libloop/internal/conntest"
	"github.com/libloop/libloop/internal/streamconn"
)

// connPair makes a connected pair of Conns through a Listener on a loop
// of its own, run on a goroutine; stop closes both and the loop.
func connPair(network string) (c1, c2 net.Conn, stop func(), err error) {
	l, err := New()
	if err != nil {
		return nil, nil, nil, err
	}
	return conntest.Pair(conntest.Loop{
		Run:     func() { l.RunForever() },
		Stop:    func() { l.CallSoonThreadsafe(func() { l.Stop() }) },
		Release: func() { l.Close() },
		Listen:  conntest.Listener(l.ListenConn),
		Dial:    conntest.Dialer(l.DialConn),
	}, network)
}

// Go's own conformance suite for net.Conn implementations: basic I/O,
// ping-pong, racy reads and writes, every kind of deadline, Close
// unblocking pending calls, and every method called concurrently.
func TestConnNettest(t *testing.T) {
	checkNoGoroutineLeak(t)
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) { return connPair(network) })
		})
	}
}

func TestConnAddrs(t *testing.T) {
	c1, c2, stop, err := connPair("tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if c1.RemoteAddr().String() != c2.LocalAddr().String() || c2.RemoteAddr().String() != c1.LocalAddr().String() {
		t.Fatalf("addresses do not match: %v-%v and %v-%v", c1.LocalAddr(), c1.RemoteAddr(), c2.LocalAddr(), c2.RemoteAddr())
	}
	if a, ok := c1.LocalAddr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() || a.Port == 0 {
		t.Fatalf("LocalAddr %#v", c1.LocalAddr())
	}
}

// 16 MiB each way at once through io.Copy, the peer echoing with io.Copy:
// flow control keeps both sides' buffers bounded and nothing is lost or
// reordered.
func TestConnLargeTransferIOCopy(t *testing.T) {
	checkNoGoroutineLeak(t)
	c1, c2, stop, err := connPair("tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	const size = 16 << 20
	data := make([]byte, size)
	rand.New(rand.NewSource(1)).Read(data)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the echo: io.Copy both ways through one Conn
		defer wg.Done()
		io.Copy(c2, c2)
		c2.(*Conn).CloseWrite()
	}()
	go func() {
		defer wg.Done()
		if _, err := io.Copy(c1, bytes.NewReader(data)); err != nil {
			t.Errorf("copy out: %v", err)
		}
		c1.(*Conn).CloseWrite()
	}()
	h := sha256.New()
	n, err := io.Copy(h, c1)
	wg.Wait()
	if err != nil || n != size {
		t.Fatalf("read back %d bytes, %v", n, err)
	}
	if !bytes.Equal(h.Sum(nil), sum(data)) {
		t.Fatal("the data came back changed")
	}
}

func sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// A peer that does not read: Write blocks once the buffers are full (the
// write deadline then ends it), having handed over a bounded amount.
func TestConnWriteBackpressure(t *testing.T) {
	c1, _, stop, err := connPair("tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c1.SetWriteDeadline(time.Now().Add(1500 * time.Millisecond))
	n, err := c1.Write(make([]byte, 256<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write err = %v after %d bytes, want a deadline error", err, n)
	}
	// Kernel buffers (a few MiB on loopback) plus the transport's and the
	// Conn's bounds: far less than what was offered.
	if n <= 0 || n >= 64<<20 {
		t.Fatalf("Write handed over %d bytes before blocking", n)
	}
}

// A reader that does not read pauses the transport: the peer's data stops
// at the Conn's bound plus the kernel's buffers.
func TestConnReadPausesTransport(t *testing.T) {
	c1, c2, stop, err := connPair("tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c2.SetWriteDeadline(time.Now().Add(1500 * time.Millisecond))
	c2.Write(make([]byte, 256<<20)) // ends at its deadline
	conn := c1.(*Conn)
	st := conn.s.ReadState()
	unread, paused := st.Unread, st.Paused
	if !paused || unread > streamconn.ReadHigh+maxReadChunk {
		t.Fatalf("unread %d, paused %v: want paused near %d", unread, paused, streamconn.ReadHigh)
	}
	// Reading it all resumes the transport: more arrives than was buffered.
	c1.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.CopyN(io.Discard, c1, int64(unread)+streamconn.ReadHigh)
	if err != nil {
		t.Fatalf("read %d after resuming: %v", got, err)
	}
}

// Close unblocks a pending Read and Accept; a closed loop unblocks a Read.
func TestConnCloseUnblocks(t *testing.T) {
	checkNoGoroutineLeak(t)
	c1, _, stop, err := connPair("tcp")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, err := c1.Read(make([]byte, 10)); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	c1.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read err = %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	if c1.Close() == nil {
		t.Fatal("second Close returned nil")
	}
	stop()

	l := runningLoop(t)
	ln, err := l.ListenConn("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, err := ln.Accept(); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	ln.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept err = %v, want net.ErrClosed", err)
	}
}

func TestConnPeerCloseIsEOF(t *testing.T) {
	c1, c2, stop, err := connPair("tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c2.Write([]byte("last words"))
	c2.Close()
	b, err := io.ReadAll(c1)
	if err != nil || string(b) != "last words" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
}

func TestDialConnErrors(t *testing.T) {
	l := runningLoop(t)
	ctx := context.Background()
	if _, err := l.DialConn(ctx, "udp", "127.0.0.1:1"); err == nil {
		t.Fatal("DialConn accepted udp")
	}
	if _, err := l.DialConn(ctx, "tcp", "no port"); err == nil {
		t.Fatal("DialConn accepted an address without a port")
	}
	// A port nobody listens on: connection refused.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if _, err := l.DialConn(ctx, "tcp", addr); err == nil {
		t.Fatal("DialConn to a closed port succeeded")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.DialConn(cctx, "tcp", addr); !errors.Is(err, context.Canceled) {
		t.Fatalf("DialConn with a cancelled ctx: %v", err)
	}
}

// A reader that always leaves some bytes unread keeps a bounded buffer:
// what it has read is dropped, not carried along.
func TestConnReadBufferStaysBounded(t *testing.T) {
	c1, c2, stop, err := connPair("tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	const total = 32 << 20
	go func() {
		c2.Write(make([]byte, total))
		c2.Close()
	}()
	conn := c1.(*Conn)
	buf := make([]byte, 1000)
	maxCap := 0
	for got := 0; got < total; {
		// Read only while more than a read's worth waits, so the buffer
		// is never drained until the peer is done.
		st := conn.s.ReadState()
		lagging := st.Unread > 2*len(buf) || st.Ended
		if !lagging {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		n, err := c1.Read(buf)
		if err != nil {
			t.Fatalf("after %d bytes: %v", got, err)
		}
		got += n
		maxCap = max(maxCap, conn.s.ReadState().Cap)
	}
	if maxCap > 4*streamconn.ReadHigh {
		t.Fatalf("read buffer grew to %d bytes", maxCap)
	}
}
