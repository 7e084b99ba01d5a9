// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"path/filepath"
)

// File-system watchers, libuv's uv_fs_event_t and uv_fs_poll_t. A watcher
// made by WatchPath hears from the OS (inotify on Linux, fswatch_linux.go;
// kqueue's EVFILT_VNODE on the BSDs and macOS, fswatch_kqueue.go) through
// one fd per loop that the loop's selector watches: no thread of its own.
// A watcher made by PollPath stats its path on a loop timer (fspoll.go).
// Both are FSWatchers, kept in the loop's set until they stop.

// FSEventKind says what happened to a path; the values are the C API's
// LL_FS_RENAME and LL_FS_CHANGE (libuv's UV_RENAME and UV_CHANGE).
type FSEventKind int

const (
	// FSRename: the path appeared, went away or was renamed.
	FSRename FSEventKind = 1
	// FSChange: the path's contents or attributes changed.
	FSChange FSEventKind = 2
)

// FSEvent is one report of a watcher.
type FSEvent struct {
	// Path is relative to the watched directory ("sub/file"); for a
	// watched file, or for the watched directory itself, it is the
	// watched path's base name. For a polling watcher it is the path as
	// given to PollPath.
	Path string
	// Events is FSRename, FSChange or both.
	Events FSEventKind
	// Err is nil, or why the report is not an ordinary change:
	// ENOENT-style system errors (SysErr) when the watched path is gone
	// (the watcher then stops; a polling watcher goes on and reports the
	// path's return), or ENOBUFS when the OS dropped events (inotify's
	// queue overflowed): anything under the watcher may have changed.
	Err error
}

// Status is Err as a C ABI code: 0, or a negative code.
func (e FSEvent) Status() int { return Code(e.Err) }

// FSWatcher is a running file-system watcher, active until Cancel, until
// its watched path goes away (WatchPath's), or until the loop closes.
type FSWatcher struct {
	loop      *Loop
	root      string // absolute path watched
	name      string // root's base name, the Path of events on root itself
	recursive bool
	fn        func(FSEvent)
	active    bool
	unrefd    bool    // Unref: active, but keeps the loop alive no more (refs.go)
	poll      *fsPoll // a polling watcher's state (fspoll.go), else nil
	// Tag is the host's id for this watcher.
	Tag uint64
}

// fsWatchSet is the loop's watchers (of both sorts) and the OS backend's
// state for the notifying ones.
type fsWatchSet struct {
	all     map[*FSWatcher]struct{}
	quiet   int        // active watchers that are unreferenced
	backend *fsBackend // created by the first WatchPath, gone with the last
}

// WatchPath starts a watcher that calls fn (on the loop's thread, in its
// iterations) each time path, or an entry of the directory path, changes;
// recursive watches the whole tree under path (on Linux libloop adds a
// watch for each subdirectory as it appears; other systems refuse it with
// ENOTSUP). Errors: EINVAL for an empty path or a nil fn, ECLOSED on a
// closed loop, and the system's (ENOENT, EACCES, ENOSPC when the inotify
// watch limit is reached).
func (l *Loop) WatchPath(path string, recursive bool, fn func(FSEvent)) (*FSWatcher, error) {
	w, err := l.newFSWatcher(path, fn)
	if err != nil {
		return nil, err
	}
	w.recursive = recursive
	if err := l.fsWatchStart(w); err != nil {
		return nil, err
	}
	l.fsAdd(w)
	return w, nil
}

func (l *Loop) newFSWatcher(path string, fn func(FSEvent)) (*FSWatcher, error) {
	if path == "" || fn == nil {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return &FSWatcher{loop: l, root: abs, name: filepath.Base(abs), fn: fn}, nil
}

func (l *Loop) fsAdd(w *FSWatcher) {
	if l.fsw.all == nil {
		l.fsw.all = make(map[*FSWatcher]struct{})
	}
	w.active = true
	l.fsw.all[w] = struct{}{}
}

// Cancel stops the watcher: fn is not called again, not even for events
// already read. Cancelling twice does nothing.
func (w *FSWatcher) Cancel() {
	if !w.active {
		return
	}
	w.active = false
	delete(w.loop.fsw.all, w)
	if w.unrefd {
		w.loop.fsw.quiet--
	}
	if w.poll != nil {
		w.poll.stop()
		return
	}
	w.loop.fsWatchStop(w)
}

// Active reports whether the watcher still runs.
func (w *FSWatcher) Active() bool { return w.active }

// Path is the absolute path the watcher watches.
func (w *FSWatcher) Path() string { return w.root }

// Polling reports whether the watcher polls (PollPath) rather than hears
// from the OS (WatchPath).
func (w *FSWatcher) Polling() bool { return w.poll != nil }

// FSWatchers calls fn for each active watcher of the loop (in no set
// order) until fn returns false: the loop's handle walk lists them.
func (l *Loop) FSWatchers(fn func(*FSWatcher) bool) {
	for w := range l.fsw.all {
		if !fn(w) {
			return
		}
	}
}

// NumFSWatchers is how many watchers of the loop are active (each
// referenced one keeps the loop alive, as an active handle does in libuv).
func (l *Loop) NumFSWatchers() int { return len(l.fsw.all) }

// deliver calls the watcher's fn with ev unless it was cancelled; a panic
// is reported to the exception handler, as a callback's, and the loop and
// the other watchers go on.
func (w *FSWatcher) deliver(ev FSEvent) {
	if !w.active {
		return
	}
	w.call(ev)
}

// deliverLast stops the watcher, then calls fn with its last event (the
// watched path is gone): inside that call the watcher already reads as
// stopped, so the callback may release it and need not cancel it.
func (w *FSWatcher) deliverLast(ev FSEvent) {
	if !w.active {
		return
	}
	w.Cancel()
	w.call(ev)
}

func (w *FSWatcher) call(ev FSEvent) {
	defer func() {
		if r := recover(); r != nil {
			w.loop.CallExceptionHandler(&ErrorContext{
				Message: fmt.Sprintf("Exception in file-system watcher callback: %v", r),
				Code:    int(EINVAL),
			})
		}
	}()
	w.fn(ev)
}

// dropFSWatchers stops every watcher (Close). The backend's fd is closed
// by the fd table's sweep (loopClosing).
func (l *Loop) dropFSWatchers() {
	for w := range l.fsw.all {
		w.Cancel()
	}
}

// Ref makes the watcher keep the loop alive while active (the default).
// The watcher counts, not its inotify fd, kqueue fd or poll timer, which
// are quiet (refs.go).
func (w *FSWatcher) Ref() {
	if !w.unrefd {
		return
	}
	w.unrefd = false
	if w.active {
		w.loop.fsw.quiet--
	}
}

// Unref makes the watcher stop keeping the loop alive; it still reports.
func (w *FSWatcher) Unref() {
	if w.unrefd {
		return
	}
	w.unrefd = true
	if w.active {
		w.loop.fsw.quiet++
	}
}

// HasRef reports whether the watcher keeps the loop alive while active.
func (w *FSWatcher) HasRef() bool { return !w.unrefd }
