// SPDX-License-Identifier: MIT

package streamconn

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Flow-control bounds of a Conn: reading is paused while ReadHigh bytes
// or more wait unread and resumed once Read brings them down to ReadLow;
// Write hands the transport at most WriteChunk bytes at a time and waits
// while WriteHigh bytes are on their way to it.
const (
	ReadHigh   = 256 << 10
	ReadLow    = 64 << 10
	WriteChunk = 64 << 10
	WriteHigh  = 256 << 10
)

// Conn is the state of a net.Conn over a stream transport, for
// goroutines other than the loop's: Read blocks until the transport
// delivers data, Write until the transport has room, and every call on
// the transport is posted to the loop thread. The loop side feeds it
// through Attach, Data, EOF, Lost and SetWritePaused (conn_events.go).
// Init it before use; it implements net.Conn (and CloseWrite).
type Conn struct {
	w       Waits
	loop    Loop
	t       Transport // set by Attach; loop thread only
	network string
	local   net.Addr // set by Attach, before the Conn is handed out
	remote  net.Addr
	opts    Options

	readMu  sync.Mutex // one Read at a time, as a net.TCPConn's
	writeMu sync.Mutex // one Write at a time: writes never interleave

	// Under w.Mu:
	rbuf         []byte // data received, unread from roff on
	roff         int
	readPaused   bool  // the transport's reading is paused for a full rbuf
	resumePosted bool  // a resume is posted and has not run yet
	eof          bool  // the peer shut down its side
	lost         bool  // the connection was lost
	lostErr      error // its error, nil for a clean close
	writeErr     error // a write the transport refused
	posted       int   // bytes posted to the loop, not yet given to the transport
	writePaused  bool  // the transport is above its high-water mark
}

// Options are the points where the core's and the binding's Conn differ.
type Options struct {
	// WriteLossError makes Write after a loss return the loss's error
	// when it has one; without it (or for a clean close) Write returns
	// EPIPE.
	WriteLossError bool
}

// Init readies c for a connection on network ("tcp", "unix", ...) of
// loop.
func (c *Conn) Init(loop Loop, network string, opts Options) {
	c.w.Init(loop)
	c.loop = loop
	c.network = network
	c.opts = opts
}

// opError wraps err as the net package does for a Conn's calls.
func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.network, Source: c.local, Addr: c.remote, Err: err}
}

// Read reads data the peer sent, blocking until there is some, the peer
// shut down its side or closed cleanly (io.EOF), the connection is lost
// (its error), the read deadline passes (os.ErrDeadlineExceeded) or c or
// the loop is closed (net.ErrClosed). Data received before the end is
// read first.
func (c *Conn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.w.Mu.Lock()
	defer c.w.Mu.Unlock()
	for {
		switch {
		case c.w.Closed || c.loop.Closed():
			return 0, c.opError("read", net.ErrClosed)
		case Expired(c.w.ReadDL):
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		case len(p) == 0:
			return 0, nil
		case c.roff < len(c.rbuf):
			n := copy(p, c.rbuf[c.roff:])
			c.roff += n
			if c.roff == len(c.rbuf) {
				c.rbuf, c.roff = c.rbuf[:0], 0
			}
			if c.readPaused && !c.resumePosted && len(c.rbuf)-c.roff <= ReadLow {
				c.resumePosted = c.loop.Post(c.resume) == nil
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
		c.w.Wait(c.w.ReadDL)
	}
}

// Write writes p, blocking while the transport's buffer is full; it
// returns len(p) once all of p is handed to the transport, or fewer bytes
// with the error that stopped it: the write deadline
// (os.ErrDeadlineExceeded), Close or the loop's close (net.ErrClosed), a
// write the transport refused, a lost connection (EPIPE, or the loss's
// error with Options.WriteLossError).
func (c *Conn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.w.Mu.Lock()
	defer c.w.Mu.Unlock()
	n := 0
	for {
		switch {
		case c.w.Closed || c.loop.Closed():
			return n, c.opError("write", net.ErrClosed)
		case Expired(c.w.WriteDL):
			return n, c.opError("write", os.ErrDeadlineExceeded)
		case c.writeErr != nil:
			return n, c.opError("write", c.writeErr)
		case c.lost:
			if c.opts.WriteLossError && c.lostErr != nil {
				return n, c.opError("write", c.lostErr)
			}
			return n, c.opError("write", syscall.EPIPE)
		case n == len(p):
			return n, nil
		case c.writePaused || c.posted >= WriteHigh:
			c.w.Wait(c.w.WriteDL)
			continue
		}
		chunk := append([]byte(nil), p[n:min(len(p), n+WriteChunk)]...)
		if err := c.loop.Post(func() { c.writeOnLoop(chunk) }); err != nil {
			return n, c.opError("write", net.ErrClosed)
		}
		c.posted += len(chunk)
		n += len(chunk)
	}
}

// Close closes the connection: calls waiting on c return net.ErrClosed;
// data already written is flushed before the transport closes (the
// transport's Close). Closing twice returns an error.
func (c *Conn) Close() error {
	c.w.Mu.Lock()
	if c.w.Closed {
		c.w.Mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.w.Closed = true
	c.w.Broadcast()
	c.w.Mu.Unlock()
	c.loop.Post(func() { c.t.Close() })
	return nil
}

// CloseWrite shuts down the writing side once written data is flushed
// (the transport's WriteEOF); the peer reads EOF, c may still read.
func (c *Conn) CloseWrite() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.w.Mu.Lock()
	closed := c.w.Closed
	c.w.Mu.Unlock()
	if closed {
		return c.opError("close", net.ErrClosed)
	}
	if err := c.loop.Post(func() { c.t.WriteEOF() }); err != nil {
		return c.opError("close", net.ErrClosed)
	}
	return nil
}

// LocalAddr returns the local address Attach was given.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the peer's address Attach was given.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets the read and write deadlines (zero: none).
func (c *Conn) SetDeadline(t time.Time) error { return c.setDeadline(t, true, true) }

// SetReadDeadline sets the deadline of pending and future Reads.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.setDeadline(t, true, false) }

// SetWriteDeadline sets the deadline of pending and future Writes.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.setDeadline(t, false, true) }

func (c *Conn) setDeadline(t time.Time, read, write bool) error {
	if !c.w.SetDeadline(t, read, write) {
		return c.opError("set", net.ErrClosed)
	}
	return nil
}

// ReadState is a snapshot of a Conn's read buffer, for tests and stats.
type ReadState struct {
	Unread int  // bytes received and not yet read
	Cap    int  // the buffer's capacity
	Paused bool // the transport's reading is paused
	Ended  bool // EOF or the connection's loss came
}

// ReadState returns a snapshot of c's read buffer.
func (c *Conn) ReadState() ReadState {
	c.w.Mu.Lock()
	defer c.w.Mu.Unlock()
	return ReadState{
		Unread: len(c.rbuf) - c.roff,
		Cap:    cap(c.rbuf),
		Paused: c.readPaused,
		Ended:  c.eof || c.lost,
	}
}

var _ net.Conn = (*Conn)(nil)
