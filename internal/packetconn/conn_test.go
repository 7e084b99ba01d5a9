// SPDX-License-Identifier: MIT

package packetconn

import (
	"errors"
	"fmt"
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
	sent    [][]byte
	to      [][]byte
	sendErr error
}

func (t *fakeTransport) SendTo(d, addr []byte) error {
	t.Mu.Lock()
	defer t.Mu.Unlock()
	t.sent = append(t.sent, d)
	t.to = append(t.to, addr)
	return t.sendErr
}

func (t *fakeTransport) counts() (sent, pauses, resumes, closes int) {
	t.Mu.Lock()
	sent = len(t.sent)
	t.Mu.Unlock()
	pauses, resumes, closes = t.Counts()
	return sent, pauses, resumes, closes
}

var peer = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}

func newTestConn(t *testing.T) (*Conn, *fake.Loop, *fakeTransport) {
	l := fake.NewLoop(t)
	tr := &fakeTransport{}
	c := &Conn{}
	c.Init(l, "udp")
	c.Attach(tr, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4000})
	return c, l, tr
}

// The receive queue pauses the transport at QueueMax datagrams, once, and
// ReadFrom resumes it once it has taken the queue down to half; every
// datagram is read in order with its sender.
func TestConnQueuePausesAndResumes(t *testing.T) {
	c, l, tr := newTestConn(t)
	for i := range QueueMax + 10 { // the transport delivers a few more in its batch
		c.Datagram(fmt.Appendf(nil, "%d", i), peer)
	}
	if _, pauses, _, _ := tr.counts(); pauses != 1 {
		t.Fatalf("%d pauses for a full queue, want 1", pauses)
	}
	if st := c.QueueState(); st.Queued != QueueMax+10 || !st.Paused {
		t.Fatalf("queue state %+v", st)
	}
	buf := make([]byte, 8)
	for i := range QueueMax + 10 {
		k, from, err := c.ReadFrom(buf)
		if err != nil || string(buf[:k]) != fmt.Sprint(i) || from.String() != peer.String() {
			t.Fatalf("datagram %d: %q from %v, %v", i, buf[:k], from, err)
		}
		if err := l.Sync(); err != nil { // a resume this ReadFrom posted has run
			t.Fatal(err)
		}
		want, queued := 0, c.QueueState().Queued
		if queued <= QueueMax/2 {
			want = 1
		}
		if _, _, resumes, _ := tr.counts(); resumes != want {
			t.Fatalf("%d resumes with %d datagrams still queued, want %d", resumes, queued, want)
		}
	}
	if st := c.QueueState(); st.Paused || st.Queued != 0 || st.Bytes != 0 {
		t.Fatalf("queue state after reading all %+v", st)
	}
}

// The bytes bound pauses the transport before the count bound.
func TestConnQueueBytesBound(t *testing.T) {
	c, _, tr := newTestConn(t)
	big := make([]byte, 60000)
	n := 0
	for !c.QueueState().Paused && n < QueueMax {
		c.Datagram(big, peer)
		n++
	}
	if st := c.QueueState(); st.Bytes < QueueBytes || n >= QueueMax {
		t.Fatalf("paused with %+v after %d datagrams: want the bytes bound", st, n)
	}
	if _, pauses, _, _ := tr.counts(); pauses != 1 {
		t.Fatalf("%d pauses", pauses)
	}
}

