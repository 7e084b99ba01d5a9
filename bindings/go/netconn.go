// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/libloop/libloop/internal/streamconn"
)

// Conn is a net.Conn (io.Reader, io.Writer, io.Closer) over a stream
// Transport, for goroutines other than the one running the loop, as the
// core's Conn: Read blocks until the transport delivers data, Write until
// the transport has room. The transport's calls belong to the loop's
// thread, so every one the Conn makes is posted there
// (CallSoonThreadsafe): a goroutine must be running the loop (go
// loop.RunForever()) while a Conn is used, and a Conn's methods must not
// be called from the loop's own callbacks (they would wait on the loop
// they block).
//
// Flow control both ways (internal/streamconn, shared with the core's
// Conn): reading is paused while more than 256 KiB wait unread and
// resumed once Read brings them down to 64 KiB; Write hands the
// transport at most 64 KiB at a time and waits while 256 KiB are on
// their way to it or while the transport is above its high-water mark
// (between its PauseWriting and ResumeWriting events). Deadlines, Close
// and the loop's Close unblock waiting calls, as net.Conn requires.
type Conn struct {
	s streamconn.Conn
}

func newConn(l *Loop, network string) *Conn {
	c := &Conn{}
	c.s.Init(streamLoop{l}, network, streamconn.Options{WriteLossError: true})
	return c
}

// NewConn makes a Conn of t, a connected stream transport (TCP, Unix,
// TLS, a socketpair adopted with OpenTransport): t's later events go to
// the Conn (Transport.SetProtocol). Call it on the loop's thread, in t's
// ConnectionMade (or before t has delivered any data: bytes delivered to
// the old protocol are not the Conn's), then hand the Conn to another
// goroutine. EINVAL for nil, ECLOSED for a transport already lost.
func NewConn(t *Transport) (*Conn, error) {
	if t == nil {
		return nil, EINVAL
	}
	if t.Lost() {
		return nil, ECLOSED
	}
	network := "pipe" // not a socket: a pipe, a pty (as net.Pipe names its own)
	if a, err := t.SockName(); err == nil {
		switch a.Family {
		case syscall.AF_UNIX:
			network = "unix"
		case syscall.AF_INET, syscall.AF_INET6:
			network = "tcp"
		}
	}
	c := newConn(t.loop, network)
	c.attach(t)
	t.SetProtocol(connProtocol{c})
	return c, nil
}

// attach binds c to its transport and reads its addresses (loop thread).
func (c *Conn) attach(t *Transport) {
	if c.s.Attached() {
		return
	}
	var local, remote net.Addr
	if a, err := t.SockName(); err == nil {
		local = toNetAddr(a)
	}
	if a, err := t.PeerName(); err == nil {
		remote = toNetAddr(a)
	}
	c.s.Attach(t, local, remote)
}

// toNetAddr converts an Addr to a *net.TCPAddr or *net.UnixAddr (nil for
// another family).
func toNetAddr(a Addr) net.Addr {
	switch a.Family {
	case syscall.AF_INET, syscall.AF_INET6:
		ip := a.AddrPort.Addr()
		return &net.TCPAddr{IP: ip.AsSlice(), Port: int(a.AddrPort.Port()), Zone: ip.Zone()}
	case syscall.AF_UNIX:
		return &net.UnixAddr{Name: a.Path, Net: "unix"}
	}
	return nil
}

// connProtocol receives a Conn's transport events on the loop thread (a
// type of its own, so the Protocol methods are not the Conn's).
type connProtocol struct{ c *Conn }

// ConnectionMade binds the Conn to the transport.
func (p connProtocol) ConnectionMade(t *Transport) { p.c.attach(t) }

// DataReceived queues a copy of data (a view of the library's buffer) and
// pauses reading when too much waits unread.
func (p connProtocol) DataReceived(_ *Transport, data []byte) { p.c.s.Data(data) }

// EOFReceived records the peer's half-close and keeps the transport open
// for writing.
func (p connProtocol) EOFReceived(*Transport) bool {
	p.c.s.EOF()
	return true
}

// ConnectionLost records the end and its error.
func (p connProtocol) ConnectionLost(_ *Transport, err error) { p.c.s.Lost(err) }

// PauseWriting holds Write back.
func (p connProtocol) PauseWriting(*Transport) { p.c.s.SetWritePaused(true) }

// ResumeWriting lets Write go on.
func (p connProtocol) ResumeWriting(*Transport) { p.c.s.SetWritePaused(false) }

// DatagramReceived does not happen on a stream.
func (connProtocol) DatagramReceived(*Transport, []byte, Addr) {}

// ErrorReceived does not happen on a stream.
func (connProtocol) ErrorReceived(*Transport, error) {}

// Read reads data the peer sent, blocking until there is some, the peer
// shut down its side or closed cleanly (io.EOF), the connection is lost
// (an *net.OpError wrapping its Error: errors.Is(err,
// syscall.ECONNRESET) after a reset), the read deadline passes
// (os.ErrDeadlineExceeded, Timeout() true) or c is closed
// (net.ErrClosed). Data received before the end is read first.
func (c *Conn) Read(p []byte) (int, error) { return c.s.Read(p) }

// Write writes p, blocking while the transport's buffer is full; it
// returns len(p) once all of p is handed to the transport (which sends it
// in order, as a socket's send buffer does), or fewer bytes with the
// error that stopped it: the write deadline (os.ErrDeadlineExceeded),
// Close or the loop's close (net.ErrClosed), a lost connection (EPIPE, or
// the loss's own error).
func (c *Conn) Write(p []byte) (int, error) { return c.s.Write(p) }

// Close closes the connection: calls waiting on c return net.ErrClosed;
// data already written is flushed before the transport closes (the
// transport's Close). Closing twice returns an error.
func (c *Conn) Close() error { return c.s.Close() }

// CloseWrite shuts down the writing side once written data is flushed
// (the transport's WriteEOF); the peer reads EOF, c may still read.
func (c *Conn) CloseWrite() error { return c.s.CloseWrite() }

// LocalAddr returns the local address (*net.TCPAddr or *net.UnixAddr).
func (c *Conn) LocalAddr() net.Addr { return c.s.LocalAddr() }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.s.RemoteAddr() }

// SetDeadline sets the read and write deadlines (zero: none).
func (c *Conn) SetDeadline(t time.Time) error { return c.s.SetDeadline(t) }

// SetReadDeadline sets the deadline of pending and future Reads.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.s.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline of pending and future Writes.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.s.SetWriteDeadline(t) }

// DialConn connects to address on network ("tcp", "tcp4", "tcp6": a
// "host:port" connected as DialTCP does, trying each address the name
// resolves to, not filtered by family; "unix": a socket path, as
// DialUnix) and returns a Conn. Call it from a goroutine other than the
// one running the loop. When ctx is done before the connect completes,
// the connect is cancelled (its sockets closed, no transport made) and
// the error wraps ctx.Err(). Errors are *net.OpError with Op "dial".
func (l *Loop) DialConn(ctx context.Context, network, address string) (*Conn, error) {
	if ctx == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: EINVAL}
	}
	host, port, err := streamconn.SplitAddress("dial", network, address)
	if err != nil {
		return nil, err
	}
	c := newConn(l, network)
	_, err = l.openFor(ctx, func() (*DialFuture, error) {
		if network == "unix" {
			return l.DialUnix(address, connProtocol{c})
		}
		return l.DialTCP(host, port, connProtocol{c})
	})
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	return c, nil
}

var _ net.Conn = (*Conn)(nil)
