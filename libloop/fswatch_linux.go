// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The inotify backend: one non-blocking inotify fd per loop (made by the
// first WatchPath, closed with the last watcher), registered with the
// loop's selector like a transport's fd. Its events are read in the
// iteration that polled them, parsed, merged per watcher and path, and
// delivered in that order.
//
// inotify watches one directory (or file) per watch descriptor and reports
// names relative to it. A recursive watcher therefore holds one wd per
// directory of its tree, each recorded with the directory's path relative
// to the root; a directory created or moved in gets its watch (and its
// present entries are reported, since they may have been made before the
// watch existed); one moved out or deleted loses it. libuv leaves
// recursion to the user on Linux; libloop does it so that one flag means
// the same on every system that accepts it.
//
// inotify gives the same wd for the same inode on one fd, so several
// watchers (or one watcher reaching a directory twice) may share a wd: a
// wd maps to a list of (watcher, relative path) and is removed from the
// kernel when its list empties.

// fsWatchMask is what every wd asks for (libuv's set, plus the events that
// tell a recursive watcher its subdirectories come and go).
const fsWatchMask = unix.IN_ATTRIB | unix.IN_CREATE | unix.IN_MODIFY | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO

// fsWatchReadSize is the read buffer: room for 4096 events without names
// (16 bytes each) or about 240 with full 255-byte names; a fuller queue is
// read again in the same iteration.
const fsWatchReadSize = 64 << 10

type fsBackend struct {
	l   *Loop
	fd  int
	wds map[int32][]fsWatchEntry
	buf []byte
}

// fsWatchEntry is one watcher's use of a wd: rel is the watched
// directory's path relative to the watcher's root ("" for the root).
type fsWatchEntry struct {
	w   *FSWatcher
	rel string
}

// fsPending is one event waiting for delivery: events for the same watcher
// and path read in one iteration merge into one report.
type fsPending struct {
	w    *FSWatcher
	ev   FSEvent
	last bool // the watched root is gone: the watcher ends with this report
}

