// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The executor. ll_work_fn is uintptr fn(void *arg, int *err) and runs on
// one of the library's worker threads, which the host's Go runtime has never
// seen: purego's callback machinery adopts the thread for the call. The
// binding's one work trampoline routes by arg, a key into the callback table,
// as the other trampolines do. Each job's entry is freed when it runs; a job
// always runs, even when its loop is closed first (its outcome is dropped),
// so its entry has no owner loop.

var workTramp struct {
	once sync.Once
	p    uintptr
}

// WorkPtr returns the C address of the ll_work_fn trampoline; pass a key
// from RegisterWork as its arg.
func WorkPtr() uintptr {
	workTramp.once.Do(func() { workTramp.p = purego.NewCallback(workTrampoline) })
	return workTramp.p
}

// RegisterWork stores fn for one call through the WorkPtr trampoline and
// returns the key to pass as arg. fn returns a value, or a non-zero code
// that fails the future.
func RegisterWork(fn func() (value uintptr, code int)) uintptr {
	return addEntry(&cbEntry{kind: kindWork, once: true, work: fn})
}

func workTrampoline(arg uintptr, errp unsafe.Pointer) uintptr {
	e := takeEntry(arg, kindWork)
	if e == nil {
		return 0
	}
	v, code := runWork(e.work)
	if code != 0 && errp != nil {
		*(*int32)(errp) = int32(code)
	}
	return v
}

// runWork calls fn; a panic fails the job with EINVAL (it must not unwind
// through the library's frames) and is written to stderr.
func runWork(fn func() (uintptr, int)) (v uintptr, code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "libloop: panic in executor work: %v\n", r)
			v, code = 0, int(EINVAL)
		}
	}()
	return fn()
}

// ll_queue_work (libuv's uv_queue_work) passes one void *arg to two C
// functions: work(arg) on a worker thread, then after(loop, arg) on the loop
// thread. The binding passes one key and two fixed trampolines, the work one
// (void fn(void *arg)) and the after one (an ll_callback of its own, as the
// plain trampoline serves only kindPlain entries). The work half leaves the
// entry in the table; the after half takes it. If the loop is closed first,
// after never runs: Loop.Close and Release then free the entry at once if
// the work has run, else the work trampoline frees it once the work is done
// (the library still runs work queued on a closed loop).

// queuedWork is a QueueWork job's entry: its two halves and where it is.
type queuedWork struct {
	work  func()
	after func(loop uint64)
	loop  uint64 // the loop whose Close/Release drops after (0: none)
	// Under table.mu: the work has run; the loop was closed before after ran.
	workDone, orphaned bool
}

var queueTramps struct {
	once        sync.Once
	work, after uintptr
}

func queueTrampolines() {
	queueTramps.once.Do(func() {
		queueTramps.work = purego.NewCallback(queueWorkTrampoline)
		queueTramps.after = purego.NewCallback(queueAfterTrampoline)
	})
}

// QueueWorkPtr returns the C address of the ll_queue_work_fn trampoline;
// pass it as ll_queue_work's work, QueueAfterPtr as after, and a key from
// RegisterQueueWork as arg.
func QueueWorkPtr() uintptr { queueTrampolines(); return queueTramps.work }

// QueueAfterPtr returns the C address of the trampoline to pass as
// ll_queue_work's after (an ll_callback that serves RegisterQueueWork keys
// only).
func QueueAfterPtr() uintptr { queueTrampolines(); return queueTramps.after }

// RegisterQueueWork stores a job's two halves for the QueueWorkPtr and
// QueueAfterPtr trampolines and returns the key to pass as arg: work runs on
// a worker thread, then after on the loop thread, which frees the entry.
// loop names the loop whose Loop.Close or Release frees the entry if after
// never runs; with 0 (or a loop closed by raw calls) free it with Unregister,
// but only once the work has run (an unregistered job's work is skipped).
func RegisterQueueWork(loop uint64, work func(), after func(loop uint64)) uintptr {
	return addEntry(&cbEntry{kind: kindQueueWork, once: true,
		queue: &queuedWork{work: work, after: after, loop: loop}})
}

