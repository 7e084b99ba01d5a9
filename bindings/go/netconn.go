// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
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
// Flow control both ways: reading is paused while more than connReadHigh
// bytes wait unread and resumed once Read brings them down to
// connReadLow; Write hands the transport at most connWriteChunk bytes at a
// time and waits while connWriteHigh bytes are on their way to it or
// while the transport is above its high-water mark (between its
// PauseWriting and ResumeWriting events). Deadlines, Close and the loop's
// Close unblock waiting calls, as net.Conn requires.
type Conn struct {
	loop    *Loop
	t       *Transport // set by attach; used on the loop thread only
	network string
	local   net.Addr // set by attach, before the Conn is handed out
	remote  net.Addr

	readMu  sync.Mutex // one Read at a time, as a net.TCPConn's
	writeMu sync.Mutex // one Write at a time: writes never interleave

	mu      sync.Mutex    // guards the fields below
	changed chan struct{} // closed and replaced on every change (broadcast)
	closed  bool          // Close was called
	readDL  time.Time
	writeDL time.Time

	rbuf         []byte // data received, unread from roff on
	roff         int
	readPaused   bool  // the transport's reading is paused for a full rbuf
	resumePosted bool  // a resume is posted and has not run yet
	eof          bool  // the peer shut down its side
	lost         bool  // ConnectionLost came
	lostErr      error // its error, nil for a clean close
	writeErr     error // a write the transport refused
	posted       int   // bytes posted to the loop, not yet given to the transport
	writePaused  bool  // the transport is above its high-water mark
}

// Flow-control bounds of a Conn (see Conn); the core's Conn uses the same.
const (
	connReadHigh   = 256 << 10
	connReadLow    = 64 << 10
	connWriteChunk = 64 << 10
	connWriteHigh  = 256 << 10
)

func newConn(l *Loop, network string) *Conn {
	return &Conn{loop: l, network: network, changed: make(chan struct{})}
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
	if c.t != nil {
		return
	}
	c.t = t
	if a, err := t.SockName(); err == nil {
		c.local = toNetAddr(a)
	}
	if a, err := t.PeerName(); err == nil {
		c.remote = toNetAddr(a)
	}
	if c.local == nil {
		c.local = &net.UnixAddr{Net: "unix"}
	}
	if c.remote == nil {
		c.remote = &net.UnixAddr{Net: "unix"}
	}
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
func (p connProtocol) DataReceived(t *Transport, data []byte) {
	c := p.c
	c.mu.Lock()
	if c.roff > 0 && 2*c.roff >= len(c.rbuf) {
		// Move the unread part down: a reader that always lags a little
		// would otherwise keep every byte ever received.
		c.rbuf = c.rbuf[:copy(c.rbuf, c.rbuf[c.roff:])]
		c.roff = 0
	}
	c.rbuf = append(c.rbuf, data...)
	pause := !c.readPaused && len(c.rbuf)-c.roff >= connReadHigh
	if pause {
		c.readPaused = true
	}
	c.broadcast()
	c.mu.Unlock()
	if pause {
		t.PauseReading()
	}
}

// EOFReceived records the peer's half-close and keeps the transport open
// for writing.
func (p connProtocol) EOFReceived(*Transport) bool {
	c := p.c
	c.mu.Lock()
	c.eof = true
	c.broadcast()
	c.mu.Unlock()
	return true
}

// ConnectionLost records the end and its error.
func (p connProtocol) ConnectionLost(_ *Transport, err error) {
	c := p.c
	c.mu.Lock()
	c.lost, c.lostErr = true, err
	c.writePaused = false
	c.broadcast()
	c.mu.Unlock()
}

// PauseWriting holds Write back.
func (p connProtocol) PauseWriting(*Transport) { p.c.setWritePaused(true) }

// ResumeWriting lets Write go on.
func (p connProtocol) ResumeWriting(*Transport) { p.c.setWritePaused(false) }

// DatagramReceived does not happen on a stream.
func (connProtocol) DatagramReceived(*Transport, []byte, Addr) {}

// ErrorReceived does not happen on a stream.
func (connProtocol) ErrorReceived(*Transport, error) {}

func (c *Conn) setWritePaused(on bool) {
	c.mu.Lock()
	c.writePaused = on && !c.lost
	c.broadcast()
	c.mu.Unlock()
}

// broadcast wakes every call waiting on c; mu is held.
func (c *Conn) broadcast() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// wait releases mu until a change, the deadline (zero: none) or the
// loop's close, then takes it again; the caller checks its condition again.
func (c *Conn) wait(deadline time.Time) {
	ch := c.changed
	c.mu.Unlock()
	defer c.mu.Lock()
	var expire <-chan time.Time
	if !deadline.IsZero() {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		expire = timer.C
	}
	select {
	case <-ch:
	case <-c.loop.closed:
	case <-expire:
	}
}

// loopClosed reports whether the loop was closed (or released), after
// which nothing posted to it runs.
func (c *Conn) loopClosed() bool {
	select {
	case <-c.loop.closed:
		return true
	default:
		return false
	}
}

// resume runs on the loop thread once Read has drained rbuf.
func (c *Conn) resume() {
	c.mu.Lock()
	c.resumePosted = false
	do := c.readPaused && !c.lost && len(c.rbuf)-c.roff <= connReadLow
	if do {
		c.readPaused = false
	}
	c.mu.Unlock()
	if do {
		c.t.ResumeReading()
	}
}

// opError wraps err as the net package does for a Conn's calls.
func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.network, Source: c.local, Addr: c.remote, Err: err}
}

