// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
#include <stdlib.h>

void ll__call_fs_event(uintptr_t fn, uint64_t loop, uint64_t w, const char *path, int events, int status,
                       uintptr_t arg);
*/
import "C"

import (
	"math"
	"time"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// File-system watchers (ll_fs_watch, ll_fs_poll; libuv's uv_fs_event_t and
// uv_fs_poll_t): ids, errors and the call into the host's ll_fs_event_fn
// here, the watchers in the core (libloop/fswatch*.go, libloop/fspoll.go).
// Events are rare next to callbacks, so each is one Go→C call with a
// C copy of its path, not a batch.

// kindFSWatch names a file-system watcher of either sort; the value
// continues ids.go's kinds.
const kindFSWatch kind = 23

// fsWatchState is what a watcher id names.
type fsWatchState struct {
	loop *loopState
	w    *libloop.FSWatcher
}

func (fs *fsWatchState) owner() *loopState { return fs.loop }
func (fs *fsWatchState) stop()             { fs.w.Cancel() }
func (fs *fsWatchState) active() bool      { return fs.w.Active() }

// fsEventCall returns the Go callback that hands ev to the host's fn. The
// path is copied to C memory for the call only (valid during it, as the
// header says).
func fsEventCall(s *loopState, wid uint64, fn C.ll_fs_event_fn, arg unsafe.Pointer) func(libloop.FSEvent) {
	loopID := s.id
	return func(ev libloop.FSEvent) {
		cpath := C.CString(ev.Path)
		C.ll__call_fs_event(C.uintptr_t(uintptr(unsafe.Pointer(fn))), C.uint64_t(loopID), C.uint64_t(wid),
			cpath, C.int(ev.Events), C.int(ev.Status()), C.uintptr_t(uintptr(arg)))
		C.free(unsafe.Pointer(cpath))
	}
}

// startFSWatch checks the common arguments, reserves an id and starts the
// watcher start makes.
func startFSWatch(caller, id C.uint64_t, path *C.char, fn C.ll_fs_event_fn, arg unsafe.Pointer, out *C.uint64_t,
	start func(s *loopState, p string, cb func(libloop.FSEvent)) (*libloop.FSWatcher, error)) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	if path == nil || fn == nil || out == nil {
		return C.int(libloop.EINVAL)
	}
	wid := ids.reserveID()
	if wid == 0 {
		return C.int(libloop.ENOMEM)
	}
	w, err := start(s, C.GoString(path), fsEventCall(s, wid, fn, arg))
	if err != nil {
		ids.remove(wid)
		return errCode(err)
	}
	w.Tag = wid
	ids.fill(wid, kindFSWatch, &fsWatchState{loop: s, w: w})
	*out = C.uint64_t(wid)
	return 0
}

// ll__fs_watch_go is ll_fs_watch's Go side; caller: see loopthread.go.
//
//export ll__fs_watch_go
func ll__fs_watch_go(caller, id C.uint64_t, path *C.ll__cchar, flags C.int, fn C.ll_fs_event_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if flags&^C.LL_FS_RECURSIVE != 0 {
		return C.int(libloop.EINVAL)
	}
	return startFSWatch(caller, id, (*C.char)(path), fn, arg, out,
		func(s *loopState, p string, cb func(libloop.FSEvent)) (*libloop.FSWatcher, error) {
			return s.loop.WatchPath(p, flags&C.LL_FS_RECURSIVE != 0, cb)
		})
}

// ll__fs_poll_go is ll_fs_poll's Go side; caller: see loopthread.go.
//
//export ll__fs_poll_go
func ll__fs_poll_go(caller, id C.uint64_t, path *C.ll__cchar, interval C.double, fn C.ll_fs_event_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	secs := float64(interval)
	// NaN fails this test; a year bounds the conversion to Duration.
	if !(secs > 0 && secs <= 365*24*3600) || math.IsInf(secs, 0) {
		return C.int(libloop.EINVAL)
	}
	d := time.Duration(math.Ceil(secs * float64(time.Second)))
	return startFSWatch(caller, id, (*C.char)(path), fn, arg, out,
		func(s *loopState, p string, cb func(libloop.FSEvent)) (*libloop.FSWatcher, error) {
			return s.loop.PollPath(p, d, cb)
		})
}
