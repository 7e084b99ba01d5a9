// SPDX-License-Identifier: MIT

package packetconn

import (
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/libloop/libloop/internal/streamconn"
)

// Bounds of a Conn's queues (see Conn).
const (
	// QueueMax and QueueBytes bound the received, unread datagrams.
	QueueMax   = 256
	QueueBytes = 1 << 20
	// WriteHigh bounds the bytes posted to the loop and not yet given to
	// the transport.
	WriteHigh = 256 << 10
	// MaxDatagram is the longest datagram: larger never fits a UDP
	// length field.
	MaxDatagram = 65535
)

// Transport is the loop-side half of a Conn: the datagram transport's
// calls, made on the loop thread only. A Transport that also implements
// streamconn.WritePauseReporter has its write pause read after each send.
type Transport interface {
	// SendTo sends one datagram to a raw struct sockaddr.
	SendTo(data, sockaddr []byte) error
	Close() error
	PauseReading() error
	ResumeReading() error
}

// Conn is the state of a net.PacketConn over a datagram transport, for
// goroutines other than the loop's: ReadFrom blocks until a datagram
// arrives, WriteTo posts one to the loop thread. The loop side feeds it
// through Attach, Datagram, SendFailed, Lost and SetWritePaused
// (conn_events.go). Init it before use.
//
// Receiving: datagrams wait in a queue of at most QueueMax datagrams or
// QueueBytes bytes. When it is full the transport's reading is paused, so
// later datagrams wait in the socket's receive buffer (and, once that is
// full, the kernel drops them, exactly as it does for a net.UDPConn whose
// reader falls behind); ReadFrom resumes reading once it has taken the
// queue down to half. The Conn itself never drops a datagram it received.
//
// Sending: WriteTo copies the datagram and returns; at most WriteHigh
// bytes are on their way to the transport, and WriteTo waits while the
// transport is above its high-water mark. A send the kernel refuses later
// (asyncio's error_received: EMSGSIZE, ENETUNREACH...) is returned by the
// next WriteTo. Deadlines, Close and the loop's close unblock waiting
// calls, as net.PacketConn requires.
type Conn struct {
	w       streamconn.Waits // lock, deadlines, Close's flag, waiting
	loop    streamconn.Loop
	t       Transport // set by Attach; loop thread only
	network string
	local   *net.UDPAddr // set by Attach, before the Conn is handed out
	v6      bool         // an IPv6 socket: IPv4 peers are sent to as ::ffff:a.b.c.d

	readMu  sync.Mutex // one ReadFrom at a time
	writeMu sync.Mutex // one WriteTo at a time: datagrams keep their order

	// Under w.Mu:
	queue        []packet // received, unread from qhead on
	qhead        int
	qbytes       int   // bytes in queue[qhead:]
	readPaused   bool  // the transport's reading is paused for a full queue
	resumePosted bool  // a resume is posted and has not run yet
	lost         bool  // the transport was lost
	lostErr      error // its error, nil for a clean close
	sendErr      error // a send the kernel refused, for the next WriteTo
	posted       int   // bytes posted to the loop, not yet given to the transport
	writePaused  bool  // the transport is above its high-water mark
}

// packet is one received datagram.
type packet struct {
	data []byte
	from *net.UDPAddr
}

// Init readies c for a socket of network ("udp", "udp4", "udp6") of loop.
func (c *Conn) Init(loop streamconn.Loop, network string) {
	c.w.Init(loop)
	c.loop = loop
	c.network = network
}

// opError wraps err as the net package does for a PacketConn's calls.
func (c *Conn) opError(op string, addr net.Addr, err error) error {
	var src net.Addr
	if c.local != nil {
		src = c.local
	}
	return &net.OpError{Op: op, Net: c.network, Source: src, Addr: addr, Err: err}
}

