// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"syscall"

	"github.com/ebitengine/purego"
)

// References, ll_loop_run and ll_loop_walk (libuv's uv_ref, uv_run and
// uv_walk): what keeps a loop alive is the header's ll_loop_run.

// Walk kinds (LL_KIND_*): what the id handed to a Walk func names.
const (
	KindHandle    int32 = 1 // LL_KIND_HANDLE: a pending CallLater/CallAt handle
	KindTimer     int32 = 2 // LL_KIND_TIMER: an armed repeating Timer
	KindTransport int32 = 3 // LL_KIND_TRANSPORT: a transport not yet lost
	KindServer    int32 = 4 // LL_KIND_SERVER: a server not closed
	KindProcess   int32 = 5 // LL_KIND_PROCESS: a process that has not exited
	KindSignal    int32 = 6 // LL_KIND_SIGNAL: a signal handler (SignalHandlerID)
	KindHook      int32 = 7 // LL_KIND_HOOK: an active Hook
	KindFSWatch   int32 = 8 // LL_KIND_FS_WATCH: a file system watcher
)

// IDer is any object of the binding with an id (Handle, Timer, Hook,
// Transport, Server, Process, ...).
type IDer interface{ ID() uint64 }

// Run runs the loop as libuv's uv_run (ll_loop_run): RunModeDefault until
// nothing referenced is left or Stop; RunModeOnce and RunModeNowait one
// iteration. A loop with nothing referenced runs no iteration. alive
// reports whether referenced work is left (RunModeDefault: only after a
// Stop).
func (l *Loop) Run(mode int32) (alive bool, err error) {
	rc := l.raw().LoopRun(l.id, mode)
	if rc < 0 {
		return false, Error(rc)
	}
	return rc == 1, nil
}

// Ref makes o keep the loop alive again (ll_ref).
func (l *Loop) Ref(o IDer) error { return check(l.raw().Ref(o.ID())) }

// Unref makes o stop keeping the loop alive (ll_unref); it still works.
func (l *Loop) Unref(o IDer) error { return check(l.raw().Unref(o.ID())) }

// HasRef reports whether o keeps the loop alive (ll_has_ref).
func (l *Loop) HasRef(o IDer) (bool, error) {
	rc := l.raw().HasRef(o.ID())
	if rc < 0 {
		return false, Error(rc)
	}
	return rc == 1, nil
}

// ID is a bare id as an IDer, for Ref, Unref and HasRef (ids from Walk,
// SignalHandlerID).
type ID uint64

// ID returns the id.
func (i ID) ID() uint64 { return uint64(i) }

// SignalHandlerID returns the id of sig's handler on this loop (0 if it
// has none): for Ref, Unref and HasRef, and the id Walk lists.
func (l *Loop) SignalHandlerID(sig syscall.Signal) uint64 {
	signalKeys.mu.Lock()
	defer signalKeys.mu.Unlock()
	return signalKeys.ids[l.id][sig]
}

// walks routes the walk trampoline's arg to the running walk's func.
var walks = struct {
	once sync.Once
	p    uintptr
	mu   sync.Mutex
	next uintptr
	m    map[uintptr]func(id uint64, kind int32) bool
}{m: make(map[uintptr]func(uint64, int32) bool)}

func walkTrampoline(loop, id uint64, kind int32, arg uintptr) int32 {
	walks.mu.Lock()
	fn := walks.m[arg]
	walks.mu.Unlock()
	if fn == nil || !fn(id, kind) {
		return 1
	}
	return 0
}

// Walk calls fn(id, kind) for every live object of the loop the host has
// an id for, until fn returns false (ll_loop_walk). fn may close, cancel
// or release any of them; the walk skips what an earlier call ended.
func (l *Loop) Walk(fn func(id uint64, kind int32) bool) error {
	if fn == nil {
		return EINVAL
	}
	walks.once.Do(func() { walks.p = purego.NewCallback(walkTrampoline) })
	walks.mu.Lock()
	walks.next++
	key := walks.next
	walks.m[key] = fn
	walks.mu.Unlock()
	defer func() {
		walks.mu.Lock()
		delete(walks.m, key)
		walks.mu.Unlock()
	}()
	return check(l.raw().LoopWalk(l.id, walks.p, key))
}
