// SPDX-License-Identifier: MIT

package libloop

// The write gate: whether a host may send on a transport's fd itself, now.
//
// A transport has one write path, Write. A host with a send of its own (a
// DirectWriter: capi's C fast path, cloop/send.c, which saves entering Go)
// may make the first try of a write itself while the gate is open: an open
// stream socket with nothing buffered, no sendfile, no write_eof and no
// TLS. Whatever the kernel does not take of that try it hands to Write,
// which buffers it (the gate was open: nothing is ahead of it) and closes
// the gate. So the host's send never overtakes buffered bytes, and the
// bytes of one write leave in order through one buffer.
//
// The gate's inputs (state, pw, eofWritten, tls) are written only
// by the methods in this file, and each of them ends in regate, the one
// transition: it recomputes the answer and, only when it changed, keeps it
// and tells the DirectWriter. Every caller changes an input before it acts
// on the change (closes the fd, copies bytes into the buffer, starts a
// sendfile, a shutdown or a handshake), and the loop thread runs nothing of
// the host's in between, so a host that follows DirectChanged never sends
// on a closed or reused fd and never overtakes buffered bytes.
// TestWriteGateInputs holds the rule to the source.

// DirectWritable reports whether a write may go straight to the socket
// from outside (a host's first try): the transport is an open stream
// socket, or an open datagram socket, and nothing waits to be written. On
// a stream the try is a send(MSG_NOSIGNAL); on a datagram transport
// (Kind() == Datagram) it is one sendto of one whole datagram, whose
// would-block (EAGAIN, ENOBUFS, EINTR) goes to SendTo to be queued and
// whose other error goes to HostSendFailed, not to a second try
// (udp_hostsend.go). A write that the kernel takes whole then changes
// nothing here. A DirectWriter hears every change of it.
func (t *Transport) DirectWritable() bool { return t.direct }

// directWritable computes the gate from its inputs. A datagram
// transport's queue lives in pw (dgq): pw nil means nothing is queued.
func (t *Transport) directWritable() bool {
	return t.state == tOpen && t.socket && (t.kind == Stream || t.kind == Datagram) &&
		t.pw == nil && !t.eofWritten && t.tls == nil
}

// regate is the gate's one transition: after any input changed, it keeps
// the new answer and tells the host, once per change.
func (t *Transport) regate() {
	if d := t.directWritable(); d != t.direct {
		t.direct = d
		if w := t.loop.io.direct; w != nil {
			w.DirectChanged(t, d)
		}
	}
}

// setState moves the transport to s: closing or closed shuts the gate
// before the fd is closed.
func (t *Transport) setState(s transportState) {
	t.state = s
	t.regate()
}

// addBuffered counts n bytes the caller is about to copy into the buffer:
// the gate shuts before they wait there.
func (t *Transport) addBuffered(n int) {
	t.writes().wsize += n // writes() shuts the gate as it makes the state
}

// subBuffered counts n buffered bytes written. It never opens the gate by
// itself: the pending-write state stays until drained drops it.
func (t *Transport) subBuffered(n int) {
	t.pw.wsize -= n
}

// writes returns the pending-write state, making it on first use (which
// shuts the gate: something is about to wait).
func (t *Transport) writes() *pendingWrites {
	if t.pw == nil {
		t.pw = &pendingWrites{}
		t.regate()
	}
	return t.pw
}

// dropIdleWrites lets the pending-write state go once nothing waits: the
// one way back to an open gate (the buffer drained, a sendfile ended).
func (t *Transport) dropIdleWrites() {
	if pw := t.pw; pw != nil && len(pw.wq) == 0 && len(pw.dgq) == 0 && pw.sendfile == nil {
		t.pw = nil
		t.regate()
	}
}

// dropWrites forgets everything waiting to be written: the fd is closed.
func (t *Transport) dropWrites() {
	t.pw = nil
	t.regate()
}

// setEOFWritten records WriteEOF: no more writes, from anyone.
func (t *Transport) setEOFWritten() {
	t.eofWritten = true
	t.regate()
}

// setTLS puts a TLS layer on the transport (nil takes it off): the host
// must not send plaintext on its fd.
func (t *Transport) setTLS(st *tlsState) {
	t.tls = st
	t.regate()
}
