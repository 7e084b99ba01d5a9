// SPDX-License-Identifier: MIT

package streamconn

import (
	"net"
	"time"
)

// Listener is the state of a net.Listener over a server: each accepted
// connection's Conn is queued (Queue, loop thread) until Accept takes
// it. Init it before use and Bind it once the server listens.
type Listener struct {
	w       Waits
	loop    Loop
	network string
	addr    net.Addr
	stop    func() // stops the server (loop thread)

	queue []net.Conn // accepted, not yet taken (under w.Mu)
}

// Init readies ln for a server on network of loop.
func (ln *Listener) Init(loop Loop, network string) {
	ln.w.Init(loop)
	ln.loop = loop
	ln.network = network
}

// Bind records the listening address and how to stop the server (run on
// the loop thread by Close); call it before ln is handed out.
func (ln *Listener) Bind(addr net.Addr, stop func()) {
	ln.addr = addr
	ln.stop = stop
}

// Queue queues an accepted connection for Accept (loop thread); false
// once ln is closed, and then the caller aborts the connection.
func (ln *Listener) Queue(c net.Conn) bool {
	ln.w.Mu.Lock()
	defer ln.w.Mu.Unlock()
	if ln.w.Closed {
		return false
	}
	ln.queue = append(ln.queue, c)
	ln.w.Broadcast()
	return true
}

// Accept waits for the next connection; net.ErrClosed once the listener
// or the loop is closed.
func (ln *Listener) Accept() (net.Conn, error) {
	ln.w.Mu.Lock()
	defer ln.w.Mu.Unlock()
	for {
		if ln.w.Closed || ln.loop.Closed() {
			return nil, &net.OpError{Op: "accept", Net: ln.network, Addr: ln.addr, Err: net.ErrClosed}
		}
		if len(ln.queue) > 0 {
			c := ln.queue[0]
			ln.queue[0] = nil
			ln.queue = ln.queue[1:]
			return c, nil
		}
		ln.w.Wait(time.Time{})
	}
}

// Close stops listening; connections queued but not yet taken by Accept
// are closed, those already taken are not. Closing twice returns an
// error.
func (ln *Listener) Close() error {
	ln.w.Mu.Lock()
	if ln.w.Closed {
		ln.w.Mu.Unlock()
		return &net.OpError{Op: "close", Net: ln.network, Addr: ln.addr, Err: net.ErrClosed}
	}
	ln.w.Closed = true
	queued := ln.queue
	ln.queue = nil
	ln.w.Broadcast()
	ln.w.Mu.Unlock()
	for _, c := range queued {
		c.Close()
	}
	ln.loop.Post(ln.stop)
	return nil
}

// Addr returns the listening address Bind was given.
func (ln *Listener) Addr() net.Addr { return ln.addr }

var _ net.Listener = (*Listener)(nil)
