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
// The stats of the ticks run on the loop's file pool, as libuv's
// uv_fs_poll runs its uv_fs_stat on the thread pool: a path on a slow or
// hung file system (NFS, FUSE) holds a pool worker, never the loop. The
// baseline stat is made by PollPath itself, on the caller's thread, so
// that any change after PollPath returns is reported (libuv takes its
// baseline when its first pool stat completes, and misses a change made
// before then). A stat of a local file
// costs about 2 µs of CPU; inline on the loop thread that was cheaper
// than the pool's hand-off, but one hung stat stalled every other
// callback. The outcome comes back on the loop thread and is compared
// there. Stats never overlap: a tick that finds the last stat still
// running starts none (the next tick tries again), so a slow file system
// delays the report and holds at most one worker per watcher.

// fsPoll is a polling watcher's state.
type fsPoll struct {
	w     *FSWatcher
	path  string // as given, reported as the events' Path
	timer *Timer
	last  unix.Stat_t
	err   error // the last stat's error, nil if it succeeded

	// The stat in flight on the file pool, or nil; st and stErr are the
	// worker's until it is done (the post queue's lock orders the writes
	// before the done callback reads them).
	stat  *Future
	st    unix.Stat_t
	stErr error
}

// pollStat is the stat a polling watcher makes (a variable so a test can
// make it slow).
var pollStat = unix.Stat

// PollPath starts a watcher that stats path every interval (which must be
// positive) and calls fn when the result changes. Errors: EINVAL for an
// empty path, a nil fn or a non-positive interval, ECLOSED on a closed
// loop. A path that does not exist yet is not an error: fn hears ENOENT
// once (from the loop, never from inside PollPath), then FSRename when it
// appears. The first stat, the baseline, is made here.
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
	p.err = pollStat(w.root, &p.last)
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

// tick starts a stat unless the last one is still running. A failure to
// start one (the loop is closing) leaves it to the next tick.
func (p *fsPoll) tick() {
	if p.stat == nil {
		p.startStat()
	}
}

// startStat queues a stat of the path on the file pool.
func (p *fsPoll) startStat() error {
	root := p.w.root
	f, err := p.w.loop.RunInFS(func() (uintptr, int) {
		p.stErr = pollStat(root, &p.st)
		return 0, 0
	})
	if err != nil {
		return err
	}
	p.stat = f
	f.AddDoneCallback(p.statDone)
	return nil
}

// statDone takes a stat's outcome on the loop thread, compares it with
// the last and reports a difference.
func (p *fsPoll) statDone(f *Future) {
	p.stat = nil
	cancelled := f.State() == Cancelled
	f.Release()
	if cancelled || !p.w.active {
		return
	}
	err := p.stErr
	prevErr := p.err
	changed := err == nil && prevErr == nil && !statSame(&p.last, &p.st)
	p.err = err
	if err == nil {
		p.last = p.st
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

// stop ends the ticks and withdraws a stat no worker has started; a
// started one completes and its outcome is dropped (the watcher is no
// longer active).
func (p *fsPoll) stop() {
	p.timer.Stop()
	if p.stat != nil {
		p.stat.Cancel("")
	}
}

// statSame compares what libuv's uv_fs_poll compares (birth time and file
// flags aside: not every system's stat has them).
func statSame(a, b *unix.Stat_t) bool {
	return a.Size == b.Size && a.Mode == b.Mode && a.Uid == b.Uid && a.Gid == b.Gid &&
		a.Ino == b.Ino && a.Dev == b.Dev && a.Nlink == b.Nlink &&
		a.Mtim == b.Mtim && a.Ctim == b.Ctim
}
