// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// sendfileChunk bounds one sendfile(2) call, so a large file does not keep
// the loop in the kernel for long.
const sendfileChunk = 1 << 20

// SendfileFunc receives a sendfile's outcome: the bytes sent, and nil or the error.
type SendfileFunc func(sent int64, err error)

// sendfileOp is a file being sent on a transport: zero-copy with
// sendfile(2) where the kernel allows, else read and written in chunks.
type sendfileOp struct {
	t       *Transport
	in      int
	off     int64
	left    int64 // bytes still to send; -1: to the end of the file
	sent    int64
	before  int    // buffered bytes written before the file, still to send first
	copying bool   // sendfile(2) refused this pair of fds: copy instead
	pending []byte // copy mode: bytes read but not yet taken by the socket
	done    SendfileFunc
}

// Sendfile sends count bytes of the file fd from offset (count 0: to the
// end), after whatever is already buffered, without copying through user
// space where the OS allows (asyncio's loop.sendfile). The transport does
// not take fd; done runs on the loop thread with the bytes sent. One
// sendfile at a time per transport (ESTATE otherwise).
func (t *Transport) Sendfile(fd int, offset, count int64, done SendfileFunc) error {
	switch {
	case t.state != tOpen:
		return ECLOSED
	case t.kind != Stream && t.kind != PipeWrite, t.tls != nil:
		return EINVAL
	case done == nil || offset < 0 || count < 0:
		return EINVAL
	case t.sendfileOp() != nil || t.eofWritten:
		return ESTATE
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	left := count
	if count == 0 {
		left = -1
	}
	t.writes().sendfile = &sendfileOp{t: t, in: fd, off: offset, left: left, done: done, before: t.buffered(),
		copying: st.Mode&unix.S_IFMT != unix.S_IFREG}
	return t.updateInterest()
}

// step sends while the socket takes data; it returns when the socket is
// full (write interest stays on) or the operation has finished.
func (op *sendfileOp) step() {
	for op.left != 0 {
		n, err := op.once()
		if err == unix.EAGAIN || err == unix.EINTR {
			return
		}
		if err != nil {
			op.end(err)
			return
		}
		if n == 0 {
			break // end of file
		}
		op.sent += int64(n)
		if op.left > 0 {
			op.left -= int64(n)
		}
	}
	op.end(nil)
}

func (op *sendfileOp) once() (int, error) {
	t := op.t
	want := sendfileChunk
	if op.left > 0 && op.left < int64(want) {
		want = int(op.left)
	}
	if !op.copying {
		n, err := unix.Sendfile(int(t.fd), op.in, &op.off, want)
		if err == unix.EINVAL || err == unix.ENOSYS || err == unix.EOPNOTSUPP {
			op.copying = true // e.g. a file system without splice support
		} else {
			return n, err
		}
	}
	if len(op.pending) == 0 {
		buf := make([]byte, min(want, maxReadChunk))
		n, err := unix.Pread(op.in, buf, op.off)
		if err != nil || n == 0 {
			return 0, err
		}
		op.off += int64(n)
		op.pending = buf[:n]
	}
	n, err := writeOnce(int(t.fd), op.pending, t.socket)
	if n > 0 {
		op.pending = op.pending[n:]
	}
	return n, err
}

// end reports the outcome; writeReady, which runs the steps, goes on with
// what waited behind the file (writes, a close, a write_eof).
func (op *sendfileOp) end(err error) {
	t := op.t
	if t.sendfileOp() != op {
		return
	}
	t.pw.sendfile = nil
	t.dropIdleWrites() // the gate opens if nothing else waits
	op.finish(err)
}

func (op *sendfileOp) finish(err error) {
	op.pending = nil
	op.done(op.sent, err)
}
