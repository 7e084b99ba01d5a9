// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"time"
	"unsafe"
)

// Task is a libloop task (an ll_task id): a Future that drives a coroutine
// written as a Go step function. The loop calls step(t) on its thread; each
// call advances the coroutine and ends with exactly one of t.Await, t.Yield,
// t.Sleep, t.Return or t.Raise. A step that calls none of them fails the
// task with ESTATE; a step that panics fails it with EINVAL and the panic's
// text (if it had not chosen its outcome yet; otherwise the panic goes to
// the loop's exception handler).
//
// The step is a Go func routed through the binding's fixed trampoline; its
// table entry is freed once the task is done (by a done callback the binding
// adds when it creates the task) or its loop is closed.
type Task struct {
	Future
	step    func(*Task)
	stepKey uintptr
	ret     *freeReg // the free func given to a successful Return
	retVal  uintptr
}

// NewTask creates a task running step and schedules its first step with
// call_soon (ll_task_new). Release the Task when done with it; the loop
// keeps the task alive until it is done.
func (l *Loop) NewTask(step func(*Task)) (*Task, error) {
	if step == nil {
		return nil, EINVAL
	}
	t := &Task{step: step}
	t.Future = Future{lib: l.lib, loop: l, owned: true, task: t}
	t.stepKey = addEntry(&cbEntry{kind: kindPlain, owner: l.id, plain: t.runStep})
	id, err := outCall(func(out unsafe.Pointer) int32 {
		return l.raw().TaskNew(l.id, CallbackPtr(), t.stepKey, out)
	})
	if err != nil {
		removeEntry(t.stepKey)
		return nil, err
	}
	t.id = id
	ownedFutures.Store(id, &t.Future)
	stepKey := t.stepKey
	key := addEntry(&cbEntry{kind: kindPlain, once: true, owner: l.id,
		plain: func(uint64) { removeEntry(stepKey) }})
	if l.raw().FutureAddDoneCallback(id, CallbackPtr(), key) != 0 {
		removeEntry(key) // cannot happen for a live task; the loop's Close frees the step then
	}
	return t, nil
}

// taskFor returns the binding's Task for id, or a borrowed one.
func taskFor(lib *Lib, loop *Loop, id uint64) *Task {
	if v, ok := ownedFutures.Load(id); ok {
		if f := v.(*Future); f.task != nil {
			return f.task
		}
	}
	t := &Task{}
	t.Future = Future{lib: lib, loop: loop, id: id, task: t}
	return t
}

// runStep is the step's trampoline target.
func (t *Task) runStep(id uint64) {
	if t.id == 0 {
		t.id = id // a Run task learns its id at its first step
	}
	defer func() {
		if r := recover(); r != nil {
			if t.Raise(int(EINVAL), fmt.Sprintf("panic in task step: %v", r), 0, nil) != nil {
				panic(r) // the outcome was chosen already: report it as a callback panic
			}
		}
	}()
	t.step(t)
}

// Await suspends the task until f is done, then steps it again (inside a
// step only). Awaiting itself or a future of another loop fails the task
// with ESTATE, and so does a second outcome in one step.
func (t *Task) Await(f *Future) error {
	if f == nil {
		return EINVAL
	}
	return check(t.raw().TaskAwait(t.id, f.id))
}

// Yield steps the task again in the next iteration (a bare yield).
func (t *Task) Yield() error { return check(t.raw().TaskYield(t.id)) }

// Sleep suspends the task for d, then steps it again (inside a step only):
// asyncio's await sleep(d) in one call (ll_task_sleep), with no future for
// the host to hold. A d <= 0 is a bare yield, as Yield. On the next step
// Awaited gives nil; if the task was cancelled meanwhile, MustRaiseCancel
// reports true. ESTATE outside a step or after another outcome.
func (t *Task) Sleep(d time.Duration) error { return t.SleepSeconds(d.Seconds()) }

// SleepSeconds is Sleep with the delay in seconds, as the C API takes it
// (NaN, +Inf and values over ~100 years fail with EINVAL, and the step may
// still choose its outcome).
func (t *Task) SleepSeconds(delay float64) error { return check(t.raw().TaskSleep(t.id, delay)) }

