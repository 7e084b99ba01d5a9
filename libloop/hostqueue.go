// SPDX-License-Identifier: MIT

package libloop

// A host with its own ready queue (the Python binding keeps call_soon in a
// Python deque, so scheduling costs no boundary crossing) registers a run
// function. While the host reports work, the loop does not block in poll,
// and each iteration calls run once, before the callbacks of its own queue.

// SetHostQueue installs run (nil removes it). run executes the host's ready
// callbacks (those queued before it was called) and reports whether the host
// has more ready work for the next iteration.
func (l *Loop) SetHostQueue(run func() (more bool)) {
	l.hostRun = run
	if run == nil {
		l.hostPending = false
	}
}

// HostReady tells the loop that the host queue has work, so the next
// iteration runs it without blocking. Loop thread only.
func (l *Loop) HostReady() { l.hostPending = true }
