// SPDX-License-Identifier: MIT

package libloop

import (
	"net"
	"sync"
)

// Listener is a net.Listener over a Server: each accepted connection
// becomes a Conn, queued until Accept takes it. As with Conn, a goroutine
// must be running the loop, and the Listener's methods are for other
// goroutines.
type Listener struct {
	loop    *Loop
	srv     *Server // loop thread only
	network string
	addr    net.Addr

	mu      sync.Mutex // guards the fields below
	changed chan struct{}
	closed  bool
	queue   []*Conn // accepted, not yet taken
}

// ListenConn listens on address ("tcp", "tcp4", "tcp6": "host:port", port
// 0 for any, as ListenTCP; "unix": a socket path, as ListenUnix) and
// returns a Listener. Call it from a goroutine other than the one running
// the loop. Errors are *net.OpError with Op "listen".
func (l *Loop) ListenConn(network, address string) (*Listener, error) {
	host, port, err := netAddress("listen", network, address)
	if err != nil {
		return nil, err
	}
	ln := &Listener{loop: l, network: network, changed: make(chan struct{})}
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
			ln.srv = s
			ln.addr = &net.UnixAddr{Name: address, Net: "unix"}
			if network != "unix" {
				p, _ := s.Port()
				ln.addr = &net.TCPAddr{IP: net.ParseIP(host), Port: p}
			}
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
	ln := p.ln
	ln.mu.Lock()
	closed := ln.closed
	if !closed {
		ln.queue = append(ln.queue, p.c)
		close(ln.changed)
		ln.changed = make(chan struct{})
	}
	ln.mu.Unlock()
	if closed {
		t.Abort()
	}
}

// Accept waits for the next connection; net.ErrClosed once the listener
// or the loop is closed.
func (ln *Listener) Accept() (net.Conn, error) {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	for {
		if ln.closed || ln.loopClosed() {
			return nil, &net.OpError{Op: "accept", Net: ln.network, Addr: ln.addr, Err: net.ErrClosed}
		}
		if len(ln.queue) > 0 {
			c := ln.queue[0]
			ln.queue[0] = nil
			ln.queue = ln.queue[1:]
			return c, nil
		}
		ch := ln.changed
		ln.mu.Unlock()
		select {
		case <-ch:
		case <-ln.loop.closed:
		}
		ln.mu.Lock()
	}
}

func (ln *Listener) loopClosed() bool {
	select {
	case <-ln.loop.closed:
		return true
	default:
		return false
	}
}

// Close stops listening (the Server is released); connections accepted
// but not yet taken by Accept are closed, those already taken are not.
// Closing twice returns an error.
func (ln *Listener) Close() error {
	ln.mu.Lock()
	if ln.closed {
		ln.mu.Unlock()
		return &net.OpError{Op: "close", Net: ln.network, Addr: ln.addr, Err: net.ErrClosed}
	}
	ln.closed = true
	queued := ln.queue
	ln.queue = nil
	close(ln.changed)
	ln.changed = make(chan struct{})
	ln.mu.Unlock()
	for _, c := range queued {
		c.Close()
	}
	ln.loop.CallSoonThreadsafe(func() { ln.srv.Release() })
	return nil
}

// Addr returns the listening address (the port chosen for port 0).
func (ln *Listener) Addr() net.Addr { return ln.addr }

var _ net.Listener = (*Listener)(nil)
