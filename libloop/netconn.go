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

	"golang.org/x/sys/unix"
)

// Conn is a net.Conn over a stream transport, for goroutines other than
// the loop's: Read blocks until the transport delivers data, Write until
// the transport's write buffer has room. Every call on the transport is
// posted to the loop thread (CallSoonThreadsafe), so a goroutine must be
// running the loop (RunForever) while a Conn is used.
//
// Flow control both ways: reading is paused while more than connReadHigh
// bytes wait unread and resumed once Read brings them down to connReadLow;
// Write hands the transport at most connWriteChunk bytes at a time and
// waits while connWriteHigh bytes are on their way to it or while the
// transport is above its high-water mark (PauseWriting, until
// ResumeWriting). Deadlines, Close and the loop's Close unblock waiting
// calls, as net.Conn requires.
type Conn struct {
	netWaits
	t       *Transport // loop thread only
	network string
	local   net.Addr
	remote  net.Addr

	readMu  sync.Mutex // one Read at a time, as a net.TCPConn's
	writeMu sync.Mutex // one Write at a time: writes never interleave

	rbuf []byte // data received, unread from roff on (under mu)
	roff int
	// readPaused: the transport's reading is paused for a full rbuf.
	readPaused   bool
	resumePosted bool
	eof          bool  // the peer shut down its side
	lost         bool  // ConnectionLost came
	lostErr      error // its error, nil for a clean close
	writeErr     error // a write the transport refused
	posted       int   // bytes posted to the loop, not yet given to the transport
	writePaused  bool  // the transport is above its high-water mark
}

// Flow-control bounds of a Conn (see Conn).
const (
	connReadHigh   = 256 << 10
	connReadLow    = 64 << 10
	connWriteChunk = 64 << 10
	connWriteHigh  = 256 << 10
)

func (l *Loop) newConn(network string) *Conn {
	return &Conn{netWaits: newNetWaits(l), network: network}
}

// attach binds c to its transport and reads its addresses (loop thread).
func (c *Conn) attach(t *Transport) {
	if c.t != nil {
		return
	}
	c.t = t
	if fd := t.FD(); fd >= 0 {
		if sa, err := unix.Getsockname(fd); err == nil {
			c.local = sockaddrToNetAddr(sa)
		}
		if sa, err := unix.Getpeername(fd); err == nil {
			c.remote = sockaddrToNetAddr(sa)
		}
	}
	if c.local == nil {
		c.local = &net.UnixAddr{Net: "unix"}
	}
	if c.remote == nil {
		c.remote = &net.UnixAddr{Net: "unix"}
	}
}

// sockaddrToNetAddr converts a socket address to a net.Addr.
func sockaddrToNetAddr(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(append([]byte(nil), a.Addr[:]...)), Port: a.Port}
	case *unix.SockaddrInet6:
		zone := ""
		if a.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(a.ZoneId)); err == nil {
				zone = ifi.Name
			}
		}
		return &net.TCPAddr{IP: net.IP(append([]byte(nil), a.Addr[:]...)), Port: a.Port, Zone: zone}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	return nil
}

