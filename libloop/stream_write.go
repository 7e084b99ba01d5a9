// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// maxIOV caps one writev; the rest goes on the next writable event.
const maxIOV = 64

// minChunk is the smallest buffer chunk, so many small refused writes
// coalesce instead of costing an allocation each.
const minChunk = 4096

// Write sends p now if nothing is queued, and copies what the kernel did
// not take into the transport's buffer; it never blocks. A write error ends
// the transport (ConnectionLost with the code) and is not returned, as in
// asyncio; nor is a later write's: once the transport is lost (Lost: ended
// by the peer or an error, not by Close or Abort) writes are dropped and
// return nil (asyncio counts them, to log a warning). Writing after Abort,
// or after Close once the buffer is flushed, is ECLOSED; while Close
// flushes, writes join the buffer (asyncio's transports take them too).
// After WriteEOF: ESTATE.
func (t *Transport) Write(p []byte) error {
	switch {
	case t.Lost() && t.kind != PipeRead && !t.eofWritten:
		return nil
	case t.state == tClosed, t.state == tClosing && t.kind == Datagram:
		return ECLOSED
	case t.kind == Datagram:
		return t.SendTo(p, nil)
	case t.kind == PipeRead:
		return EINVAL
	case t.eofWritten:
		return ESTATE
	case len(p) == 0:
		return nil
	case t.tls != nil:
		return t.tlsWrite(p)
	}
	t.writeRaw(p)
	return nil
}

// writeRaw sends p, or what the kernel does not take of it, after what is
// buffered: the bytes on the wire (a TLS transport's ciphertext).
func (t *Transport) writeRaw(p []byte) {
	if t.pw == nil || t.pw.wsize == 0 && t.pw.sendfile == nil {
		n, err := writeOnce(int(t.fd), p, t.socket)
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			t.fatal(err)
			return
		}
		if n > 0 {
			p = p[n:]
		}
		if len(p) == 0 {
			return
		}
		t.buffer(p)
		t.updateInterest()
	} else {
		t.buffer(p)
	}
	t.maybePause()
}

// Writev writes several buffers as one Write (asyncio's writelines).
func (t *Transport) Writev(bufs [][]byte) error {
	for _, b := range bufs {
		if err := t.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// CanWriteEOF reports whether WriteEOF is supported (streams and pipe write
// ends; not TLS, as asyncio's SSL transports refuse it).
func (t *Transport) CanWriteEOF() bool {
	return (t.kind == Stream || t.kind == PipeWrite) && t.tls == nil
}

// WriteEOF closes the write side once the buffer is flushed (shutdown
// SHUT_WR on a socket; a pipe's write end is closed). Reading goes on.
func (t *Transport) WriteEOF() error {
	if t.state != tOpen {
		return ECLOSED
	}
	if !t.CanWriteEOF() {
		return EINVAL
	}
	if t.eofWritten {
		return nil
	}
	t.setEOFWritten()
	if t.kind == PipeWrite || !t.socket {
		return t.Close()
	}
	if t.pw == nil || t.pw.wsize == 0 && t.pw.sendfile == nil {
		t.shutdownWrite()
	} else {
		t.eofPending = true
	}
	return nil
}

func (t *Transport) shutdownWrite() {
	t.eofPending = false
	if err := unix.Shutdown(int(t.fd), unix.SHUT_WR); err != nil && err != unix.ENOTCONN {
		t.fatal(err)
	}
}

// buffer copies p behind what is queued, into the last chunk when it fits.
func (t *Transport) buffer(p []byte) {
	t.addBuffered(len(p)) // the gate shuts before the bytes wait
	pw := t.writes()
	if n := len(pw.wq); n > 0 {
		last := pw.wq[n-1]
		if cap(last)-len(last) >= len(p) {
			pw.wq[n-1] = append(last, p...)
			return
		}
	}
	c := make([]byte, len(p), max(len(p), minChunk))
	copy(c, p)
	pw.wq = append(pw.wq, c)
}

// writeReady flushes what it can; when the buffer empties it stops watching
// for writability and completes a pending sendfile, write_eof or close.
// While a sendfile runs, only the bytes written before it go first; those
// written after it wait for the file (the order the host wrote them in).
func (t *Transport) writeReady() {
	for {
		limit := t.buffered()
		if t.sendfileOp() != nil {
			limit = t.pw.sendfile.before
		}
		if limit > 0 {
			n, err := t.writeQueued(limit)
			if err != nil && err != unix.EAGAIN && err != unix.EINTR {
				t.fatal(err)
				return
			}
			t.dropWritten(n)
			if t.sendfileOp() != nil {
				t.pw.sendfile.before -= max(n, 0)
			}
			if n < limit {
				t.maybeResume()
				return
			}
		}
		if t.sendfileOp() == nil {
			break
		}
		t.pw.sendfile.step()
		if t.state == tClosed || t.sendfileOp() != nil {
			return
		}
		// The file is sent: what was written after it goes next.
	}
	t.drained()
}

// resumedClosing: the ResumeWriting of a closing transport was delivered;
// finish now, or once what its protocol wrote meanwhile is flushed.
func (t *Transport) resumedClosing() {
	t.closeAfterResume = false
	if t.state == tClosing && (t.pw == nil || t.pw.wsize == 0 && t.pw.sendfile == nil) {
		t.finish(0)
	}
}

// drained runs when nothing is left to write.
func (t *Transport) drained() {
	wasPaused := t.writePaused
	t.maybeResume()
	switch {
	case t.state == tClosing && wasPaused && !t.writePaused:
		t.closeAfterResume = true // finished once ResumeWriting is delivered
		t.updateInterest()
		return
	case t.state == tClosing:
		t.finish(0)
		return
	case t.eofPending:
		t.shutdownWrite()
	}
	if t.state != tClosed {
		t.dropIdleWrites() // an idle transport carries no write state; the gate opens
		t.updateInterest()
	}
}

// writeQueued writes at most limit bytes from the front of the buffer.
func (t *Transport) writeQueued(limit int) (int, error) {
	first := t.pw.wq[0][t.pw.woff:]
	if len(t.pw.wq) == 1 || len(first) >= limit {
		return writeOnce(int(t.fd), first[:min(len(first), limit)], t.socket)
	}
	iov := t.pw.iov[:0]
	iov = append(iov, first)
	n := len(first)
	for _, b := range t.pw.wq[1:min(len(t.pw.wq), maxIOV)] {
		if n >= limit {
			break
		}
		b = b[:min(len(b), limit-n)]
		iov = append(iov, b)
		n += len(b)
	}
	t.pw.iov = iov
	n, err := writeVec(int(t.fd), iov, t.socket)
	clear(iov)
	return n, err
}

func (t *Transport) dropWritten(n int) {
	if n <= 0 {
		return
	}
	t.subBuffered(n)
	for n > 0 {
		rest := len(t.pw.wq[0]) - t.pw.woff
		if n < rest {
			t.pw.woff += n
			return
		}
		n -= rest
		t.pw.wq[0] = nil
		t.pw.wq = t.pw.wq[1:]
		t.pw.woff = 0
	}
	if len(t.pw.wq) == 0 {
		t.pw.wq = nil // let the chunks' memory go while idle
	}
}