// expired reports whether deadline is set and passed.
func expired(deadline time.Time) bool {
	return !deadline.IsZero() && !time.Now().Before(deadline)
}

// Read reads data the peer sent, blocking until there is some, the peer
// shut down its side or closed cleanly (io.EOF), the connection is lost
// (an *net.OpError wrapping its Error: errors.Is(err,
// syscall.ECONNRESET) after a reset), the read deadline passes
// (os.ErrDeadlineExceeded, Timeout() true) or c is closed
// (net.ErrClosed). Data received before the end is read first.
func (c *Conn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case c.closed || c.loopClosed():
			return 0, c.opError("read", net.ErrClosed)
		case expired(c.readDL):
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		case len(p) == 0:
			return 0, nil
		case c.roff < len(c.rbuf):
			n := copy(p, c.rbuf[c.roff:])
			c.roff += n
			if c.roff == len(c.rbuf) {
				c.rbuf, c.roff = c.rbuf[:0], 0
			}
			if c.readPaused && !c.resumePosted && len(c.rbuf)-c.roff <= connReadLow {
				c.resumePosted = c.loop.CallSoonThreadsafe(c.resume) == nil
			}
			return n, nil
		case c.eof:
			return 0, io.EOF
		case c.lost:
			if c.lostErr == nil {
				return 0, io.EOF
			}
			return 0, c.opError("read", c.lostErr)
		}
		c.wait(c.readDL)
	}
}

// Write writes p, blocking while the transport's buffer is full; it
// returns len(p) once all of p is handed to the transport (which sends it
// in order, as a socket's send buffer does), or fewer bytes with the
// error that stopped it: the write deadline (os.ErrDeadlineExceeded),
// Close or the loop's close (net.ErrClosed), a lost connection (EPIPE, or
// the loss's own error).
func (c *Conn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for {
		switch {
		case c.closed || c.loopClosed():
			return n, c.opError("write", net.ErrClosed)
		case expired(c.writeDL):
			return n, c.opError("write", os.ErrDeadlineExceeded)
		case c.writeErr != nil:
			return n, c.opError("write", c.writeErr)
		case c.lost:
			if c.lostErr != nil {
				return n, c.opError("write", c.lostErr)
			}
			return n, c.opError("write", syscall.EPIPE)
		case n == len(p):
			return n, nil
		case c.writePaused || c.posted >= connWriteHigh:
			c.wait(c.writeDL)
			continue
		}
		chunk := append([]byte(nil), p[n:min(len(p), n+connWriteChunk)]...)
		if err := c.loop.CallSoonThreadsafe(func() { c.writeOnLoop(chunk) }); err != nil {
			return n, c.opError("write", net.ErrClosed)
		}
		c.posted += len(chunk)
		n += len(chunk)
	}
}