func queueWorkTrampoline(arg uintptr) {
	table.mu.Lock()
	e := table.m[arg]
	table.mu.Unlock()
	if e == nil || e.kind != kindQueueWork {
		return
	}
	runQueuedWork(e.queue.work)
	table.mu.Lock()
	e.queue.workDone = true
	if e.queue.orphaned && table.m[arg] == e {
		delete(table.m, arg) // the loop closed: after will never run
	}
	table.mu.Unlock()
}

func queueAfterTrampoline(loop uint64, arg uintptr) {
	if e := takeEntry(arg, kindQueueWork); e != nil {
		guard(loop, func() { e.queue.after(loop) })
	}
}

// runQueuedWork calls fn; a panic must not unwind through the library's
// frames: it is written to stderr, and after still runs.
func runQueuedWork(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "libloop: panic in queued work: %v\n", r)
		}
	}()
	fn()
}

// QueueWork is libuv's uv_queue_work (ll_queue_work): work runs on a worker
// thread of the loop's default executor, then after runs on the loop
// thread, batched with other callbacks. No future is made: keep the
// outcome in variables work and after share (work must not touch the loop:
// it runs concurrently with it). If the loop is closed before after runs,
// after is never called (the work still runs); the binding frees both
// halves either way. A panic in work is written to stderr and after still
// runs; a panic in after goes to the loop's exception handler. ESTATE after
// ShutdownDefaultExecutor, ECLOSED on a closed loop.
func (l *Loop) QueueWork(work, after func()) error {
	if work == nil || after == nil {
		return EINVAL
	}
	key := RegisterQueueWork(l.id, work, func(uint64) { after() })
	if err := check(l.raw().QueueWork(l.id, QueueWorkPtr(), QueueAfterPtr(), key)); err != nil {
		removeEntry(key)
		return err
	}
	return nil
}

// errorCode maps a Go error to a C error code: an Error is its own code, a
// syscall.Errno its negative errno, anything else EINVAL.
func errorCode(err error) int {
	var e Error
	if errors.As(err, &e) && e != 0 {
		return int(e)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && errno != 0 {
		return -int(errno)
	}
	return int(EINVAL)
}

// RunInExecutor runs fn on a worker thread of the loop's default executor
// and returns a future resolved on the loop thread with fn's value, or
// failed with its error's code (an Error as is, a syscall.Errno as -errno,
// any other error as EINVAL). fn must not touch the loop: it runs
// concurrently with it. ESTATE after ShutdownDefaultExecutor.
func (l *Loop) RunInExecutor(fn func() (uintptr, error)) (*Future, error) {
	if fn == nil {
		return nil, EINVAL
	}
	key := RegisterWork(func() (uintptr, int) {
		v, err := fn()
		if err != nil {
			return v, errorCode(err)
		}
		return v, 0
	})
	f, err := l.newFuture(func(out unsafe.Pointer) int32 {
		return l.raw().RunInExecutor(l.id, WorkPtr(), key, out)
	})
	if err != nil {
		removeEntry(key)
	}
	return f, err
}

// SetExecutorWorkers sets how many worker threads the default executor may
// use (1..1024; the default is min(32, ncpu+4)).
func (l *Loop) SetExecutorWorkers(n int) error {
	if n < 1 || n > 1024 {
		return EINVAL
	}
	return check(l.raw().SetExecutorWorkers(l.id, int32(n)))
}

// ShutdownDefaultExecutor stops accepting executor work (RunInExecutor and
// QueueWork then fail with ESTATE) and returns a future that finishes once
// the queued and running jobs are done.
func (l *Loop) ShutdownDefaultExecutor() (*Future, error) {
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().ShutdownDefaultExecutor(l.id, out) })
}