// ReadFrom reads the next datagram into p and returns its length and
// sender, blocking until one arrives, the read deadline passes
// (os.ErrDeadlineExceeded, Timeout() true), c is closed or the loop is
// (net.ErrClosed), or the transport was lost (its error, net.ErrClosed
// for a clean close). A datagram longer than p is cut to len(p), and the
// rest of it is lost, as a UDP socket's read does.
func (c *Conn) ReadFrom(p []byte) (int, net.Addr, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	c.w.Mu.Lock()
	defer c.w.Mu.Unlock()
	for {
		switch {
		case c.w.Closed || c.loop.Closed():
			return 0, nil, c.opError("read", nil, net.ErrClosed)
		case streamconn.Expired(c.w.ReadDL):
			return 0, nil, c.opError("read", nil, os.ErrDeadlineExceeded)
		case c.qhead < len(c.queue):
			d := c.queue[c.qhead]
			c.queue[c.qhead] = packet{}
			c.qhead++
			c.qbytes -= len(d.data)
			if c.qhead == len(c.queue) {
				c.queue, c.qhead = c.queue[:0], 0
			}
			if c.readPaused && !c.resumePosted && c.drained() {
				c.resumePosted = c.loop.Post(c.resume) == nil
			}
			return copy(p, d.data), d.from, nil
		case c.lost:
			err := c.lostErr
			if err == nil {
				err = net.ErrClosed
			}
			return 0, nil, c.opError("read", nil, err)
		}
		c.w.Wait(c.w.ReadDL)
	}
}

// WriteTo sends p as one datagram to addr, a *net.UDPAddr (anything else
// is EINVAL, as for a net.UDPConn). It returns len(p) once the datagram is
// posted to the loop, blocking while WriteHigh bytes are on their way or
// the transport is above its high-water mark; or the error that stopped
// it: the write deadline, Close, a closed loop, a datagram longer than
// MaxDatagram (EMSGSIZE), or the error of an earlier datagram the kernel
// refused.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	ua, ok := addr.(*net.UDPAddr)
	if !ok || ua == nil {
		return 0, c.opError("write", addr, syscall.EINVAL)
	}
	raw, err := UDPAddrToRaw(ua, c.v6)
	if err != nil {
		return 0, c.opError("write", addr, err)
	}
	if len(p) > MaxDatagram {
		return 0, c.opError("write", addr, syscall.EMSGSIZE)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.w.Mu.Lock()
	defer c.w.Mu.Unlock()
	for {
		switch {
		case c.w.Closed || c.loop.Closed():
			return 0, c.opError("write", addr, net.ErrClosed)
		case streamconn.Expired(c.w.WriteDL):
			return 0, c.opError("write", addr, os.ErrDeadlineExceeded)
		case c.sendErr != nil:
			err := c.sendErr
			c.sendErr = nil
			return 0, c.opError("write", addr, err)
		case c.lost:
			return 0, c.opError("write", addr, net.ErrClosed)
		case c.writePaused || c.posted >= WriteHigh:
			c.w.Wait(c.w.WriteDL)
			continue
		}
		d := append([]byte(nil), p...)
		if err := c.loop.Post(func() { c.sendOnLoop(d, raw) }); err != nil {
			return 0, c.opError("write", addr, net.ErrClosed)
		}
		c.posted += len(d)
		return len(p), nil
	}
}

// Close closes the socket: calls waiting on c return net.ErrClosed, and
// datagrams already posted are sent first (asyncio's close). Closing
// twice returns an error.
func (c *Conn) Close() error {
	c.w.Mu.Lock()
	if c.w.Closed {
		c.w.Mu.Unlock()
		return c.opError("close", nil, net.ErrClosed)
	}
	c.w.Closed = true
	c.w.Broadcast()
	c.w.Mu.Unlock()
	c.loop.Post(func() { c.t.Close() })
	return nil
}

// LocalAddr returns the bound address Attach was given (*net.UDPAddr).
func (c *Conn) LocalAddr() net.Addr { return c.local }

// SetDeadline sets the read and write deadlines (zero: none).
func (c *Conn) SetDeadline(t time.Time) error { return c.setDeadline(t, true, true) }

// SetReadDeadline sets the deadline of pending and future ReadFroms.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.setDeadline(t, true, false) }

// SetWriteDeadline sets the deadline of pending and future WriteTos.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.setDeadline(t, false, true) }

func (c *Conn) setDeadline(t time.Time, read, write bool) error {
	if !c.w.SetDeadline(t, read, write) {
		return c.opError("set", nil, net.ErrClosed)
	}
	return nil
}

// QueueState is a snapshot of a Conn's receive queue, for tests and stats.
type QueueState struct {
	Queued int  // datagrams received and not yet read
	Bytes  int  // their bytes
	Paused bool // the transport's reading is paused for a full queue
}

// QueueState returns a snapshot of c's receive queue.
func (c *Conn) QueueState() QueueState {
	c.w.Mu.Lock()
	defer c.w.Mu.Unlock()
	return QueueState{Queued: len(c.queue) - c.qhead, Bytes: c.qbytes, Paused: c.readPaused}
}

var _ net.PacketConn = (*Conn)(nil)