// Return finishes the task with value; free (may be nil) is called once
// with value when the library no longer references it. If the task was
// cancelled during this step it ends cancelled and value is freed at once.
func (t *Task) Return(value uintptr, free func(value uintptr)) error {
	cfn, reg := freeArg(value, free)
	if err := check(t.raw().TaskReturn(t.id, value, cfn)); err != nil {
		undoFree(value, reg)
		return err
	}
	t.ret, t.retVal = reg, value
	return nil
}

// Raise fails the task with code (non-zero), a message and a payload freed
// like a result; code ECANCELLED leaves the task cancelled, as a coroutine
// that lets CancelledError escape.
func (t *Task) Raise(code int, msg string, payload uintptr, free func(payload uintptr)) error {
	cfn, reg := freeArg(payload, free)
	rc := withCString(msg, func(m unsafe.Pointer) int32 {
		return t.raw().TaskRaise(t.id, int32(code), m, payload, cfn)
	})
	if err := check(rc); err != nil {
		undoFree(payload, reg)
		return err
	}
	return nil
}

// Awaited returns the future whose completion woke this step: nil on the
// first step and after Yield (inside a step only; ESTATE otherwise).
func (t *Task) Awaited() (*Future, error) {
	id, err := outCall(func(out unsafe.Pointer) int32 { return t.raw().TaskAwaited(t.id, out) })
	if err != nil {
		return nil, err
	}
	return futureFor(t.lib, t.loop, id), nil
}

// MustRaiseCancel reports whether the step must throw a cancellation into
// its coroutine now: the task was cancelled before this step, or the future
// it awaited ended cancelled (inside a step only).
func (t *Task) MustRaiseCancel() bool { return t.raw().TaskMustRaiseCancel(t.id) == 1 }

// Cancel requests cancellation (asyncio's Task.cancel): the awaited future
// is cancelled if there is one, else the next step must raise cancellation.
// It reports false if the task is already done.
func (t *Task) Cancel(msg string) (bool, error) {
	rc := withCString(msg, func(m unsafe.Pointer) int32 { return t.raw().TaskCancel(t.id, m) })
	if rc < 0 {
		return false, Error(rc)
	}
	return rc == 1, nil
}

// Uncancel decrements the pending cancellation requests (not below 0) and
// returns how many remain.
func (t *Task) Uncancel() (int, error) {
	rc := t.raw().TaskUncancel(t.id)
	if rc < 0 {
		return 0, Error(rc)
	}
	return int(rc), nil
}

// Cancelling returns the number of pending cancellation requests.
func (t *Task) Cancelling() (int, error) {
	rc := t.raw().TaskCancelling(t.id)
	if rc < 0 {
		return 0, Error(rc)
	}
	return int(rc), nil
}

// CurrentTask returns the task whose step is running on the loop, or nil.
func (l *Loop) CurrentTask() (*Task, error) {
	id, err := outCall(func(out unsafe.Pointer) int32 { return l.raw().CurrentTask(l.id, out) })
	if err != nil || id == 0 {
		return nil, err
	}
	return taskFor(l.lib, l, id), nil
}

// AllTasks returns the loop's tasks that are not done, in no set order.
func (l *Loop) AllTasks() ([]*Task, error) {
	n := l.raw().AllTasks(l.id, nil, 0)
	for {
		if n < 0 {
			return nil, Error(n)
		}
		buf, err := NewCBuf(uintptr(n) * 8)
		if err != nil {
			return nil, err
		}
		got := l.raw().AllTasks(l.id, buf.Ptr(), uintptr(n))
		if got > n {
			buf.Free()
			n = got // more tasks than the first call counted: ask again
			continue
		}
		if got < 0 {
			buf.Free()
			return nil, Error(got)
		}
		tasks := make([]*Task, 0, got)
		for _, id := range buf.Uint64s()[:got] {
			tasks = append(tasks, taskFor(l.lib, l, id))
		}
		buf.Free()
		return tasks, nil
	}
}