// protocol receives the transport's events on the loop thread.
func (c *Conn) protocol(ev *Event) bool {
	switch ev.Kind {
	case ConnectionMade:
		c.attach(ev.T)
	case DataReceived:
		c.mu.Lock()
		if c.roff > 0 && 2*c.roff >= len(c.rbuf) {
			// Move the unread half down: a reader that always lags a
			// little would otherwise keep every byte ever received.
			c.rbuf = c.rbuf[:copy(c.rbuf, c.rbuf[c.roff:])]
			c.roff = 0
		}
		c.rbuf = append(c.rbuf, ev.Data...)
		pause := !c.readPaused && len(c.rbuf)-c.roff >= connReadHigh
		if pause {
			c.readPaused = true
		}
		c.broadcast()
		c.mu.Unlock()
		if pause {
			ev.T.PauseReading()
		}
	case EOFReceived:
		c.mu.Lock()
		c.eof = true
		c.broadcast()
		c.mu.Unlock()
		return true // half-close: c may still write
	case ConnectionLost:
		c.mu.Lock()
		c.lost = true
		if ev.Code != 0 {
			c.lostErr = Errno(ev.Code)
		}
		c.writePaused = false
		c.broadcast()
		c.mu.Unlock()
	case PauseWriting, ResumeWriting:
		c.mu.Lock()
		c.writePaused = ev.Kind == PauseWriting
		c.broadcast()
		c.mu.Unlock()
	}
	return false
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
// shut down its side (io.EOF), the connection is lost, the read deadline
// passes (an error whose Timeout() is true) or c is closed.
func (c *Conn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case c.closed || c.loop.IsClosed():
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
// returns len(p) once all of p is handed to the transport (which writes
// it out in order, as a socket's send buffer does), or fewer bytes with
// the error that stopped it: the write deadline, Close, a lost
// connection (EPIPE) or a closed loop.
func (c *Conn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for {
		switch {
		case c.closed || c.loop.IsClosed():
			return n, c.opError("write", net.ErrClosed)
		case expired(c.writeDL):
			return n, c.opError("write", os.ErrDeadlineExceeded)
		case c.writeErr != nil:
			return n, c.opError("write", c.writeErr)
		case c.lost:
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

// writeOnLoop gives a chunk to the transport (loop thread).
func (c *Conn) writeOnLoop(b []byte) {
	err := c.t.Write(b)
	paused := c.t.WritePaused()
	c.mu.Lock()
	c.posted -= len(b)
	if err != nil && c.writeErr == nil && !c.lost {
		c.writeErr = err
	}
	c.writePaused = paused && !c.lost
	c.broadcast()
	c.mu.Unlock()
}

// Close closes the connection: calls waiting on c return net.ErrClosed,
// data already written is flushed before the transport closes (asyncio's
// close). Closing twice returns an error.
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
// (asyncio's write_eof); the peer reads EOF, c may still read.
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
	if !c.netWaits.setDeadline(t, read, write) {
		return c.opError("set", net.ErrClosed)
	}
	return nil
}

// splitPort splits a "host:port" address, resolving a service name.
func splitPort(network, address string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		if port, err = net.LookupPort(network, portStr); err != nil {
			return "", 0, err
		}
	}
	return host, port, nil
}

// DialConn connects to address on network ("tcp", "tcp4", "tcp6": a
// "host:port" connected as DialTCP does, trying each address the name
// resolves to; "unix": a socket path) and returns a Conn. ctx bounds the
// connect. "tcp4" and "tcp6" are taken as "tcp": the addresses a name
// resolves to are not filtered by family. Call it from a goroutine other

// netAddress splits a "tcp" address into host and port ("unix" has
// neither: the address is the path), or says why as net's errors do.
func netAddress(op, network, address string) (host string, port int, err error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
		if host, port, err = splitPort(network, address); err != nil {
			return "", 0, &net.OpError{Op: op, Net: network, Err: err}
		}
	case "unix":
	default:
		return "", 0, &net.OpError{Op: op, Net: network, Err: net.UnknownNetworkError(network)}
	}
	return host, port, nil
}

// than the one running the loop.
func (l *Loop) DialConn(ctx context.Context, network, address string) (*Conn, error) {
	return l.DialConnWith(ctx, network, address, DialOptions{})
}

// DialConnWith is DialConn with DialTCPWith's options (a TLS config makes
// the Conn a TLS connection: Read and Write carry plaintext).
func (l *Loop) DialConnWith(ctx context.Context, network, address string, opts DialOptions) (*Conn, error) {
	host, port, err := netAddress("dial", network, address)
	if err != nil {
		return nil, err
	}
	c := l.newConn(network)
	var dialErr error
	r := newRendezvous()
	done := func(t *Transport, err error) {
		if t != nil {
			c.attach(t)
		}
		if !r.complete(func() { dialErr = err }) && t != nil {
			t.Abort() // the waiter gave up: nobody will use it
		}
	}
	start := func() {
		var err error
		if network == "unix" {
			err = l.DialUnixContext(ctx, address, c.protocol, done)
		} else {
			err = l.DialTCPContext(ctx, host, port, opts, c.protocol, done)
		}
		if err != nil {
			r.complete(func() { dialErr = err })
		}
	}
	if err := l.await(ctx, r, start, nil); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if dialErr != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: dialErr}
	}
	return c, nil
}