// writeOnLoop gives a chunk to the transport (loop thread). A transport
// that ended meanwhile drops it, as asyncio's write after a loss does.
func (c *Conn) writeOnLoop(b []byte) {
	err := c.t.Write(b)
	c.mu.Lock()
	c.posted -= len(b)
	if err != nil && c.writeErr == nil && !c.lost {
		c.writeErr = err
	}
	c.broadcast()
	c.mu.Unlock()
}

// Close closes the connection: calls waiting on c return net.ErrClosed;
// data already written is flushed before the transport closes (the
// transport's Close). Closing twice returns an error.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	c.broadcast()
	c.mu.Unlock()
	c.loop.CallSoonThreadsafe(func() { c.t.Close() })
	return nil
}

// CloseWrite shuts down the writing side once written data is flushed
// (the transport's WriteEOF); the peer reads EOF, c may still read.
func (c *Conn) CloseWrite() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return c.opError("close", net.ErrClosed)
	}
	if err := c.loop.CallSoonThreadsafe(func() { c.t.WriteEOF() }); err != nil {
		return c.opError("close", net.ErrClosed)
	}
	return nil
}

// LocalAddr returns the local address (*net.TCPAddr or *net.UnixAddr).
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets the read and write deadlines (zero: none).
func (c *Conn) SetDeadline(t time.Time) error { return c.setDeadline(t, true, true) }

// SetReadDeadline sets the deadline of pending and future Reads.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.setDeadline(t, true, false) }

// SetWriteDeadline sets the deadline of pending and future Writes.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.setDeadline(t, false, true) }

func (c *Conn) setDeadline(t time.Time, read, write bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("set", net.ErrClosed)
	}
	if read {
		c.readDL = t
	}
	if write {
		c.writeDL = t
	}
	c.broadcast() // waiting calls take the new deadline
	return nil
}

// netAddress splits a "tcp" address into host and port ("unix" has
// neither: the address is the path), or says why as net's errors do.
func netAddress(op, network, address string) (host string, port int, err error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
		h, p, err := net.SplitHostPort(address)
		if err == nil {
			host = h
			if port, err = strconv.Atoi(p); err != nil {
				port, err = net.LookupPort(network, p)
			}
		}
		if err != nil {
			return "", 0, &net.OpError{Op: op, Net: network, Err: err}
		}
	case "unix":
	default:
		return "", 0, &net.OpError{Op: op, Net: network, Err: net.UnknownNetworkError(network)}
	}
	return host, port, nil
}

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
	host, port, err := netAddress("dial", network, address)
	if err != nil {
		return nil, err
	}
	c := newConn(l, network)
	var d *DialFuture
	var dialErr error
	w := &waitOutcome{done: make(chan struct{})}
	start := func() {
		var d1 *DialFuture
		var err error
		if network == "unix" {
			d1, err = l.DialUnix(address, connProtocol{c})
		} else {
			d1, err = l.DialTCP(host, port, connProtocol{c})
		}
		w.complete(func() { d, dialErr, d1 = d1, err, nil })
		if d1 != nil { // the caller gave up meanwhile
			d1.Cancel("dial abandoned")
			d1.Release()
		}
	}
	fail := func(err error) (*Conn, error) { return nil, &net.OpError{Op: "dial", Net: network, Err: err} }
	if err := l.CallSoonThreadsafe(start); err != nil {
		return fail(err)
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		if !w.abandon() {
			return fail(ctx.Err())
		}
	case <-l.closed:
		if !w.abandon() {
			return fail(ECLOSED)
		}
	}
	if dialErr != nil {
		return fail(dialErr)
	}
	_, err = d.Wait(ctx)
	l.CallSoonThreadsafe(func() {
		d.Release() // the transport lives on
		if err != nil && d.t != nil && !d.t.Lost() {
			// ctx ended just as the connect completed (the future was
			// done, so the cancel did nothing): nobody will use it.
			d.t.Abort()
		}
	})
	if err != nil {
		return fail(err)
	}
	return c, nil
}

var _ net.Conn = (*Conn)(nil)
