// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The callback table. purego.NewCallback is limited (~2000 per process) and
// never frees, so the binding makes one C trampoline per callback signature,
// once, and passes a table key as the C void *arg. The trampoline looks the
// key up and calls the Go func. Keys count up from 1 and are never reused, so
// a stale key finds nothing instead of someone else's func.
//
// Signatures sharing a C type share a trampoline: ll_callback is
// fn(uint64 id, void *arg), as are ll_done_callback and ll_step_fn, so future
// and task callbacks register with RegisterCallback as well. A signature of a
// new shape needs one more cbKind, trampoline function and table field:
// ll_work_fn, ll_queue_work's pair (executor.go) and ll_host_run_fn
// (hostqueue.go) have theirs beside the code that uses them. ll_free_fn gets
// no arg at all, so free functions are routed by value instead (free.go).

// cbKind says which trampoline an entry serves.
type cbKind uint8

const (
	kindPlain     cbKind = iota + 1 // fn(uint64 id, void *arg)
	kindIO                          // fn(uint64 loop, int fd, void *arg)
	kindException                   // fn(uint64 loop, const ll_error_context *ctx, void *arg)
	kindWork                        // uintptr fn(void *arg, int *err), on an executor thread
	kindHost                        // int fn(uint64 loop, void *arg)
	kindQueueWork                   // void fn(void *arg) on an executor thread, then fn(uint64 loop, void *arg)
	kindProtocol                    // int fn(uint64 loop, const ll_event *ev, void *arg) (protocol.go)
	kindBatch                       // void fn(uint64 loop, ll_event *evs, size_t n, void *arg) (protocol.go)
	kindFSEvent                     // void fn(uint64 loop, uint64 w, const char *path, int events, int status, void *arg) (fswatch.go)
)

type cbEntry struct {
	kind  cbKind
	once  bool   // dropped when first called
	owner uint64 // loop id whose Close/Release drops the entry (0: none)
	plain func(id uint64)
	io    func(loop uint64, fd int)
	exc   func(loop uint64, ctx ErrorContext)
	work  func() (uintptr, int)
	host  func(loop uint64) bool
	queue *queuedWork // kindQueueWork: the job's two halves and its state
	proto func(loop uint64, ev Event) int32
	batch func(loop uint64, evs EventBatch)
	// handle is the Handle of a scheduled one-shot, dropped with it.
	handle *Handle
	// hook and timer: the Hook or Timer the entry runs, released when its
	// loop closes.
	hook  *Hook
	timer *Timer
	// fsev and fsw: a file-system watcher's callback and the watcher,
	// released when its loop closes (fswatch.go).
	fsev func(FSEvent)
	fsw  *FSWatcher
}

var table = struct {
	mu   sync.Mutex
	next uintptr
	m    map[uintptr]*cbEntry
}{m: make(map[uintptr]*cbEntry)}

func addEntry(e *cbEntry) uintptr {
	table.mu.Lock()
	table.next++
	k := table.next
	table.m[k] = e
	table.mu.Unlock()
	return k
}

// takeEntry returns key's entry if it is of kind k, removing a one-shot.
func takeEntry(key uintptr, k cbKind) *cbEntry {
	table.mu.Lock()
	defer table.mu.Unlock()
	e := table.m[key]
	if e == nil || e.kind != k {
		return nil
	}
	if e.once {
		delete(table.m, key)
	}
	return e
}

func removeEntry(key uintptr) *cbEntry {
	table.mu.Lock()
	e := table.m[key]
	delete(table.m, key)
	table.mu.Unlock()
	return e
}

// dropOwner removes every entry owned by loop and returns them. A queued
// job of the loop (QueueWork) loses its after half: its entry goes now if
// the work has run, else once it has (the work runs even on a closed loop).
func dropOwner(loop uint64) []*cbEntry {
	table.mu.Lock()
	defer table.mu.Unlock()
	var out []*cbEntry
	for k, e := range table.m {
		if q := e.queue; q != nil {
			if q.loop == loop && loop != 0 {
				if q.workDone {
					delete(table.m, k)
				} else {
					q.orphaned = true
				}
			}
			continue
		}
		if e.owner == loop {
			out = append(out, e)
			delete(table.m, k)
		}
	}
	return out
}

