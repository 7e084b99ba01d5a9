// SPDX-License-Identifier: MIT

package libloop

import (
	"time"
	"unsafe"
)

// asyncio's helpers: run_until_complete, sleep, gather, wait_for and run.

// RunUntilComplete runs the loop until f is done (ll_loop_run_until_complete)
// and returns nil whatever f's outcome (read it with f.Result); ESTOPPED if
// Stop ended the run first (also when Stop was called before), EINVAL for a
// future of another loop.
func (l *Loop) RunUntilComplete(f *Future) error {
	if f == nil {
		return EINVAL
	}
	return check(l.raw().RunUntilComplete(l.id, f.id))
}

// Sleep returns a future that finishes with value 0 after d; cancelling it
// cancels its timer (ll_sleep). With d <= 0 it is finished already, so a
// task awaiting it resumes in the next iteration (asyncio.sleep(0)).
func (l *Loop) Sleep(d time.Duration) (*Future, error) { return l.SleepSeconds(d.Seconds()) }

// SleepSeconds is Sleep with the delay in seconds, as the C API takes it
// (NaN and values over ~100 years fail with EINVAL).
func (l *Loop) SleepSeconds(delay float64) (*Future, error) {
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().Sleep(l.id, delay, out) })
}

// Gather returns a future that finishes with the value len(futs) once every
// future in futs is done (read each for its outcome). Without
// returnExceptions it fails as soon as one fails (with that code and
// message) or is cancelled (ECANCELLED). Cancelling it cancels the children,
// then it fails with ECANCELLED (it is never in the Cancelled state, as
// asyncio's gather is not); a gather of it fails with ECANCELLED in turn.
func (l *Loop) Gather(futs []*Future, returnExceptions bool) (*Future, error) {
	ids := make([]uint64, len(futs))
	for i, f := range futs {
		if f == nil {
			return nil, EINVAL
		}
		ids[i] = f.id
	}
	arr, err := NewCIDs(ids)
	if err != nil {
		return nil, err
	}
	defer arr.Free()
	re := int32(0)
	if returnExceptions {
		re = 1
	}
	return l.newFuture(func(out unsafe.Pointer) int32 {
		return l.raw().Gather(l.id, uintptr(len(ids)), arr.Ptr(), re, out)
	})
}

// WaitFor returns a future that takes f's outcome unless timeout passes
// first: then f is cancelled and the returned future fails with ETIMEDOUT
// (ll_wait_for). A timeout <= 0 times out at once. A result value stays
// owned by f.
func (l *Loop) WaitFor(f *Future, timeout time.Duration) (*Future, error) {
	return l.WaitForSeconds(f, timeout.Seconds())
}

// WaitForSeconds is WaitFor with the timeout in seconds; math.Inf(1) never
// times out, NaN fails with EINVAL.
func (l *Loop) WaitForSeconds(f *Future, timeout float64) (*Future, error) {
	if f == nil {
		return nil, EINVAL
	}
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().WaitFor(l.id, f.id, timeout, out) })
}

// Run is asyncio.run (ll_run): it creates a loop, runs a task of main to
// completion, cancels the tasks left, shuts the executor down and closes the
// loop. It returns the task's value, whose ownership passes to the caller:
// a free func given to Return for it is forgotten, never called. The error
// is the task's code (ECANCELLED if it was cancelled), or ERUNNING when a
// loop already runs on this thread.
//
// The loop Run creates has no Loop value: main's Task has a nil Loop, so
// main can await, yield, sleep, return and raise but cannot make futures on
// it through the binding (its LoopID gives the loop's id for raw calls).
func Run(main func(*Task)) (uintptr, error) {
	lib, err := Open()
	if err != nil {
		return 0, err
	}
	return lib.Run(main)
}

// Run is the package-level Run on this library.
func (lib *Lib) Run(main func(*Task)) (uintptr, error) {
	if main == nil {
		return 0, EINVAL
	}
	t := &Task{step: main}
	t.Future = Future{lib: lib, task: t}
	t.stepKey = addEntry(&cbEntry{kind: kindPlain, plain: t.runStep})
	defer removeEntry(t.stepKey)
	v, err := outCall(func(out unsafe.Pointer) int32 { return lib.Raw.Run(CallbackPtr(), t.stepKey, out) })
	if err != nil {
		return 0, err
	}
	if t.ret != nil {
		dropFree(t.retVal, t.ret)
	}
	return uintptr(v), nil
}
