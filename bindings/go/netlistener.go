// SPDX-License-Identifier: MIT

package libloop

import (
	"net"

	"github.com/libloop/libloop/internal/streamconn"
)

// Listener is a net.Listener over a Server: each accepted connection
// becomes a Conn, queued until Accept takes it. As with Conn, a goroutine
// must be running the loop, and the Listener's methods are for other
// goroutines.
type Listener struct {
	s       streamconn.Listener // accept queue, Close
	loop    *Loop
	network string
}

// ListenConn listens on address ("tcp", "tcp4", "tcp6": "host:port", port
// 0 for any, as ListenTCP; "unix": a socket path, as ListenUnix) and
// returns a Listener. Call it from a goroutine other than the one running
// the loop. Errors are *net.OpError with Op "listen".
func (l *Loop) ListenConn(network, address string) (*Listener, error) {
	host, port, err := streamconn.SplitAddress("listen", network, address)
	if err != nil {
		return nil, err
	}
	ln := &Listener{loop: l, network: network}
	ln.s.Init(streamLoop{l}, network)
	var listenErr error
	w := &waitOutcome{done: make(chan struct{})}
	start := func() {
		var s *Server
		var err error
		if network == "unix" {
			s, err = l.ListenUnix(address, ln.factory)
		} else {
			s, err = l.ListenTCP(host, port, ln.factory)
		}
		if err == nil {
			var addr net.Addr = &net.UnixAddr{Name: address, Net: "unix"}
			if network != "unix" {
				p, _ := s.Port()
				addr = &net.TCPAddr{IP: net.ParseIP(host), Port: p}
			}
			srv := s // s is cleared below once the caller has it
			ln.s.Bind(addr, func() { srv.Release() })
		}
		w.complete(func() { listenErr, s = err, nil })
		if s != nil { // the caller gave up meanwhile
			s.Release()
		}
	}
	fail := func(err error) (*Listener, error) {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	if err := l.CallSoonThreadsafe(start); err != nil {
		return fail(err)
	}
	select {
	case <-w.done:
	case <-l.closed:
		if !w.abandon() {
			return fail(ECLOSED)
		}
	}
	if listenErr != nil {
		return fail(listenErr)
	}
	return ln, nil
}

// factory makes the protocol of an accepted connection (loop thread): its
// Conn is queued for Accept at ConnectionMade.
func (ln *Listener) factory() Protocol {
	return acceptProtocol{connProtocol{newConn(ln.loop, ln.network)}, ln}
}

// acceptProtocol is a Conn's protocol that queues the Conn once made.
type acceptProtocol struct {
	connProtocol
	ln *Listener
}

// ConnectionMade binds the Conn and queues it (or aborts the transport if
// the Listener was closed meanwhile).
func (p acceptProtocol) ConnectionMade(t *Transport) {
	p.c.attach(t)
	t.SetProtocol(p.connProtocol)
	if !p.ln.s.Queue(p.c) {
		t.Abort()
	}
}

// Accept waits for the next connection; net.ErrClosed once the listener
// or the loop is closed.
func (ln *Listener) Accept() (net.Conn, error) { return ln.s.Accept() }

// Close stops listening (the Server is released); connections accepted
// but not yet taken by Accept are closed, those already taken are not.
// Closing twice returns an error.
func (ln *Listener) Close() error { return ln.s.Close() }

// Addr returns the listening address (the port chosen for port 0).
func (ln *Listener) Addr() net.Addr { return ln.s.Addr() }

var _ net.Listener = (*Listener)(nil)