// LiveCallbacks returns how many entries the callback table holds, to check
// that a program (or a test) does not leak them.
func LiveCallbacks() int {
	table.mu.Lock()
	defer table.mu.Unlock()
	return len(table.m)
}

var tramps struct {
	once           sync.Once
	plain, io, exc uintptr
}

func trampolines() {
	tramps.once.Do(func() {
		tramps.plain = purego.NewCallback(plainTrampoline)
		tramps.io = purego.NewCallback(ioTrampoline)
		tramps.exc = purego.NewCallback(excTrampoline)
	})
}

// CallbackPtr returns the C address of the binding's ll_callback trampoline
// (also fit for ll_done_callback and ll_step_fn); pass a key from
// RegisterCallback as its arg.
func CallbackPtr() uintptr { trampolines(); return tramps.plain }

// IOCallbackPtr returns the C address of the ll_io_callback trampoline; pass
// a key from RegisterIOCallback as its arg.
func IOCallbackPtr() uintptr { trampolines(); return tramps.io }

// ExceptionHandlerPtr returns the C address of the ll_exception_handler
// trampoline; pass a key from RegisterExceptionHandler as its arg.
func ExceptionHandlerPtr() uintptr { trampolines(); return tramps.exc }

// RegisterCallback stores fn for the CallbackPtr trampoline and returns the
// key to pass as arg. A once entry is freed when first called; otherwise
// free it with Unregister.
func RegisterCallback(fn func(id uint64), once bool) uintptr {
	return addEntry(&cbEntry{kind: kindPlain, once: once, plain: fn})
}

// RegisterIOCallback stores fn for the IOCallbackPtr trampoline; see
// RegisterCallback.
func RegisterIOCallback(fn func(loop uint64, fd int), once bool) uintptr {
	return addEntry(&cbEntry{kind: kindIO, once: once, io: fn})
}

// RegisterExceptionHandler stores fn for the ExceptionHandlerPtr trampoline;
// free it with Unregister.
func RegisterExceptionHandler(fn func(loop uint64, ctx ErrorContext)) uintptr {
	return addEntry(&cbEntry{kind: kindException, exc: fn})
}

// Unregister frees key's entry; it reports whether there was one.
func Unregister(key uintptr) bool { return removeEntry(key) != nil }

func plainTrampoline(id uint64, arg uintptr) {
	if e := takeEntry(arg, kindPlain); e != nil {
		guard(e.reportTo(id), func() { e.plain(id) })
	}
}

// reportTo names the loop whose exception handler hears of a panic: the
// entry's owner, else the id the callback got (a loop id for ll_callback).
func (e *cbEntry) reportTo(id uint64) uint64 {
	if e.owner != 0 {
		return e.owner
	}
	return id
}

func ioTrampoline(loop uint64, fd int32, arg uintptr) {
	if e := takeEntry(arg, kindIO); e != nil {
		guard(loop, func() { e.io(loop, int(fd)) })
	}
}

func excTrampoline(loop uint64, ctx unsafe.Pointer, arg uintptr) {
	if e := takeEntry(arg, kindException); e != nil {
		c := readErrorContext(ctx)
		c.Loop = loop
		guard(loop, func() { e.exc(loop, c) })
	}
}

// guard runs a callback and recovers a panic, which must not unwind through
// the library's C frames: it goes to the loop's Go exception handler if one
// is set, else to stderr.
func guard(id uint64, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprintf("panic in callback: %v", r)
			if l := lookupLoop(id); l != nil {
				if h := l.goHandler(); h != nil && reportPanic(h, ErrorContext{Loop: id, Message: msg}) {
					return
				}
			}
			fmt.Fprintf(os.Stderr, "libloop: %s\n%s", msg, debug.Stack())
		}
	}()
	fn()
}

// reportPanic calls an exception handler for a recovered panic; it reports
// false if the handler panicked in turn.
func reportPanic(h func(ErrorContext), ctx ErrorContext) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "libloop: panic in exception handler: %v\n", r)
		}
	}()
	h(ctx)
	return true
}
