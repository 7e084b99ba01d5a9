// SPDX-License-Identifier: MIT

package streamconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/libloop/libloop/internal/conntest/fake"
)

// fakeTransport records what a Conn asks of it (on the fake loop's
// goroutine; the test reads it under Mu).
type fakeTransport struct {
	fake.Transport
	written  bytes.Buffer
	chunks   []int
	eofs     int
	writeErr error
	paused   bool
}

func (t *fakeTransport) Write(p []byte) error {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.written.Write(p)
	t.chunks = append(t.chunks, len(p))
	return t.writeErr
}

func (t *fakeTransport) WriteEOF() error { t.Mu.Lock(); t.eofs++; t.Mu.Unlock(); return nil }

// pausingTransport also reports its write pause after each Write.
type pausingTransport struct{ *fakeTransport }

func (t pausingTransport) WritePaused() bool {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	return t.paused
}

func newTestConn(t *testing.T, opts Options) (*Conn, *fake.Loop, *fakeTransport) {
	l := fake.NewLoop(t)
	tr := &fakeTransport{}
	c := &Conn{}
	c.Init(l, "tcp", opts)
	c.Attach(tr, nil, &net.TCPAddr{Port: 9})
	return c, l, tr
}

// Write hands the transport all of p in order, in chunks of at most
// WriteChunk bytes.
func TestConnWriteChunks(t *testing.T) {
	c, _, tr := newTestConn(t, Options{})
	p := make([]byte, 3*WriteChunk+100)
	for i := range p {
		p[i] = byte(i * 7)
	}
	if n, err := c.Write(p); n != len(p) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	fake.Eventually(t, "the chunks", func() bool {
		tr.Mu.Lock()
		defer tr.Mu.Unlock()
		return tr.written.Len() == len(p)
	})
	tr.Mu.Lock()
	defer tr.Mu.Unlock()
	if !bytes.Equal(tr.written.Bytes(), p) {
		t.Fatal("the transport got other bytes than were written")
	}
	for _, n := range tr.chunks {
		if n > WriteChunk {
			t.Fatalf("a chunk of %d bytes, more than %d", n, WriteChunk)
		}
	}
}

// Write waits while the transport is above its high-water mark and goes
// on at ResumeWriting.
func TestConnWriteWaitsWhilePaused(t *testing.T) {
	c, _, _ := newTestConn(t, Options{})
	c.SetWritePaused(true) // as PauseWriting would, before the Write
	c.SetWriteDeadline(time.Now().Add(30 * time.Millisecond))
	if n, err := c.Write([]byte("x")); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("paused Write = %d, %v; want a deadline error", n, err)
	}
	c.SetWriteDeadline(time.Time{})
	c.SetWritePaused(false)
	if n, err := c.Write([]byte("y")); n != 1 || err != nil {
		t.Fatalf("resumed Write = %d, %v", n, err)
	}
}

// A transport that reports its pause after a Write holds the next Write
// back without a PauseWriting event.
func TestConnWriteTakesReportedPause(t *testing.T) {
	l := fake.NewLoop(t)
	tr := &fakeTransport{paused: true}
	c := &Conn{}
	c.Init(l, "tcp", Options{})
	c.Attach(pausingTransport{tr}, nil, nil)
	if n, err := c.Write([]byte("first")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	fake.Eventually(t, "the first write on the loop", func() bool {
		c.w.Mu.Lock()
		defer c.w.Mu.Unlock()
		return c.posted == 0
	})
	c.SetWriteDeadline(time.Now().Add(30 * time.Millisecond))
	if n, err := c.Write([]byte("second")); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write over a paused transport = %d, %v; want a deadline error", n, err)
	}
}

// A write the transport refused is returned by the next Write.
func TestConnWriteReturnsRefusal(t *testing.T) {
	c, _, tr := newTestConn(t, Options{})
	tr.Mu.Lock()
	tr.writeErr = syscall.ENOBUFS
	tr.Mu.Unlock()
	if n, err := c.Write([]byte("a")); n != 1 || err != nil {
		t.Fatalf("first Write = %d, %v", n, err)
	}
	fake.Eventually(t, "the refused write on the loop", func() bool {
		c.w.Mu.Lock()
		defer c.w.Mu.Unlock()
		return c.posted == 0
	})
	if n, err := c.Write([]byte("b")); n != 0 || !errors.Is(err, syscall.ENOBUFS) {
		t.Fatalf("Write after a refusal = %d, %v; want ENOBUFS", n, err)
	}
}

// No more than WriteHigh bytes are on their way to the loop at once.
func TestConnWriteBoundsInFlight(t *testing.T) {
	l := fake.NewLoop(t)
	release := l.Hold() // the loop is busy: nothing posted runs
	c := &Conn{}
	c.Init(l, "tcp", Options{})
	c.Attach(&fakeTransport{}, nil, nil)
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.Write(make([]byte, 2*WriteHigh))
	release()
	if n != WriteHigh || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write = %d, %v; want %d bytes then a deadline error", n, err, WriteHigh)
	}
}