func (l *Loop) fsBackendOpen() (*fsBackend, error) {
	if b := l.fsw.backend; b != nil {
		return b, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	b := &fsBackend{l: l, fd: fd, wds: make(map[int32][]fsWatchEntry)}
	if err := l.watchOwner(fd, b, evRead); err != nil {
		unix.Close(fd)
		return nil, err
	}
	l.setQuiet(fd, b, true) // the watchers count, not their inotify fd (refs.go)
	l.fsw.backend = b
	return b, nil
}

// fsWatchStart adds w's watches: the root's, and with recursive every
// directory under it (one that vanishes meanwhile is skipped).
func (l *Loop) fsWatchStart(w *FSWatcher) error {
	b, err := l.fsBackendOpen()
	if err != nil {
		return err
	}
	if err := b.add(w, ""); err != nil {
		b.closeIfIdle()
		return err
	}
	if w.recursive {
		if err := b.addTree(w, "", nil); err != nil {
			l.fsWatchStop(w) // a tree watched in part would miss events silently
			return err
		}
	}
	return nil
}

// fsWatchStop removes every wd entry of w.
func (l *Loop) fsWatchStop(w *FSWatcher) {
	b := l.fsw.backend
	if b == nil {
		return
	}
	for wd, list := range b.wds {
		b.dropEntries(wd, list, func(e fsWatchEntry) bool { return e.w == w })
	}
	b.closeIfIdle()
}

// add watches root/rel for w.
func (b *fsBackend) add(w *FSWatcher, rel string) error {
	wd, err := unix.InotifyAddWatch(b.fd, filepath.Join(w.root, rel), fsWatchMask)
	if err != nil {
		return err
	}
	list := b.wds[int32(wd)]
	for _, e := range list {
		if e.w == w && e.rel == rel {
			return nil
		}
	}
	b.wds[int32(wd)] = append(list, fsWatchEntry{w, rel})
	return nil
}

// addTree watches every directory under root/rel. With out non-nil, each
// entry found is also reported as an FSRename: it may have been made
// before its directory's watch existed. A directory that vanishes
// meanwhile is skipped; any other failure (ENOSPC: the watch limit,
// EACCES) is returned, the first one, after the rest of the tree is tried.
func (b *fsBackend) addTree(w *FSWatcher, rel string, out *[]fsPending) error {
	ents, err := os.ReadDir(filepath.Join(w.root, rel))
	if err != nil {
		return treeErr(err)
	}
	var first error
	for _, de := range ents {
		sub := filepath.Join(rel, de.Name())
		if out != nil {
			*out = append(*out, fsPending{w: w, ev: FSEvent{Path: sub, Events: FSRename}})
		}
		if !de.IsDir() {
			continue
		}
		err := b.add(w, sub)
		if err == nil {
			err = b.addTree(w, sub, out)
		}
		if err = treeErr(err); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// treeErr is nil for the errors of a directory that went away (or was
// replaced by a file) while the tree was walked: not a failure to watch.
func treeErr(err error) error {
	if err == nil || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err // the system's errno, as the C API reports it
	}
	return err
}

// dropEntries removes the entries of wd that match, and the wd itself
// from the kernel once nothing uses it.
func (b *fsBackend) dropEntries(wd int32, list []fsWatchEntry, match func(fsWatchEntry) bool) {
	keep := list[:0]
	for _, e := range list {
		if !match(e) {
			keep = append(keep, e)
		}
	}
	for i := len(keep); i < len(list); i++ {
		list[i] = fsWatchEntry{}
	}
	if len(keep) == 0 {
		delete(b.wds, wd)
		unix.InotifyRmWatch(b.fd, uint32(wd)) // EINVAL if the kernel dropped it already
		return
	}
	b.wds[wd] = keep
}

// closeIfIdle closes the inotify fd once no watcher uses it, so an idle
// loop has no fd of it registered.
func (b *fsBackend) closeIfIdle() {
	if len(b.wds) != 0 {
		return
	}
	b.l.unwatchOwner(b.fd, b)
	unix.Close(b.fd)
	b.l.fsw.backend = nil
}

// loopClosing closes the fd (Close has stopped every watcher before).
func (b *fsBackend) loopClosing() {
	unix.Close(b.fd)
	b.l.fsw.backend = nil
}

// ioReady reads what inotify has queued and delivers it.
func (b *fsBackend) ioReady(uint8) {
	var pend []fsPending
	for {
		if b.buf == nil {
			b.buf = make([]byte, fsWatchReadSize)
		}
		n, err := unix.Read(b.fd, b.buf)
		if n <= 0 || err != nil {
			break
		}
		pend = b.parse(b.buf[:n], pend)
		if n < len(b.buf)-unix.SizeofInotifyEvent-unix.NAME_MAX-1 {
			break // the queue is drained: a fuller read would have filled more
		}
	}
	for i := range pend {
		if p := &pend[i]; p.last {
			p.w.deliverLast(p.ev)
		} else {
			p.w.deliver(p.ev)
		}
	}
}

// parse turns a read's records into pending reports, merged per watcher
// and path, and keeps the wd table in step with the tree.
func (b *fsBackend) parse(buf []byte, pend []fsPending) []fsPending {
	report := func(w *FSWatcher, ev FSEvent) {
		for i := range pend {
			p := &pend[i]
			if p.w == w && p.ev.Path == ev.Path && p.ev.Err == nil && ev.Err == nil && !p.last {
				p.ev.Events |= ev.Events
				return
			}
		}
		pend = append(pend, fsPending{w: w, ev: ev})
	}
	// The root's end: its own report, never merged, and nothing for the
	// watcher after it.
	reportLast := func(w *FSWatcher, ev FSEvent) {
		pend = append(pend, fsPending{w: w, ev: ev, last: true})
	}
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		nameLen := int(raw.Len)
		name := ""
		if nameLen > 0 {
			nb := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
			if i := strings.IndexByte(string(nb), 0); i >= 0 {
				nb = nb[:i]
			}
			name = string(nb)
		}
		off += unix.SizeofInotifyEvent + nameLen
		mask := raw.Mask
		if mask&unix.IN_Q_OVERFLOW != 0 {
			b.overflowed(report)
			continue
		}
		wd := raw.Wd
		list := b.wds[wd]
		if mask&unix.IN_IGNORED != 0 {
			// The kernel dropped the wd (its directory went away); a
			// root's end was reported with its IN_DELETE_SELF.
			delete(b.wds, wd)
			continue
		}
		var kind FSEventKind
		if mask&(unix.IN_ATTRIB|unix.IN_MODIFY) != 0 {
			kind |= FSChange
		}
		if mask&^(unix.IN_ATTRIB|unix.IN_MODIFY|unix.IN_ISDIR) != 0 {
			kind |= FSRename
		}
		for _, e := range append([]fsWatchEntry(nil), list...) {
			w := e.w
			if !w.active {
				continue
			}
			if name == "" {
				b.selfEvent(e, mask, kind, report, reportLast)
				continue
			}
			path := filepath.Join(e.rel, name)
			report(w, FSEvent{Path: path, Events: kind})
			if !w.recursive || mask&unix.IN_ISDIR == 0 {
				continue
			}
			switch {
			case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
				err := b.add(w, path)
				var found []fsPending
				if err == nil {
					err = b.addTree(w, path, &found)
				}
				for _, f := range found {
					report(f.w, f.ev)
				}
				if err = treeErr(err); err != nil {
					// The new directory (or part of it) is not watched.
					report(w, FSEvent{Path: path, Events: FSRename, Err: err})
				}
			case mask&(unix.IN_MOVED_FROM|unix.IN_DELETE) != 0:
				b.forgetSubtree(w, path)
			}
		}
	}
	return pend
}

// selfEvent reports an event on a watched directory (or file) itself.
// For the root: its own base name, and when it is deleted or unmounted a
// final report with ENOENT (the watcher then stops). A subdirectory's own
// events are reported by its parent's watch, so they are skipped here.
func (b *fsBackend) selfEvent(e fsWatchEntry, mask uint32, kind FSEventKind, report, reportLast func(*FSWatcher, FSEvent)) {
	if e.rel != "" {
		return
	}
	if mask&(unix.IN_DELETE_SELF|unix.IN_UNMOUNT) != 0 {
		reportLast(e.w, FSEvent{Path: e.w.name, Events: FSRename, Err: unix.ENOENT})
		return
	}
	report(e.w, FSEvent{Path: e.w.name, Events: kind})
}

// forgetSubtree drops w's watches of rel and everything under it (the
// directory left the tree; if it moved within it, IN_MOVED_TO adds it
// back under its new name).
func (b *fsBackend) forgetSubtree(w *FSWatcher, rel string) {
	prefix := rel + string(filepath.Separator)
	for wd, list := range b.wds {
		b.dropEntries(wd, list, func(e fsWatchEntry) bool {
			return e.w == w && (e.rel == rel || strings.HasPrefix(e.rel, prefix))
		})
	}
}

// overflowed handles IN_Q_OVERFLOW: the kernel dropped events, so each
// watcher hears ENOBUFS once (anything may have changed: rescan), and a
// recursive watcher re-adds the watches of directories it may have missed.
func (b *fsBackend) overflowed(report func(*FSWatcher, FSEvent)) {
	seen := make(map[*FSWatcher]bool)
	for _, list := range b.wds {
		for _, e := range list {
			if seen[e.w] || !e.w.active {
				continue
			}
			seen[e.w] = true
			report(e.w, FSEvent{Path: "", Events: FSChange | FSRename, Err: unix.ENOBUFS})
		}
	}
	for w := range seen {
		if w.recursive {
			b.addTree(w, "", nil) // a failure here was told when it happened, or is told by ENOBUFS
		}
	}
}
