// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"

	"github.com/ebitengine/purego"
)

// The host queue (ll_loop_set_host_queue): a binding may keep its own ready
// queue and let the loop call one run function per iteration, before the
// loop's own callbacks, while it reports more work. ll_host_run_fn is
// int fn(uint64 loop, void *arg); one fixed trampoline routes it by arg.

var hostTramp struct {
	once sync.Once
	p    uintptr
}

// HostQueuePtr returns the C address of the ll_host_run_fn trampoline; pass
// a key from RegisterHostQueue as its arg.
func HostQueuePtr() uintptr {
	hostTramp.once.Do(func() { hostTramp.p = purego.NewCallback(hostTrampoline) })
	return hostTramp.p
}

// RegisterHostQueue stores fn for the HostQueuePtr trampoline; free it with
// Unregister once the loop no longer uses it.
func RegisterHostQueue(fn func(loop uint64) (more bool)) uintptr {
	return addEntry(&cbEntry{kind: kindHost, host: fn})
}

func hostTrampoline(loop uint64, arg uintptr) int32 {
	e := takeEntry(arg, kindHost)
	if e == nil {
		return 0
	}
	more := false
	guard(e.reportTo(loop), func() { more = e.host(loop) })
	if more {
		return 1
	}
	return 0
}

// SetHostQueue installs fn as the loop's host queue: each iteration in which
// the host has work, the loop calls fn once, before the callbacks of its own
// queue, and does not block in poll; fn runs the host's ready work and
// reports whether more is ready for the next iteration. Work queued outside
// fn is announced with HostReady. nil removes the host queue. A panic in fn
// is reported to the exception handler and counts as "no more work".
func (l *Loop) SetHostQueue(fn func() (more bool)) error {
	var key, cb uintptr
	if fn != nil {
		key = addEntry(&cbEntry{kind: kindHost, owner: l.id,
			host: func(uint64) bool { return fn() }})
		cb = HostQueuePtr()
	}
	if err := check(l.raw().SetHostQueue(l.id, cb, key)); err != nil {
		if key != 0 {
			removeEntry(key)
		}
		return err
	}
	l.mu.Lock()
	old := l.hostKey
	l.hostKey = key
	l.mu.Unlock()
	if old != 0 {
		removeEntry(old)
	}
	return nil
}

// HostReady tells the loop its host queue has work, so the next iteration
// calls the host queue's fn without blocking (ll_loop_host_ready).
func (l *Loop) HostReady() error { return check(l.raw().HostReady(l.id)) }
