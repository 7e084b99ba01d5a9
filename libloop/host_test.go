// SPDX-License-Identifier: MIT

package libloop

// disposeHost is a Host that tells a test of each disposed future.
type disposeHost struct {
	recordingHost
	fn func(*Future)
}

func (h *disposeHost) FutureDisposed(f *Future) { h.fn(f) }

// watchDisposal calls fn for each of l's futures as it is disposed.
func watchDisposal(l *Loop, fn func(*Future)) { l.SetHost(&disposeHost{fn: fn}) }
