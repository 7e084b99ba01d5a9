// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/libloop/libloop/internal/streamconn"
)

// Conn is a net.Conn over a stream transport, for goroutines other than
// the loop's: Read blocks until the transport delivers data, Write until
// the transport's write buffer has room. Every call on the transport is
// posted to the loop thread (CallSoonThreadsafe), so a goroutine must be
// running the loop (RunForever) while a Conn is used.
//
// Flow control both ways (internal/streamconn, shared with the purego
// binding's Conn): reading is paused while more than 256 KiB wait unread
// and resumed once Read brings them down to 64 KiB; Write hands the
// transport at most 64 KiB at a time and waits while 256 KiB are on
// their way to it or while the transport is above its high-water mark
// (PauseWriting, until ResumeWriting). Deadlines, Close and the loop's
// Close unblock waiting calls, as net.Conn requires.
type Conn struct {
	s streamconn.Conn
}

func (l *Loop) newConn(network string) *Conn {
	c := &Conn{}
	c.s.Init(streamLoop{l}, network, streamconn.Options{})
	return c
}

// attach binds c to its transport and reads its addresses (loop thread).
func (c *Conn) attach(t *Transport) {
	if c.s.Attached() {
		return
	}
	var local, remote net.Addr
	if fd := t.FD(); fd >= 0 {
		if sa, err := unix.Getsockname(fd); err == nil {
			local = sockaddrToNetAddr(sa)
		}
		if sa, err := unix.Getpeername(fd); err == nil {
			remote = sockaddrToNetAddr(sa)
		}
	}
	c.s.Attach(t, local, remote)
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
		c.s.Data(ev.Data)
	case EOFReceived:
		c.s.EOF()
		return true // half-close: c may still write
	case ConnectionLost:
		var err error
		if ev.Code != 0 {
			err = Errno(ev.Code)
		}
		c.s.Lost(err)
	case PauseWriting, ResumeWriting:
		c.s.SetWritePaused(ev.Kind == PauseWriting)
	}
	return false
}

// Read reads data the peer sent, blocking until there is some, the peer
// shut down its side (io.EOF), the connection is lost, the read deadline
// passes (an error whose Timeout() is true) or c is closed.
func (c *Conn) Read(p []byte) (int, error) { return c.s.Read(p) }

// Write writes p, blocking while the transport's buffer is full; it
// returns len(p) once all of p is handed to the transport (which writes
// it out in order, as a socket's send buffer does), or fewer bytes with
// the error that stopped it: the write deadline, Close, a lost
// connection (EPIPE) or a closed loop.
func (c *Conn) Write(p []byte) (int, error) { return c.s.Write(p) }

// Close closes the connection: calls waiting on c return net.ErrClosed,
// data already written is flushed before the transport closes (asyncio's
// close). Closing twice returns an error.
func (c *Conn) Close() error { return c.s.Close() }

// CloseWrite shuts down the writing side once written data is flushed
// (asyncio's write_eof); the peer reads EOF, c may still read.
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
// resolves to; "unix": a socket path) and returns a Conn. ctx bounds the
// connect. "tcp4" and "tcp6" are taken as "tcp": the addresses a name
// resolves to are not filtered by family. Call it from a goroutine other
// than the one running the loop.
func (l *Loop) DialConn(ctx context.Context, network, address string) (*Conn, error) {
	return l.DialConnWith(ctx, network, address, DialOptions{})
}

// DialConnWith is DialConn with DialTCPWith's options (a TLS config makes
// the Conn a TLS connection: Read and Write carry plaintext).
func (l *Loop) DialConnWith(ctx context.Context, network, address string, opts DialOptions) (*Conn, error) {
	host, port, err := streamconn.SplitAddress("dial", network, address)
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
	s       streamconn.Listener
	loop    *Loop
	network string
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
	ln := &Listener{loop: l, network: network}
	ln.s.Init(streamLoop{l}, network)
	host, port, err := streamconn.SplitAddress("listen", network, address)
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
			var addr net.Addr = &net.UnixAddr{Name: address, Net: "unix"}
			if network != "unix" {
				p, _ := s.Port()
				addr = &net.TCPAddr{IP: net.ParseIP(host), Port: p}
			}
			ln.s.Bind(addr, func() { s.Close() })
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
	if !ln.s.Queue(c) {
		ev.T.Abort()
	}
	return false
}

// Accept waits for the next connection; net.ErrClosed once the listener
// or the loop is closed.
func (ln *Listener) Accept() (net.Conn, error) { return ln.s.Accept() }

// Close stops listening; connections accepted but not yet taken by
// Accept are closed, those already taken are not. Closing twice returns
// an error.
func (ln *Listener) Close() error { return ln.s.Close() }

// Addr returns the listening address (the port chosen for port 0).
func (ln *Listener) Addr() net.Addr { return ln.s.Addr() }

var (
	_ net.Conn     = (*Conn)(nil)
	_ net.Listener = (*Listener)(nil)
)
