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
// asyncio. Writing after Abort, or after Close once the buffer is flushed,
// is ECLOSED; while Close flushes, writes join the buffer (asyncio's
// transports take them too). After WriteEOF: ESTATE.
func (t *Transport) Write(p []byte) error {
	switch {
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
	}
	if t.wsize == 0 && t.sendfile == nil {
		n, err := writeOnce(t.fd, p, t.socket)
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			t.fatal(err)
			return nil
		}
		if n > 0 {
			p = p[n:]
		}
		if len(p) == 0 {
			return nil
		}
		t.buffer(p)
		t.updateInterest()
	} else {
		t.buffer(p)
	}
	t.maybePause()
	return nil
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

// CanWriteEOF reports whether WriteEOF is supported (streams and pipe write ends).
func (t *Transport) CanWriteEOF() bool { return t.kind == Stream || t.kind == PipeWrite }

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
	t.eofWritten = true
	if t.kind == PipeWrite || !t.socket {
		return t.Close()
	}
	if t.wsize == 0 && t.sendfile == nil {
		t.shutdownWrite()
	} else {
		t.eofPending = true
	}
	return nil
}

func (t *Transport) shutdownWrite() {
	t.eofPending = false
	if err := unix.Shutdown(t.fd, unix.SHUT_WR); err != nil && err != unix.ENOTCONN {
		t.fatal(err)
	}
}

// buffer copies p behind what is queued, into the last chunk when it fits.
func (t *Transport) buffer(p []byte) {
	t.wsize += len(p)
	if n := len(t.wq); n > 0 {
		last := t.wq[n-1]
		if cap(last)-len(last) >= len(p) {
			t.wq[n-1] = append(last, p...)
			return
		}
	}
	c := make([]byte, len(p), max(len(p), minChunk))
	copy(c, p)
	t.wq = append(t.wq, c)
}

// writeReady flushes what it can; when the buffer empties it stops watching
// for writability and completes a pending sendfile, write_eof or close.
func (t *Transport) writeReady() {
	if t.wsize > 0 {
		n, err := t.writeQueued()
		if err != nil && err != unix.EAGAIN && err != unix.EINTR {
			t.fatal(err)
			return
		}
		t.dropWritten(n)
		if t.wsize > 0 {
			t.maybeResume()
			return
		}
	}
	if t.sendfile != nil {
		t.sendfile.step()
		if t.state == tClosed || t.sendfile != nil {
			return
		}
	}
	t.drained()
}

// resumedClosing: the ResumeWriting of a closing transport was delivered;
// finish now, or once what its protocol wrote meanwhile is flushed.
func (t *Transport) resumedClosing() {
	t.closeAfterResume = false
	if t.state == tClosing && t.wsize == 0 && t.sendfile == nil {
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
		t.updateInterest()
	}
}

func (t *Transport) writeQueued() (int, error) {
	if len(t.wq) == 1 {
		return writeOnce(t.fd, t.wq[0][t.woff:], t.socket)
	}
	iov := t.iov[:0]
	iov = append(iov, t.wq[0][t.woff:])
	for _, b := range t.wq[1:min(len(t.wq), maxIOV)] {
		iov = append(iov, b)
	}
	t.iov = iov
	n, err := writeVec(t.fd, iov, t.socket)
	clear(iov)
	return n, err
}

func (t *Transport) dropWritten(n int) {
	if n <= 0 {
		return
	}
	t.wsize -= n
	for n > 0 {
		rest := len(t.wq[0]) - t.woff
		if n < rest {
			t.woff += n
			return
		}
		n -= rest
		t.wq[0] = nil
		t.wq = t.wq[1:]
		t.woff = 0
	}
	if len(t.wq) == 0 {
		t.wq = nil // let the chunks' memory go while idle
	}
}