// WriteTo posts a copy of the datagram to the loop with its raw address,
// and waits once WriteHigh bytes are on their way; a send error comes
// back from the next WriteTo, once.
func TestConnWriteBoundAndSendError(t *testing.T) {
	c, l, tr := newTestConn(t)
	release := l.Hold() // the loop runs nothing: posted datagrams stay on their way
	d := make([]byte, 60000)
	posted := 0
	for posted < WriteHigh {
		if n, err := c.WriteTo(d, peer); n != len(d) || err != nil {
			t.Fatalf("WriteTo = %d, %v", n, err)
		}
		posted += len(d)
	}
	c.SetWriteDeadline(time.Now().Add(30 * time.Millisecond))
	if _, err := c.WriteTo(d, peer); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("WriteTo with %d bytes on their way = %v, want the deadline", posted, err)
	}
	c.SetWriteDeadline(time.Time{})
	d[0] = 'x' // the posted datagrams are copies
	release()
	fake.Eventually(t, "the sends", func() bool { s, _, _, _ := tr.counts(); return s == posted/len(d) })
	tr.Mu.Lock()
	if tr.sent[0][0] != 0 || len(tr.to[0]) == 0 {
		tr.Mu.Unlock()
		t.Fatal("the transport got the caller's buffer, or no address")
	}
	tr.sendErr = syscall.ENETUNREACH
	tr.Mu.Unlock()
	if _, err := c.WriteTo([]byte("a"), peer); err != nil {
		t.Fatalf("WriteTo = %v", err)
	}
	fake.Eventually(t, "the refused send", func() bool {
		c.w.Mu.Lock()
		defer c.w.Mu.Unlock()
		return c.posted == 0
	})
	tr.Mu.Lock()
	tr.sendErr = nil
	tr.Mu.Unlock()
	if _, err := c.WriteTo([]byte("b"), peer); !errors.Is(err, syscall.ENETUNREACH) {
		t.Fatalf("the WriteTo after a refused send = %v, want its ENETUNREACH", err)
	}
	if _, err := c.WriteTo([]byte("c"), peer); err != nil {
		t.Fatalf("WriteTo after the error was reported = %v", err)
	}
	c.SendFailed(syscall.EMSGSIZE) // the transport's error_received
	if _, err := c.WriteTo([]byte("d"), peer); !errors.Is(err, syscall.EMSGSIZE) {
		t.Fatalf("the WriteTo after error_received = %v, want its EMSGSIZE", err)
	}
}

// The transport's loss ends ReadFrom with its error (net.ErrClosed for a
// clean close) after what was queued, and WriteTo with net.ErrClosed;
// Close wakes a waiting ReadFrom and closes the transport once.
func TestConnLostAndClose(t *testing.T) {
	c, _, tr := newTestConn(t)
	c.Datagram([]byte("last"), peer)
	c.Lost(syscall.ECONNREFUSED)
	buf := make([]byte, 8)
	if k, _, err := c.ReadFrom(buf); err != nil || string(buf[:k]) != "last" {
		t.Fatalf("ReadFrom before the loss's error = %q, %v", buf[:k], err)
	}
	if _, _, err := c.ReadFrom(buf); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("ReadFrom after the loss = %v", err)
	}
	if _, err := c.WriteTo([]byte("x"), peer); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("WriteTo after the loss = %v", err)
	}

	c2, _, tr2 := newTestConn(t)
	errc := make(chan error, 1)
	go func() { _, _, err := c2.ReadFrom(buf); errc <- err }()
	time.Sleep(10 * time.Millisecond)
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("ReadFrom across Close = %v", err)
	}
	if err := c2.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close = %v", err)
	}
	fake.Eventually(t, "the transport's close", func() bool { _, _, _, n := tr2.counts(); return n == 1 })
	if _, _, _, n := tr.counts(); n != 0 {
		t.Fatalf("a lost transport was closed %d times by nobody's Close", n)
	}
}

// WriteTo refuses what is not a valid *net.UDPAddr with EINVAL, and an
// oversized datagram with EMSGSIZE, before anything is posted.
func TestConnWriteToBadInput(t *testing.T) {
	c, _, tr := newTestConn(t)
	for _, a := range []net.Addr{nil, (*net.UDPAddr)(nil), &net.TCPAddr{IP: net.IPv4(1, 2, 3, 4)},
		&net.UDPAddr{IP: net.IP{1}, Port: 1}, &net.UDPAddr{IP: net.IPv4(1, 2, 3, 4), Port: 65536}} {
		if _, err := c.WriteTo([]byte("x"), a); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("WriteTo(%#v) = %v, want EINVAL", a, err)
		}
	}
	if _, err := c.WriteTo(make([]byte, MaxDatagram+1), peer); !errors.Is(err, syscall.EMSGSIZE) {
		t.Errorf("WriteTo of %d bytes = %v, want EMSGSIZE", MaxDatagram+1, err)
	}
	if s, _, _, _ := tr.counts(); s != 0 {
		t.Errorf("%d refused datagrams reached the transport", s)
	}
}