// Reading is paused at ReadHigh unread bytes and resumed once Read
// brings them down to ReadLow.
func TestConnReadPauseResume(t *testing.T) {
	c, l, tr := newTestConn(t, Options{})
	l.Post(func() { c.Data(make([]byte, ReadHigh)) })
	fake.Eventually(t, "the pause", func() bool { p, _, _ := tr.Counts(); return p == 1 })
	buf := make([]byte, ReadHigh-ReadLow-1)
	if n, err := c.Read(buf); n != len(buf) || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	if err := l.Sync(); err != nil { // a resume that Read posted has run
		t.Fatal(err)
	}
	if _, early, _ := tr.Counts(); early != 0 {
		t.Fatalf("resumed with %d bytes unread, more than %d", ReadLow+1, ReadLow)
	}
	if n, err := c.Read(buf[:1]); n != 1 || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	fake.Eventually(t, "the resume", func() bool { _, r, _ := tr.Counts(); return r == 1 })
	if st := c.ReadState(); st.Unread != ReadLow || st.Paused {
		t.Fatalf("state %+v, want %d unread and not paused", st, ReadLow)
	}
}

// Read returns data first, then io.EOF after the peer's half-close; a
// loss with an error gives that error, and Write after it EPIPE or, with
// WriteLossError, the loss's error.
func TestConnEndings(t *testing.T) {
	for _, lossErr := range []bool{false, true} {
		c, l, _ := newTestConn(t, Options{WriteLossError: lossErr})
		l.Post(func() { c.Data([]byte("ab")); c.EOF() })
		buf := make([]byte, 10)
		if n, err := c.Read(buf); n != 2 || err != nil {
			t.Fatalf("Read = %d, %v", n, err)
		}
		if _, err := c.Read(buf); err != io.EOF {
			t.Fatalf("Read after EOF: %v", err)
		}
		c2 := &Conn{}
		c2.Init(l, "tcp", Options{WriteLossError: lossErr})
		c2.Attach(&fakeTransport{}, nil, nil)
		l.Post(func() { c2.Lost(syscall.ECONNRESET) })
		if _, err := c2.Read(buf); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("Read after a reset: %v", err)
		}
		want := syscall.EPIPE
		if lossErr {
			want = syscall.ECONNRESET
		}
		if _, err := c2.Write([]byte("x")); !errors.Is(err, want) {
			t.Fatalf("WriteLossError %v: Write after a reset: %v, want %v", lossErr, err, want)
		}
	}
}

// CloseWrite asks the transport for its write EOF; c still reads.
func TestConnCloseWrite(t *testing.T) {
	c, l, tr := newTestConn(t, Options{})
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	fake.Eventually(t, "the transport's WriteEOF", func() bool {
		tr.Mu.Lock()
		defer tr.Mu.Unlock()
		return tr.eofs == 1
	})
	l.Post(func() { c.Data([]byte("z")) })
	if n, err := c.Read(make([]byte, 4)); n != 1 || err != nil {
		t.Fatalf("Read after CloseWrite = %d, %v", n, err)
	}
}

// Close wakes a waiting Read with net.ErrClosed, closes the transport
// once, and a second Close fails; so does SetDeadline after it.
func TestConnCloseWakesRead(t *testing.T) {
	c, _, tr := newTestConn(t, Options{})
	errc := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read err = %v, want net.ErrClosed", err)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("SetDeadline after Close: %v", err)
	}
	if err := c.CloseWrite(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("CloseWrite after Close: %v", err)
	}
	fake.Eventually(t, "the transport's Close", func() bool { _, _, n := tr.Counts(); return n == 1 })
}

// The loop's close wakes a waiting Read with net.ErrClosed.
func TestConnLoopCloseWakesRead(t *testing.T) {
	c, l, _ := newTestConn(t, Options{})
	errc := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	l.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read err = %v, want net.ErrClosed", err)
	}
}

// Attach takes missing addresses as unnamed Unix ones; errors carry the
// Conn's network and addresses.
func TestConnAddresses(t *testing.T) {
	c, _, _ := newTestConn(t, Options{})
	if a, ok := c.LocalAddr().(*net.UnixAddr); !ok || a.Name != "" {
		t.Fatalf("LocalAddr = %#v", c.LocalAddr())
	}
	c.SetReadDeadline(time.Now().Add(-time.Second))
	_, err := c.Read(make([]byte, 1))
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || oe.Net != "tcp" || oe.Addr.String() != c.RemoteAddr().String() || !oe.Timeout() {
		t.Fatalf("Read past the deadline: %#v", err)
	}
}
