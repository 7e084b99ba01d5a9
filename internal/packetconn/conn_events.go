// SPDX-License-Identifier: MIT

package packetconn

import (
	"net"

	"github.com/libloop/libloop/internal/streamconn"
)

// Attach binds c to its transport and records its bound address (nil:
// an unspecified one), from which c learns the socket's family (loop
// thread, before c is handed to another goroutine).
func (c *Conn) Attach(t Transport, local *net.UDPAddr) {
	c.t = t
	if local == nil {
		local = &net.UDPAddr{}
	}
	c.local = local
	c.v6 = local.IP != nil && local.IP.To4() == nil
}

// Datagram queues a copy of data from its sender and pauses the
// transport's reading when the queue reaches a bound (loop thread).
func (c *Conn) Datagram(data []byte, from *net.UDPAddr) {
	p := packet{data: append([]byte(nil), data...), from: from}
	c.w.Mu.Lock()
	if c.qhead > 0 && 2*c.qhead >= len(c.queue) {
		// Move the unread half down, as Conn's read buffer does.
		n := copy(c.queue, c.queue[c.qhead:])
		clear(c.queue[n:])
		c.queue, c.qhead = c.queue[:n], 0
	}
	c.queue = append(c.queue, p)
	c.qbytes += len(p.data)
	pause := !c.readPaused && c.full()
	if pause {
		c.readPaused = true
	}
	c.w.Broadcast()
	c.w.Mu.Unlock()
	if pause {
		c.t.PauseReading()
	}
}

// SendFailed keeps err, a send the kernel refused (asyncio's
// error_received), for the next WriteTo; only the first one waiting is
// kept (loop thread).
func (c *Conn) SendFailed(err error) {
	c.w.Mu.Lock()
	if c.sendErr == nil {
		c.sendErr = err
	}
	c.w.Broadcast()
	c.w.Mu.Unlock()
}

// Lost records the transport's end and its error, nil for a clean close
// (loop thread).
func (c *Conn) Lost(err error) {
	c.w.Mu.Lock()
	c.lost, c.lostErr = true, err
	c.writePaused = false
	c.w.Broadcast()
	c.w.Mu.Unlock()
}

// SetWritePaused holds WriteTo back (on: the transport's PauseWriting) or
// lets it go on (ResumeWriting) (loop thread).
func (c *Conn) SetWritePaused(on bool) {
	c.w.Mu.Lock()
	c.writePaused = on && !c.lost
	c.w.Broadcast()
	c.w.Mu.Unlock()
}

// full reports whether the receive queue reached a bound; c.w.Mu is held.
func (c *Conn) full() bool {
	return len(c.queue)-c.qhead >= QueueMax || c.qbytes >= QueueBytes
}

// drained reports whether ReadFrom took the queue down to half of both
// bounds, when a paused transport reads again; c.w.Mu is held.
func (c *Conn) drained() bool {
	return len(c.queue)-c.qhead <= QueueMax/2 && c.qbytes <= QueueBytes/2
}

// resume runs on the loop thread once ReadFrom has drained the queue.
func (c *Conn) resume() {
	c.w.Mu.Lock()
	c.resumePosted = false
	do := c.readPaused && !c.lost && c.drained()
	if do {
		c.readPaused = false
	}
	c.w.Mu.Unlock()
	if do {
		c.t.ResumeReading()
	}
}

// sendOnLoop gives one datagram to the transport (loop thread). An error
// after the Conn was closed or lost is not kept: nobody will read it.
func (c *Conn) sendOnLoop(d, addr []byte) {
	err := c.t.SendTo(d, addr)
	reporter, reports := c.t.(streamconn.WritePauseReporter)
	paused := reports && reporter.WritePaused()
	c.w.Mu.Lock()
	c.posted -= len(d)
	if err != nil && c.sendErr == nil && !c.lost && !c.w.Closed {
		c.sendErr = err
	}
	if reports {
		c.writePaused = paused && !c.lost
	}
	c.w.Broadcast()
	c.w.Mu.Unlock()
}
