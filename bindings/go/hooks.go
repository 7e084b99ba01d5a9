// SPDX-License-Identifier: MIT

package libloop

import (
	"time"
	"unsafe"
)

// Hook kinds (LL_HOOK_*), libuv's prepare, check and idle handles.
const (
	HookPrepare int32 = 1 // LL_HOOK_PREPARE: in every iteration, just before the poll
	HookCheck   int32 = 2 // LL_HOOK_CHECK: in every iteration, just after the poll
	HookIdle    int32 = 3 // LL_HOOK_IDLE: in every iteration, first; the poll does not block
)

// Hook is a prepare, check or idle hook (an ll_handle id from
// ll_hook_add), active until Cancel or the loop's Close.
type Hook struct {
	loop *Loop
	id   uint64 // 0 once released
	key  uintptr
}

// AddHook adds a hook that calls fn in every iteration at the moment its
// kind names (ll_hook_add).
func (l *Loop) AddHook(kind int32, fn func()) (*Hook, error) {
	if fn == nil {
		return nil, EINVAL
	}
	h := &Hook{loop: l}
	var err error
	h.key, h.id, err = register(&cbEntry{kind: kindPlain, owner: l.id, hook: h, plain: func(uint64) { fn() }},
		func(cb, key uintptr, out unsafe.Pointer) int32 { return l.raw().HookAdd(l.id, kind, cb, key, out) })
	if err != nil {
		return nil, err
	}
	return h, nil
}

// ID returns the hook's ll_handle id, or 0 once cancelled.
func (h *Hook) ID() uint64 { return h.id }

// Cancel stops the hook and releases its id (ll_release cancels a hook).
// Cancelling twice does nothing.
func (h *Hook) Cancel() error {
	if h.id == 0 {
		return nil
	}
	if err := check(h.loop.raw().Release(h.id)); err != nil {
		return err
	}
	h.id = 0
	removeEntry(h.key)
	return nil
}

// Active reports whether the hook still runs (ll_handle_cancelled).
func (h *Hook) Active() bool {
	return h.id != 0 && h.loop.raw().HandleCancelled(h.id) == 0
}

// release drops the id of a hook whose loop was closed.
func (h *Hook) release() {
	if h.id != 0 {
		h.loop.raw().Release(h.id)
		h.id = 0
	}
}

// NextTimeout is how long the loop's next iteration would let its poll
// block (ll_loop_next_timeout, libuv's uv_backend_timeout), in whole
// milliseconds rounded up: 0 if a callback is ready, -1 if nothing is
// scheduled. With BackendFD, what a host that polls for the loop needs.
func (l *Loop) NextTimeout() (time.Duration, error) {
	ms := l.raw().LoopNextTimeout(l.id)
	if ms == -1 {
		return -1, nil
	}
	if err := check(ms); err != nil {
		return 0, err
	}
	return time.Duration(ms) * time.Millisecond, nil
}
