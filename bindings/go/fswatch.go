// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// File-system watchers: ll_fs_watch (libuv's uv_fs_event) and ll_fs_poll
// (uv_fs_poll). See include/libloop/fswatch.h and docs/fs-events.md.

// What happened to a path (an FSEvent's Events bits), and WatchPath's flag.
const (
	FSRename    int32 = 1 // LL_FS_RENAME: the path appeared, went away or was renamed
	FSChange    int32 = 2 // LL_FS_CHANGE: its contents or attributes changed
	FSRecursive int32 = 4 // LL_FS_RECURSIVE: watch every directory under the path (Linux)
)

// FSEvent is one report of a watcher.
type FSEvent struct {
	// Path is relative to the watched directory (the watched path's base
	// name for an event on it; for a polling watcher, the path as given).
	Path string
	// Events is FSRename, FSChange or both.
	Events int32
	// Err is nil, or the status: -ENOENT when the watched path is gone
	// (a WatchPath watcher has then stopped), -ENOBUFS when the OS dropped
	// events (rescan). Compare with errors.Is against syscall errnos.
	Err error
}

// FSWatcher is a running watcher (an ll_handle id), until Cancel or the
// loop's Close.
type FSWatcher struct {
	loop *Loop
	id   uint64 // 0 once released
	key  uintptr
}

var fsTramp struct {
	once sync.Once
	p    uintptr
}

// FSEventPtr returns the C address of the ll_fs_event_fn trampoline.
func FSEventPtr() uintptr {
	fsTramp.once.Do(func() { fsTramp.p = purego.NewCallback(fsEventTrampoline) })
	return fsTramp.p
}

func fsEventTrampoline(loop, w uint64, path unsafe.Pointer, events, status int32, arg uintptr) {
	if e := takeEntry(arg, kindFSEvent); e != nil {
		ev := FSEvent{Path: goString(path), Events: events, Err: check(status)}
		guard(e.reportTo(loop), func() { e.fsev(ev) })
	}
}

// WatchPath watches path (a file or directory; with recursive, the whole
// tree under it) and calls fn on the loop's thread for each change
// (ll_fs_watch).
func (l *Loop) WatchPath(path string, recursive bool, fn func(FSEvent)) (*FSWatcher, error) {
	flags := int32(0)
	if recursive {
		flags = FSRecursive
	}
	return l.startFSWatcher(path, fn, func(p unsafe.Pointer, key uintptr, out unsafe.Pointer) int32 {
		return l.raw().FSWatch(l.id, p, flags, FSEventPtr(), key, out)
	})
}

// PollPath stats path every interval and calls fn when the result changes
// (ll_fs_poll): a change, the path appearing or going away.
func (l *Loop) PollPath(path string, interval time.Duration, fn func(FSEvent)) (*FSWatcher, error) {
	return l.startFSWatcher(path, fn, func(p unsafe.Pointer, key uintptr, out unsafe.Pointer) int32 {
		return l.raw().FSPoll(l.id, p, interval.Seconds(), FSEventPtr(), key, out)
	})
}

func (l *Loop) startFSWatcher(path string, fn func(FSEvent), call func(p unsafe.Pointer, key uintptr, out unsafe.Pointer) int32) (*FSWatcher, error) {
	if fn == nil {
		return nil, EINVAL
	}
	w := &FSWatcher{loop: l}
	out, err := getSlot()
	if err != nil {
		return nil, err
	}
	defer putSlot(out)
	key := addEntry(&cbEntry{kind: kindFSEvent, owner: l.id, fsw: w, fsev: fn})
	rc := withCString(path, func(p unsafe.Pointer) int32 { return call(p, key, out) })
	if err := check(rc); err != nil {
		removeEntry(key)
		return nil, err
	}
	w.key, w.id = key, *(*uint64)(out)
	return w, nil
}

// ID returns the watcher's ll_handle id, or 0 once cancelled.
func (w *FSWatcher) ID() uint64 { return w.id }

// Cancel stops the watcher and releases its id (ll_release). It is safe
// inside the watcher's own callback; twice does nothing.
func (w *FSWatcher) Cancel() error {
	if w.id == 0 {
		return nil
	}
	if err := check(w.loop.raw().Release(w.id)); err != nil {
		return err
	}
	w.id = 0
	removeEntry(w.key)
	return nil
}

// Active reports whether the watcher still runs (ll_handle_cancelled): a
// WatchPath watcher whose path was deleted has stopped by itself.
func (w *FSWatcher) Active() bool {
	return w.id != 0 && w.loop.raw().HandleCancelled(w.id) == 0
}

// release drops the id of a watcher whose loop was closed.
func (w *FSWatcher) release() {
	if w.id != 0 {
		w.loop.raw().Release(w.id)
		w.id = 0
	}
}
