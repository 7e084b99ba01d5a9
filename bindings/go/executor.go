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

// ShutdownDefaultExecutor stops accepting executor work (RunInExecutor then
// fails with ESTATE) and returns a future that finishes once the queued and
// running jobs are done.
func (l *Loop) ShutdownDefaultExecutor() (*Future, error) {
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().ShutdownDefaultExecutor(l.id, out) })
}
