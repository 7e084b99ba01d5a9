// SPDX-License-Identifier: MIT

package libloop

// Interest and readiness bits for a file descriptor.
const (
	evRead  uint8 = 1
	evWrite uint8 = 2
	evExit  uint8 = 4 // a watched child exited (kqueue's EVFILT_PROC); ioEvent.fd is its pid
	// evOnce (with evRead, epoll only) reports the fd once, then keeps it
	// registered but silent until control re-arms it (EPOLLONESHOT). A
	// child's pidfd uses it: once its exit has fired it can be closed with
	// no EPOLL_CTL_DEL, since a copy still open elsewhere (a host's fork)
	// keeps only a disarmed registration, which never reports again.
	evOnce uint8 = 8
	// evVnode: a file watched with kqueue's EVFILT_VNODE changed
	// (fswatch_kqueue.go), with evVnodeGone when it was deleted or
	// revoked and evVnodeRenamed when it was renamed.
	evVnode        uint8 = 16
	evVnodeGone    uint8 = 32
	evVnodeRenamed uint8 = 64
)

// exitWatcher is a selector that can report a child's exit itself
// (kqueue: EVFILT_PROC with NOTE_EXIT), sparing a waiting goroutine.
type exitWatcher interface {
	watchExit(pid int) error
}

// ioEvent is one readiness report: which fd, and evRead/evWrite.
type ioEvent struct {
	fd   int32
	mask uint8
}

// selector is the OS readiness backend (epoll on Linux, kqueue on the BSDs),
// shaped like the Go runtime's netpoll: open, control, poll, wake, close.
// Only wake may be called from another thread.
type selector interface {
	// control changes fd's interest from old to new (evRead|evWrite bits;
	// new == 0 removes it).
	control(fd int, old, new uint8) error
	// poll waits up to timeoutNs nanoseconds (negative: forever, 0: do not
	// block), appends readiness to evs and reports whether wake was called.
	// noTry says a poll that may block need not try a non-blocking one
	// first: the loop just made that try, or its tries keep finding
	// nothing (pollplan.go). A selector that tries first skips it then.
	poll(timeoutNs int64, evs []ioEvent, noTry bool) ([]ioEvent, bool, error)
	// triesFirst reports whether poll tries a non-blocking poll before one
	// that may block (epoll): then the loop may make that try itself,
	// before it chooses a timeout, at no extra system call (run.go).
	triesFirst() bool
	// wake makes a blocked or future poll return; safe from any thread.
	wake() error
	// fd is the selector's own fd (epoll, kqueue): readable while a watched
	// fd is ready or a wake is pending (Loop.BackendFD).
	fd() int
	// wakeFD is an fd whose 8-byte write of 1 wakes the poll (the
	// eventfd), or -1 where wake has none (kqueue's EVFILT_USER).
	wakeFD() int
	close() error
}

// pollBuffer is how many records one poll reads (the selectors' event
// buffers): a poll that fills it may have left more ready fds unreported.
const pollBuffer = 256

// msTimeout converts a nanosecond timeout to whole milliseconds, rounding up
// so that the loop never wakes before a timer is due.
func msTimeout(ns int64) int {
	if ns < 0 {
		return -1
	}
	ms := (ns + 999_999) / 1_000_000
	if ms > maxPollMs {
		ms = maxPollMs
	}
	return int(ms)
}

// maxPollMs caps one poll at 24 hours, as asyncio's MAXIMUM_SELECT_TIMEOUT.
const maxPollMs = 24 * 3600 * 1000
