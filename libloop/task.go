// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"

	"github.com/libloop/libloop/internal/timers"
)

// stepOutcome records which of Await, Yield, Return or Raise a step called.
type stepOutcome uint8

const (
	stepNone stepOutcome = iota
	stepAwait
	stepYield
	stepReturn
	stepRaise
)

// Task is asyncio's Task for a host coroutine written as a step function:
// the loop calls the step, which advances the coroutine and then calls
// exactly one of Await, Yield, Return or Raise. A task is a Future.
type Task struct {
	Future
	goStep   func(*Task)
	hostStep HostCall

	waiter      *Future // the future being awaited (asyncio's _fut_waiter)
	wokenBy     *Future // the future whose completion started this step
	mustCancel  bool
	raiseCancel bool // this step must throw a cancellation into the coroutine
	numCancels  int
	stepping    bool
	outcome     stepOutcome

	wakeupFn func(*Future)
	stepFn   func()

	// Name is free for the host (asyncio's task name).
	Name string
}

// NewTask creates a task for a Go step function and schedules its first
// step with call_soon. The caller holds one reference (Release); the loop
// holds another until the task is done.
func (l *Loop) NewTask(step func(*Task)) (*Task, error) {
	if step == nil {
		return nil, EINVAL
	}
	return l.newTask(step, HostCall{})
}

// NewTaskHost creates a task whose step is a host function, called as
// fn(t.Tag, arg). Set Tag before the loop runs.
func (l *Loop) NewTaskHost(fn, arg uintptr) (*Task, error) {
	if fn == 0 {
		return nil, EINVAL
	}
	return l.newTask(nil, HostCall{Fn: fn, Arg: arg})
}

func (l *Loop) newTask(step func(*Task), fc HostCall) (*Task, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	t := &Task{goStep: step, hostStep: fc}
	t.Future = Future{loop: l, refs: 1, holds: 1}
	t.role = t
	t.callbacks = t.cbInline[:0]
	l.addLive(&t.Future)
	t.wakeupFn = t.wakeup
	t.stepFn = func() { t.step(nil) }
	if l.tasks == nil {
		l.tasks = make(map[*Task]struct{})
	}
	l.tasks[t] = struct{}{}
	l.CallSoon(t.stepFn)
	return t, nil
}

// CurrentTask returns the task whose step is running, or nil.
func (l *Loop) CurrentTask() *Task { return l.currentTask }

// AllTasks returns the loop's tasks that are not done.
func (l *Loop) AllTasks() []*Task {
	out := make([]*Task, 0, len(l.tasks))
	for t := range l.tasks {
		out = append(out, t)
	}
	return out
}

func (t *Task) wakeup(f *Future) {
	t.step(f)
	f.unhold() // the hold Await took
}

// step is asyncio's Task.__step: run the host step once.
func (t *Task) step(woken *Future) {
	if t.Done() {
		return
	}
	l := t.loop
	// A future that failed with ECANCELLED (a cancelled gather) throws a
	// cancellation in as a cancelled one does: asyncio's result() raises
	// CancelledError for both.
	t.raiseCancel = t.mustCancel || (woken != nil && woken.endedCancelled())
	if woken != nil && woken.state == Finished && woken.excCode == int(ECANCELLED) {
		// The host throws it in without reading it: it is retrieved.
		woken.retrieved = true
	}
	t.mustCancel = false
	t.waiter = nil
	t.wokenBy = woken
	prev := l.currentTask
	l.currentTask = t
	t.stepping, t.outcome = true, stepNone
	func() {
		defer func() {
			if r := recover(); r != nil && !t.Done() {
				t.outcome = stepRaise
				t.Future.SetException(int(EINVAL), fmt.Sprintf("panic in task step: %v", r), 0, nil)
			}
		}()
		if t.goStep != nil {
			t.goStep(t)
		} else if l.host != nil {
			fc := t.hostStep
			fc.ID = t.Tag
			l.host.Call(l, fc)
		}
	}()
	t.stepping = false
	t.wokenBy = nil
	l.currentTask = prev
	if t.outcome == stepNone && !t.Done() {
		t.Future.SetException(int(ESTATE), "task step returned without await, yield, return or raise", 0, nil)
	}
	if t.Done() {
		delete(l.tasks, t)
		t.unhold() // the loop's hold on a pending task
	}
}

