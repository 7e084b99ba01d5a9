// SPDX-License-Identifier: MIT

package streamconn

import "net"

// Attached reports whether Attach has bound c to its transport (loop
// thread).
func (c *Conn) Attached() bool { return c.t != nil }

// Attach binds c to its transport and records its addresses, nil ones
// taken as an unnamed Unix address (loop thread, before c is handed to
// another goroutine).
func (c *Conn) Attach(t Transport, local, remote net.Addr) {
	c.t = t
	if local == nil {
		local = &net.UnixAddr{Net: "unix"}
	}
	if remote == nil {
		remote = &net.UnixAddr{Net: "unix"}
	}
	c.local, c.remote = local, remote
}

// Data queues a copy of data and pauses the transport's reading when too
// much waits unread (loop thread).
func (c *Conn) Data(data []byte) {
	c.w.Mu.Lock()
	if c.roff > 0 && 2*c.roff >= len(c.rbuf) {
		// Move the unread part down: a reader that always lags a little
		// would otherwise keep every byte ever received.
		c.rbuf = c.rbuf[:copy(c.rbuf, c.rbuf[c.roff:])]
		c.roff = 0
	}
	c.rbuf = append(c.rbuf, data...)
	pause := !c.readPaused && len(c.rbuf)-c.roff >= ReadHigh
	if pause {
		c.readPaused = true
	}
	c.w.Broadcast()
	c.w.Mu.Unlock()
	if pause {
		c.t.PauseReading()
	}
}

// EOF records the peer's half-close (loop thread); c may still write.
func (c *Conn) EOF() {
	c.w.Mu.Lock()
	c.eof = true
	c.w.Broadcast()
	c.w.Mu.Unlock()
}

// Lost records the connection's end and its error, nil for a clean close
// (loop thread).
func (c *Conn) Lost(err error) {
	c.w.Mu.Lock()
	c.lost, c.lostErr = true, err
	c.writePaused = false
	c.w.Broadcast()
	c.w.Mu.Unlock()
}

// SetWritePaused holds Write back (on: the transport's PauseWriting) or
// lets it go on (ResumeWriting) (loop thread).
func (c *Conn) SetWritePaused(on bool) {
	c.w.Mu.Lock()
	c.writePaused = on && !c.lost
	c.w.Broadcast()
	c.w.Mu.Unlock()
}

// resume runs on the loop thread once Read has drained rbuf.
func (c *Conn) resume() {
	c.w.Mu.Lock()
	c.resumePosted = false
	do := c.readPaused && !c.lost && len(c.rbuf)-c.roff <= ReadLow
	if do {
		c.readPaused = false
	}
	c.w.Mu.Unlock()
	if do {
		c.t.ResumeReading()
	}
}

// writeOnLoop gives a chunk to the transport (loop thread). A transport
// that ended meanwhile drops it, as asyncio's write after a loss does.
func (c *Conn) writeOnLoop(b []byte) {
	err := c.t.Write(b)
	reporter, reports := c.t.(WritePauseReporter)
	paused := reports && reporter.WritePaused()
	c.w.Mu.Lock()
	c.posted -= len(b)
	if err != nil && c.writeErr == nil && !c.lost {
		c.writeErr = err
	}
	if reports {
		c.writePaused = paused && !c.lost
	}
	c.w.Broadcast()
	c.w.Mu.Unlock()
}
