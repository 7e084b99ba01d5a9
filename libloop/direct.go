// SPDX-License-Identifier: MIT

package libloop

// A host that sends on a transport's fd itself, without calling Write (a C
// fast path that saves entering Go: a DirectWriter, host.go), may do so
// only while DirectWritable holds: an open stream socket with nothing buffered, no sendfile, no
// write_eof and no TLS. The hook below tells it every change of that
// answer as it happens, on the loop thread, before anything else can
// observe the new state: in particular before the fd is closed (finish,
// loopClosing) and before bytes are buffered, so a host that follows
// DirectChanged never sends on a closed or reused fd and never overtakes
// buffered bytes.

// syncDirect reports t's DirectWritable to the host's DirectWriter. Called
// at each change point of its inputs (state, wsize, pw, eofWritten, tls);
// the host may be told the same value twice, never a stale one.
func (t *Transport) syncDirect() {
	if w := t.loop.io.direct; w != nil {
		w.DirectChanged(t, t.DirectWritable())
	}
}