// begin checks that a step outcome may be recorded now.
func (t *Task) begin(o stepOutcome) error {
	if !t.stepping || t.outcome != stepNone || t.Done() {
		return ESTATE
	}
	t.outcome = o
	return nil
}

// Await suspends the task until f is done, then steps it again. Awaiting
// itself or a future of another loop fails the task with ESTATE.
func (t *Task) Await(f *Future) error {
	if err := t.begin(stepAwait); err != nil {
		return err
	}
	if f.loop != t.loop || f == &t.Future {
		t.outcome = stepRaise
		msg := "Task cannot await on itself"
		if f.loop != t.loop {
			msg = "Task got Future attached to a different loop"
		}
		t.Future.SetException(int(ESTATE), msg, 0, nil)
		return ESTATE
	}
	f.hold()
	t.waiter = f
	f.AddDoneCallback(t.wakeupFn)
	if t.mustCancel && f.Cancel(t.cancelMsg) {
		t.mustCancel = false
	}
	return nil
}

// Yield steps the task again in the next iteration (a bare yield).
func (t *Task) Yield() error {
	if err := t.begin(stepYield); err != nil {
		return err
	}
	t.loop.CallSoon(t.stepFn)
	return nil
}

// Sleep suspends the task for delay seconds (await asyncio.sleep(delay) in
// one call): a Sleep future is awaited without the host ever holding it. A
// delay <= 0 is a bare yield, as asyncio.sleep(0) is.
func (t *Task) Sleep(delay float64) error {
	if timers.Refused(delay) {
		return EINVAL
	}
	if delay <= 0 {
		return t.Yield()
	}
	if !t.stepping || t.outcome != stepNone || t.Done() {
		return ESTATE
	}
	f, err := t.loop.Sleep(delay)
	if err != nil {
		return err
	}
	err = t.Await(f)
	f.Release() // the task's await holds it now
	return err
}

// Return finishes the task with value. If the task was cancelled during
// this step it ends cancelled instead and value is freed at once.
func (t *Task) Return(value uintptr, free FreeFunc) error {
	if err := t.begin(stepReturn); err != nil {
		return err
	}
	if t.mustCancel {
		t.mustCancel = false
		t.Future.cancelSelf(t.cancelMsg)
		if free != nil {
			free(value)
		}
		return nil
	}
	return t.Future.SetResult(value, free)
}

// Raise fails the task; code ECANCELLED leaves it cancelled, as a coroutine
// that lets CancelledError escape.
func (t *Task) Raise(code int, msg string, payload uintptr, free FreeFunc) error {
	if code == 0 {
		return EINVAL
	}
	if err := t.begin(stepRaise); err != nil {
		return err
	}
	if code == int(ECANCELLED) {
		if msg == "" {
			msg = t.cancelMsg
		}
		t.Future.cancelSelf(msg)
		if free != nil {
			free(payload)
		}
		return nil
	}
	return t.Future.SetException(code, msg, payload, free)
}

// Cancel requests cancellation (asyncio's Task.cancel): the awaited future
// is cancelled if there is one, else the next step throws cancellation in.
// It reports false if the task is already done.
func (t *Task) Cancel(msg string) bool {
	if t.Done() {
		return false
	}
	t.numCancels++
	if t.waiter != nil && t.waiter.Cancel(msg) {
		return true
	}
	t.mustCancel = true
	t.cancelMsg = msg
	return true
}

// cancel makes Task the role of its own Future: Future.Cancel of a task
// is Task.Cancel.
func (t *Task) cancel(_ *Future, msg string) bool { return t.Cancel(msg) }

func (t *Task) disposed(*Future) {}

// Cancelling returns the number of pending cancellation requests.
func (t *Task) Cancelling() int { return t.numCancels }

// Uncancel decrements the cancellation requests (Python 3.11 semantics).
func (t *Task) Uncancel() int {
	if t.numCancels > 0 {
		t.numCancels--
	}
	return t.numCancels
}

// Awaited returns the future whose completion started this step (nil on the
// first step or after a yield). Valid only during the step.
func (t *Task) Awaited() *Future { return t.wokenBy }

// MustRaiseCancel reports whether the host must throw a cancellation into its
// coroutine at this step.
func (t *Task) MustRaiseCancel() bool { return t.stepping && t.raiseCancel }

// Stepping reports whether the task's step is running now.
func (t *Task) Stepping() bool { return t.stepping }
