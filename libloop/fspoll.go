// SPDX-License-Identifier: MIT

package libloop

import (
	"time"

	"golang.org/x/sys/unix"
)

// A polling watcher (libuv's uv_fs_poll_t) stats its path on a repeating
// loop timer and reports when the result differs from the last one: a
// change of size, times, mode, owner, inode or device as FSChange; the
// path appearing (a stat that succeeds after one that failed) as FSRename
// with no error; the path going away, or any stat failure that differs
// from the last one, as FSRename with the stat's error (ENOENT ...). The
// first stat, made when the watcher starts, sets the baseline and is
// reported only if it fails, as libuv does.
//
// The stat runs inline on the loop thread, not on the executor: a stat of
// a local file costs about 2 µs of CPU here (stat(2) of a file on ext4,
// 200,000 calls under getrusage), about what handing a job to a worker and
// taking its result back costs in wakeups alone (a futex wake for the
// worker, an eventfd write and an epoll return for the loop), and an
// interval is typically 100 ms or more. A path on a slow network file
// system would stall the loop for that stat; a host that polls one should
// use a long interval (or the file pool's stat, once it exists, could
// serve here).

// fsPoll is a polling watcher's state.
type fsPoll struct {
	w     *FSWatcher
	path  string // as given, reported as the events' Path
	timer *Timer
	last  unix.Stat_t
	err   error // the last stat's error, nil if it succeeded
}

// PollPath starts a watcher that stats path every interval (which must be
// positive) and calls fn when the result changes. Errors: EINVAL for an
// empty path, a nil fn or a non-positive interval, ECLOSED on a closed
// loop. A path that does not exist yet is not an error: fn hears ENOENT
// once, then FSRename when it appears.
func (l *Loop) PollPath(path string, interval time.Duration, fn func(FSEvent)) (*FSWatcher, error) {
	if interval <= 0 {
		return nil, EINVAL
	}
	w, err := l.newFSWatcher(path, fn)
	if err != nil {
		return nil, err
	}
	p := &fsPoll{w: w, path: path}
	w.poll = p
	p.err = unix.Stat(w.root, &p.last)
	p.timer, err = l.StartTimer(interval.Seconds(), interval.Seconds(), p.tick)
	if err != nil {
		return nil, err
	}
	p.timer.Unref() // the watcher keeps the loop alive, not its timer
	if p.err != nil {
		// Reported from the loop, never from inside PollPath.
		first := FSEvent{Path: path, Events: FSRename, Err: p.err}
		if _, err := l.CallSoon(func() { w.deliver(first) }); err != nil {
			p.timer.Stop()
			return nil, err
		}
	}
	l.fsAdd(w)
	return w, nil
}

// tick stats the path and reports a difference.
func (p *fsPoll) tick() {
	var st unix.Stat_t
	err := unix.Stat(p.w.root, &st)
	prevErr := p.err
	changed := err == nil && prevErr == nil && !statSame(&p.last, &st)
	p.err = err
	if err == nil {
		p.last = st
	}
	switch {
	case err != nil:
		if prevErr == nil || Code(prevErr) != Code(err) {
			p.w.deliver(FSEvent{Path: p.path, Events: FSRename, Err: err})
		}
	case prevErr != nil:
		p.w.deliver(FSEvent{Path: p.path, Events: FSRename})
	case changed:
		p.w.deliver(FSEvent{Path: p.path, Events: FSChange})
	}
}

func (p *fsPoll) stop() { p.timer.Stop() }

// statSame compares what libuv's uv_fs_poll compares (birth time and file
// flags aside: not every system's stat has them).
func statSame(a, b *unix.Stat_t) bool {
	return a.Size == b.Size && a.Mode == b.Mode && a.Uid == b.Uid && a.Gid == b.Gid &&
		a.Ino == b.Ino && a.Dev == b.Dev && a.Nlink == b.Nlink &&
		a.Mtim == b.Mtim && a.Ctim == b.Ctim
}
