// SPDX-License-Identifier: MIT

package streamconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeLoop runs posted functions in order on one goroutine, as a loop
// thread would.
type fakeLoop struct {
	mu     sync.Mutex
	posts  chan func()
	done   chan struct{}
	closed bool
}

func newFakeLoop(t *testing.T) *fakeLoop {
	l := &fakeLoop{posts: make(chan func(), 1024), done: make(chan struct{})}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case f := <-l.posts:
				f()
			case <-l.done:
				return
			}
		}
	}()
	t.Cleanup(func() { l.close(); <-stopped })
	return l
}

func (l *fakeLoop) Post(f func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return syscall.ESHUTDOWN
	}
	l.posts <- f
	return nil
}

func (l *fakeLoop) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (l *fakeLoop) Done() <-chan struct{} { return l.done }

func (l *fakeLoop) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.done)
	}
}

// fakeTransport records what a Conn asks of it (on the fake loop's
// goroutine; the test reads it under mu).
type fakeTransport struct {
	mu       sync.Mutex
	written  bytes.Buffer
	chunks   []int
	pauses   int
	resumes  int
	closes   int
	eofs     int
	writeErr error
	paused   bool
}

func (t *fakeTransport) Write(p []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.written.Write(p)
	t.chunks = append(t.chunks, len(p))
	return t.writeErr
}

func (t *fakeTransport) WriteEOF() error { t.mu.Lock(); t.eofs++; t.mu.Unlock(); return nil }
func (t *fakeTransport) Close() error    { t.mu.Lock(); t.closes++; t.mu.Unlock(); return nil }
func (t *fakeTransport) PauseReading() error {
	t.mu.Lock()
	t.pauses++
	t.mu.Unlock()
	return nil
}
func (t *fakeTransport) ResumeReading() error {
	t.mu.Lock()
	t.resumes++
	t.mu.Unlock()
	return nil
}

// pausingTransport also reports its write pause after each Write.
type pausingTransport struct{ *fakeTransport }

func (t pausingTransport) WritePaused() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.paused
}

func newTestConn(t *testing.T, opts Options) (*Conn, *fakeLoop, *fakeTransport) {
	l := newFakeLoop(t)
	tr := &fakeTransport{}
	c := &Conn{}
	c.Init(l, "tcp", opts)
	c.Attach(tr, nil, &net.TCPAddr{Port: 9})
	return c, l, tr
}

// eventually polls cond for up to a second.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
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
	eventually(t, "the chunks", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.written.Len() == len(p)
	})
	tr.mu.Lock()
	defer tr.mu.Unlock()
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
	l := newFakeLoop(t)
	tr := &fakeTransport{paused: true}
	c := &Conn{}
	c.Init(l, "tcp", Options{})
	c.Attach(pausingTransport{tr}, nil, nil)
	if n, err := c.Write([]byte("first")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	eventually(t, "the first write on the loop", func() bool {
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
	tr.mu.Lock()
	tr.writeErr = syscall.ENOBUFS
	tr.mu.Unlock()
	if n, err := c.Write([]byte("a")); n != 1 || err != nil {
		t.Fatalf("first Write = %d, %v", n, err)
	}
	eventually(t, "the refused write on the loop", func() bool {
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
	l := newFakeLoop(t)
	gate := make(chan struct{})
	l.Post(func() { <-gate }) // the loop is busy: nothing posted runs
	c := &Conn{}
	c.Init(l, "tcp", Options{})
	c.Attach(&fakeTransport{}, nil, nil)
	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	n, err := c.Write(make([]byte, 2*WriteHigh))
	close(gate)
	if n != WriteHigh || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write = %d, %v; want %d bytes then a deadline error", n, err, WriteHigh)
	}
}

// Reading is paused at ReadHigh unread bytes and resumed once Read
// brings them down to ReadLow.
func TestConnReadPauseResume(t *testing.T) {
	c, l, tr := newTestConn(t, Options{})
	l.Post(func() { c.Data(make([]byte, ReadHigh)) })
	eventually(t, "the pause", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.pauses == 1
	})
	buf := make([]byte, ReadHigh-ReadLow-1)
	if n, err := c.Read(buf); n != len(buf) || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	time.Sleep(10 * time.Millisecond)
	tr.mu.Lock()
	early := tr.resumes
	tr.mu.Unlock()
	if early != 0 {
		t.Fatalf("resumed with %d bytes unread, more than %d", ReadLow+1, ReadLow)
	}
	if n, err := c.Read(buf[:1]); n != 1 || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	eventually(t, "the resume", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.resumes == 1
	})
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
	eventually(t, "the transport's WriteEOF", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
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
	eventually(t, "the transport's Close", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return tr.closes == 1
	})
}

// The loop's close wakes a waiting Read with net.ErrClosed.
func TestConnLoopCloseWakesRead(t *testing.T) {
	c, l, _ := newTestConn(t, Options{})
	errc := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	l.close()
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
