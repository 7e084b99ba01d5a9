// SPDX-License-Identifier: MIT

package libloop

// A host that sends on a transport's fd itself, without calling Write (a C
// fast path that saves entering Go), may do so only while DirectWritable
// holds: an open stream socket with nothing buffered, no sendfile, no
// write_eof and no TLS. The hook below tells it every change of that
// answer as it happens, on the loop thread, before anything else can
// observe the new state: in particular before the fd is closed (finish,
// loopClosing) and before bytes are buffered, so a host that follows the
// hook never sends on a closed or reused fd and never overtakes buffered
// bytes.

// SetDirectHook installs h, called with DirectWritable's new value at
// every point where it may have changed (nil: none). A host reads the
// current value once when it learns of a transport; from then on the hook
// keeps it. Set it before the first transport is made.
func (l *Loop) SetDirectHook(h func(t *Transport, writable bool)) { l.io.directHook = h }

// syncDirect reports t's DirectWritable to the hook. Called at each change
// point of its inputs (state, wsize, pw, eofWritten, tls); the hook may be
// told the same value twice, never a stale one.
func (t *Transport) syncDirect() {
	if h := t.loop.io.directHook; h != nil {
		h(t, t.DirectWritable())
	}
}