// Listener is a net.Listener over a Server: each accepted connection
// becomes a Conn, queued until Accept takes it. As with Conn, a goroutine
// must be running the loop.
type Listener struct {
	netWaits
	srv     *Server // loop thread only
	network string
	addr    net.Addr
	queue   []*Conn // accepted, not yet taken (under mu)
}

// ListenConn listens on address ("tcp", "tcp4", "tcp6": "host:port",
// port 0 for any; "unix": a socket path) and returns a Listener. Call it
// from a goroutine other than the one running the loop, as DialConn.
func (l *Loop) ListenConn(network, address string) (*Listener, error) {
	return l.listenConn(network, address, nil)
}

// ListenConnTLS is ListenConn for TLS over TCP (ListenTLS): each Conn
// Accept returns has completed its handshake and carries plaintext.
func (l *Loop) ListenConnTLS(network, address string, cfg *TLSConfig) (*Listener, error) {
	if cfg == nil || network == "unix" {
		return nil, &net.OpError{Op: "listen", Net: network, Err: EINVAL}
	}
	return l.listenConn(network, address, cfg)
}

func (l *Loop) listenConn(network, address string, cfg *TLSConfig) (*Listener, error) {
	ln := &Listener{netWaits: newNetWaits(l), network: network}
	host, port, err := netAddress("listen", network, address)
	if err != nil {
		return nil, err
	}
	var listenErr error
	r := newRendezvous()
	start := func() {
		var s *Server
		var err error
		if network == "unix" {
			s, err = l.ListenUnix(address, 0, ln.protocol)
		} else if cfg != nil {
			s, err = l.ListenTLS(host, port, 0, 0, cfg, ln.protocol)
		} else {
			s, err = l.ListenTCP(host, port, 0, 0, ln.protocol)
		}
		if err == nil {
			ln.srv = s
			ln.addr = &net.UnixAddr{Name: address, Net: "unix"}
			if network != "unix" {
				p, _ := s.Port()
				ln.addr = &net.TCPAddr{IP: net.ParseIP(host), Port: p}
			}
		}
		if !r.complete(func() { listenErr = err }) && s != nil {
			s.Close()
		}
	}
	if err := l.await(context.Background(), r, start, nil); err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	if listenErr != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: listenErr}
	}
	return ln, nil
}

// protocol takes each accepted transport's ConnectionMade (loop thread):
// the transport gets a Conn, which receives its events from then on.
func (ln *Listener) protocol(ev *Event) bool {
	if ev.Kind != ConnectionMade {
		return false
	}
	c := ln.loop.newConn(ln.network)
	c.attach(ev.T)
	ev.T.SetProtocol(c.protocol)
	ln.mu.Lock()
	closed := ln.closed
	if !closed {
		ln.queue = append(ln.queue, c)
		ln.broadcast()
	}
	ln.mu.Unlock()
	if closed {
		ev.T.Abort()
	}
	return false
}

// Accept waits for the next connection; net.ErrClosed once the listener
// or the loop is closed.
func (ln *Listener) Accept() (net.Conn, error) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	for {
		if ln.closed || ln.loop.IsClosed() {
			return nil, &net.OpError{Op: "accept", Net: ln.network, Addr: ln.addr, Err: net.ErrClosed}
		}
		if len(ln.queue) > 0 {
			c := ln.queue[0]
			ln.queue[0] = nil
			ln.queue = ln.queue[1:]
			return c, nil
		}
		ln.wait(time.Time{})
	}
}

// Close stops listening; connections accepted but not yet taken by
// Accept are closed, those already taken are not. Closing twice returns
// an error.
func (ln *Listener) Close() error {
	ln.mu.Lock()
	if ln.closed {
		ln.mu.Unlock()
		return &net.OpError{Op: "close", Net: ln.network, Addr: ln.addr, Err: net.ErrClosed}
	}
	ln.closed = true
	queued := ln.queue
	ln.queue = nil
	ln.broadcast()
	ln.mu.Unlock()
	for _, c := range queued {
		c.Close()
	}
	ln.loop.CallSoonThreadsafe(func() { ln.srv.Close() })
	return nil
}

// Addr returns the listening address (the port chosen for port 0).
func (ln *Listener) Addr() net.Addr { return ln.addr }

var (
	_ net.Conn     = (*Conn)(nil)
	_ net.Listener = (*Listener)(nil)
)
