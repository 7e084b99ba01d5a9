// SPDX-License-Identifier: MIT

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package libloop

import (
	"golang.org/x/sys/unix"
)

// The kqueue backend: each watcher opens its path (O_RDONLY: O_EVTONLY is
// macOS-only) and registers the fd with the loop's kqueue as an
// EVFILT_VNODE filter, as libuv's kqueue uv_fs_event does. kqueue names no
// entry: a change inside a watched directory is reported with the
// directory's own base name. Recursive watching is not offered (libuv uses
// FSEvents on macOS for it; that needs a thread and CoreServices).
type fsBackend struct {
	fds map[*FSWatcher]*kqWatch
}

// kqWatch is one watcher's fd, its owner in the loop's fd table.
type kqWatch struct {
	w  *FSWatcher
	fd int
}

// vnodeWatcher is a selector that reports file changes (kqueue).
type vnodeWatcher interface {
	watchVnode(fd int) error
}

func (l *Loop) fsWatchStart(w *FSWatcher) error {
	if w.recursive {
		return unix.ENOTSUP
	}
	vw, ok := l.sel.(vnodeWatcher)
	if !ok {
		return unix.ENOTSUP
	}
	fd, err := unix.Open(w.root, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	k := &kqWatch{w: w, fd: fd}
	if err := l.watchOwner(fd, k, 0); err != nil {
		unix.Close(fd)
		return err
	}
	l.setQuiet(fd, k, true) // the watcher counts, not its fd (refs.go)
	if err := vw.watchVnode(fd); err != nil {
		l.unwatchOwner(fd, k)
		unix.Close(fd)
		return err
	}
	l.plan.stale()
	l.changed()
	if l.fsw.backend == nil {
		l.fsw.backend = &fsBackend{fds: make(map[*FSWatcher]*kqWatch)}
	}
	l.fsw.backend.fds[w] = k
	return nil
}

func (l *Loop) fsWatchStop(w *FSWatcher) {
	b := l.fsw.backend
	if b == nil || b.fds[w] == nil {
		return
	}
	k := b.fds[w]
	delete(b.fds, w)
	if len(b.fds) == 0 {
		l.fsw.backend = nil
	}
	l.unwatchOwner(k.fd, k)
	unix.Close(k.fd) // closing the fd removes its kevent
}

// ioReady reports one change of the watched path; a deleted path ends the
// watcher with ENOENT.
func (k *kqWatch) ioReady(mask uint8) {
	w := k.w
	if mask&evVnode == 0 {
		return
	}
	switch {
	case mask&evVnodeGone != 0:
		w.deliverLast(FSEvent{Path: w.name, Events: FSRename, Err: unix.ENOENT})
	case mask&evVnodeRenamed != 0:
		w.deliver(FSEvent{Path: w.name, Events: FSRename})
	default:
		w.deliver(FSEvent{Path: w.name, Events: FSChange})
	}
}

// loopClosing closes the fd (Close stops every watcher first, so this
// runs only for one left behind).
func (k *kqWatch) loopClosing() {
	unix.Close(k.fd)
	if b := k.w.loop.fsw.backend; b != nil {
		delete(b.fds, k.w)
	}
}
