// SPDX-License-Identifier: MIT

package libloop

import "time"

// NextTimeout is how long the loop's next iteration would let its poll
// block, libuv's uv_backend_timeout: 0 if a callback is ready (or posted
// from another thread, or an idle hook is active, or the loop is stopping),
// else the time until the earliest timer (0 if one is due), else -1 (nothing
// scheduled: only I/O or another thread can wake it). A host that embeds
// the loop in its own poll waits on BackendFD for at most this long, then
// runs one iteration with RunOnce(true). -1 on a closed loop.
//
// It drops cancelled timers from the front of the timer queues first, so a
// cancelled timer does not wake the host for nothing. Called on the loop's
// thread while the loop is not running (or from one of its callbacks).
func (l *Loop) NextTimeout() time.Duration {
	if l.closed.Load() {
		return -1
	}
	if l.ready.len() > 0 || l.hostPending || l.stopping || l.hooks.idle > 0 || l.view().Posted.Load() > 0 {
		return 0
	}
	// As before a blocking poll: from here on a host's post source must
	// wake the loop (its wakeup fd makes BackendFD readable), or the host
	// would sleep through a post made while it waits.
	if l.postSource != nil && l.postSource.BeforeBlock() {
		return 0
	}
	l.purgeCancelledTimers()
	when, ok := l.nextDeadline()
	if !ok {
		return -1
	}
	if now := monoNow(); when > now {
		return time.Duration(when - now)
	}
	return 0
}
