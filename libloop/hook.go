// SPDX-License-Identifier: MIT

package libloop

import "fmt"

// Hooks are libuv's prepare, check and idle handles: callbacks a host that
// embeds the loop runs around the poll of every iteration (to flush its own
// queues before the loop may block, to look at what the poll brought, or to
// keep the loop spinning while it has background work).

// HookKind says when a Hook runs; the values are the C API's LL_HOOK_*.
type HookKind int

const (
	// HookPrepare runs in every iteration, just before the poll.
	HookPrepare HookKind = 1
	// HookCheck runs in every iteration, just after the poll, before the
	// callbacks the poll made ready (and the due timers) run.
	HookCheck HookKind = 2
	// HookIdle runs in every iteration before the prepare hooks, and while
	// one is active the poll does not block (libuv's idle handle).
	HookIdle HookKind = 3
)

// Hook is one prepare, check or idle callback, active from AddHook until
// Cancel.
type Hook struct {
	loop   *Loop
	kind   HookKind
	gofn   func()
	call   HostCall
	active bool
	unrefd bool // does not keep the loop alive (refs.go)
	// Tag is the host's id for this hook.
	Tag uint64
}

// hookState is the loop's hooks, one list per kind (index kind-1). A list
// is replaced, never changed in place, when a hook goes, so an iteration
// that runs a list is not disturbed by a hook that cancels itself or
// another; one added meanwhile runs from the next iteration on.
type hookState struct {
	lists [3][]*Hook
	// n counts active hooks of every kind: the iteration looks at hooks
	// only when it is not 0 (a load and a branch, twice, when none is used).
	n    int
	idle int // active idle hooks: the poll does not block
}

// AddHook adds a hook that calls fn; it is active until Cancel. EINVAL for
// an unknown kind or a nil fn, ECLOSED on a closed loop.
func (l *Loop) AddHook(kind HookKind, fn func()) (*Hook, error) {
	if fn == nil {
		return nil, EINVAL
	}
	return l.addHook(&Hook{kind: kind, gofn: fn})
}

// AddHookHost adds a hook that runs a host call (through the Host, as a
// batch of one); it is active until Cancel.
func (l *Loop) AddHookHost(kind HookKind, c HostCall) (*Hook, error) {
	if c.Fn == 0 || l.host == nil {
		return nil, EINVAL
	}
	return l.addHook(&Hook{kind: kind, call: c})
}

func (l *Loop) addHook(h *Hook) (*Hook, error) {
	if h.kind < HookPrepare || h.kind > HookIdle {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	h.loop, h.active = l, true
	i := h.kind - 1
	l.hooks.lists[i] = append(l.hooks.lists[i], h)
	l.hooks.n++
	if h.kind == HookIdle {
		l.hooks.idle++
	}
	// A chain (chain.go) runs iterations in the host without the hooks:
	// none runs from now until the end of this run (allowChain checks
	// for hooks at the start of the next).
	l.chain.allowed = false
	l.changed()
	return h, nil
}

// Cancel deactivates the hook: it does not run again, not even later in
// the iteration that is running it. Cancelling twice does nothing.
func (h *Hook) Cancel() {
	if !h.active {
		return
	}
	h.active = false
	l := h.loop
	i := h.kind - 1
	old := l.hooks.lists[i]
	list := make([]*Hook, 0, len(old)-1)
	for _, o := range old {
		if o != h {
			list = append(list, o)
		}
	}
	l.hooks.lists[i] = list
	l.hooks.n--
	if h.kind == HookIdle {
		l.hooks.idle--
	}
	if h.unrefd {
		l.refs.quietHooks--
	}
}

// Active reports whether the hook is active (added and not cancelled).
func (h *Hook) Active() bool { return h.active }

// Kind is the hook's kind.
func (h *Hook) Kind() HookKind { return h.kind }

// dropHooks cancels every hook (Close).
func (l *Loop) dropHooks() {
	for i := range l.hooks.lists {
		for _, h := range l.hooks.lists[i] {
			h.active = false
		}
		l.hooks.lists[i] = nil
	}
	l.hooks.n, l.hooks.idle = 0, 0
	l.refs.quietHooks = 0
}

// beforePoll runs the idle hooks, then the prepare hooks, and reports
// whether an idle hook is active (the poll must not block). Called only
// while some hook is active.
func (l *Loop) beforePoll() bool {
	l.runHooks(HookIdle)
	l.runHooks(HookPrepare)
	return l.hooks.idle > 0
}

// runHooks runs the active hooks of one kind, in the order they were added.
func (l *Loop) runHooks(kind HookKind) {
	for _, h := range l.hooks.lists[kind-1] {
		if h.active {
			l.runHook(h)
		}
	}
}

// runHook runs one hook: a Go func with a panic reported to the exception
// handler (as a callback's), or a host call as a batch of one.
func (l *Loop) runHook(h *Hook) {
	if h.gofn == nil {
		buf := l.host.Buffer(1)
		buf[0] = h.call
		l.host.Run(l, 1)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			l.CallExceptionHandler(&ErrorContext{
				Message: fmt.Sprintf("Exception in hook: %v", r),
				Code:    int(EINVAL),
			})
		}
	}()
	h.gofn()
}
