// SPDX-License-Identifier: MIT

package tests

import (
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// Tasks: coroutines as step functions, asyncio's Task.__step.

// The seed trace of asyncio's "Hello ... World": a task steps, awaits a
// 1 ms sleep, the timer finishes the sleep (its done callbacks run in
// registration order: the host's, then the task's wakeup), the task steps
// again and returns, its done callback runs, and run_until_complete returns.
func TestHelloWorldTrace(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		var sleepID, taskID uint64
		steps := 0
		stepFn, stepArg := ll.CallbackPtr(), ll.RegisterCallback(func(task uint64) {
			steps++
			out := newOut(t)
			expect(t, "ll_current_task", raw.CurrentTask(loop, out.Ptr()), 0)
			if out.Value() != task || task != taskID {
				t.Errorf("current task %#x in the step of %#x (task %#x)", out.Value(), task, taskID)
			}
			expect(t, "ll_task_awaited", raw.TaskAwaited(task, out.Ptr()), 0)
			switch steps {
			case 1:
				r.add("step1: Hello")()
				if out.Value() != 0 {
					t.Errorf("first step woken by %#x", out.Value())
				}
				expect(t, "ll_sleep", raw.Sleep(loop, 0.001, out.Ptr()), 0)
				sleepID = out.Value()
				f, a := cb(func(id uint64) {
					r.add("sleep done")()
					if rc, v := result(t, id); rc != 0 || v != 0 {
						t.Errorf("sleep result %s %d", codeString(rc), v)
					}
				})
				expect(t, "add_done_callback(sleep)", raw.FutureAddDoneCallback(sleepID, f, a), 0)
				expect(t, "ll_task_await", raw.TaskAwait(task, sleepID), 0)
				expect(t, "ll_release(sleep)", raw.Release(sleepID), 0) // the task keeps it
			case 2:
				r.add("step2: World")()
				if out.Value() != sleepID {
					t.Errorf("second step woken by %#x, want the sleep %#x", out.Value(), sleepID)
				}
				expect(t, "ll_task_must_raise_cancel", raw.TaskMustRaiseCancel(task), 0)
				expect(t, "ll_task_return", raw.TaskReturn(task, 99, 0), 0)
			default:
				t.Errorf("step %d", steps)
			}
		}, false)
		defer ll.Unregister(stepArg)
		out := newOut(t)
		expect(t, "ll_task_new", raw.TaskNew(loop, stepFn, stepArg, out.Ptr()), 0)
		taskID = out.Value()
		defer raw.Release(taskID)
		f, a := cb(func(id uint64) { r.add("task done")() })
		expect(t, "add_done_callback(task)", raw.FutureAddDoneCallback(taskID, f, a), 0)
		if steps != 0 {
			t.Fatal("ll_task_new ran the first step synchronously")
		}
		start := time.Now()
		expect(t, "ll_loop_run_until_complete", raw.RunUntilComplete(loop, taskID), 0)
		r.add("run_until_complete returned")()
		if !r.equal("step1: Hello", "sleep done", "step2: World", "task done", "run_until_complete returned") {
			t.Fatalf("trace %v", r)
		}
		if el := time.Since(start); el < time.Millisecond {
			t.Errorf("finished after %v, before the 1 ms sleep", el)
		}
		if rc, v := result(t, taskID); rc != 0 || v != 99 {
			t.Errorf("task result %s %d", codeString(rc), v)
		}
		expect(t, "ll_current_task outside a step", raw.CurrentTask(loop, out.Ptr()), 0)
		if out.Value() != 0 {
			t.Errorf("current task outside a step = %#x", out.Value())
		}
		expect(t, "ll_state(released sleep after the task is done)", raw.FutureState(sleepID), cEBADHANDLE)
		assertAlive(t, loop)
	})
}

// stepper builds a task whose steps are the given funcs in order; a step
// beyond them fails the test.
func stepper(t *testing.T, l *ll.Loop, steps ...func(*ll.Task)) *ll.Task {
	n := 0
	return newTask(t, l, func(tk *ll.Task) {
		if n >= len(steps) {
			t.Errorf("unexpected step %d", n+1)
			tk.Return(0, nil)
			return
		}
		n++
		steps[n-1](tk)
	})
}

// Cancelling a task that awaits a future cancels that future; the next step
// must raise the cancellation and, raising LL_ECANCELLED, ends cancelled.
func TestTaskCancelWhileAwaiting(t *testing.T) {
	l := newLoop(t)
	inner := newFuture(t, l)
	var mustRaise bool
	var woke *ll.Future
	task := stepper(t, l,
		func(tk *ll.Task) { expectErr(t, "Await", tk.Await(inner), 0) },
		func(tk *ll.Task) {
			mustRaise = tk.MustRaiseCancel()
			woke, _ = tk.Awaited()
			expectErr(t, "Raise(ECANCELLED)", tk.Raise(cECANCELLED, "", 0, nil), 0)
		})
	l.RunOnce(true)
	if ok, err := task.Cancel("shutting down"); !ok || err != nil {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if st, _ := inner.State(); st != ll.Cancelled {
		t.Fatalf("the awaited future is %v, want cancelled", st)
	}
	if n, _ := task.Cancelling(); n != 1 {
		t.Fatalf("cancelling = %d", n)
	}
	runUntil(t, l, &task.Future, time.Second)
	if !mustRaise || woke != inner {
		t.Fatalf("second step: must_raise_cancel %v, woken by %v (inner %v)", mustRaise, woke, inner)
	}
	if st, _ := task.State(); st != ll.Cancelled {
		t.Fatalf("task state %v, want cancelled", st)
	}
	_, err := task.Result()
	expectErr(t, "Result(cancelled task)", err, cECANCELLED)
	if ok, _ := task.Cancel(""); ok {
		t.Fatal("Cancel on a done task reported true")
	}
	assertAlive(t, l.ID())
}

// Cancelled before its first step: that step must raise cancellation.
func TestTaskCancelBeforeFirstStep(t *testing.T) {
	l := newLoop(t)
	var mustRaise, woken bool
	task := stepper(t, l, func(tk *ll.Task) {
		mustRaise = tk.MustRaiseCancel()
		w, _ := tk.Awaited()
		woken = w != nil
		tk.Raise(cECANCELLED, "", 0, nil)
	})
	if ok, _ := task.Cancel(""); !ok {
		t.Fatal("Cancel of a new task reported false")
	}
	runUntil(t, l, &task.Future, time.Second)
	if !mustRaise || woken {
		t.Fatalf("first step: must_raise_cancel %v, woken by a future %v", mustRaise, woken)
	}
	if st, _ := task.State(); st != ll.Cancelled {
		t.Fatalf("state %v", st)
	}
}

// A task that catches the cancellation and returns is not cancelled; it
// keeps its cancellation count until uncancel.
func TestTaskCatchCancelAndReturn(t *testing.T) {
	l := newLoop(t)
	sleep, _ := l.Sleep(time.Hour)
	defer sleep.Release()
	task := stepper(t, l,
		func(tk *ll.Task) { tk.Await(sleep) },
		func(tk *ll.Task) {
			if !tk.MustRaiseCancel() {
				t.Error("must_raise_cancel false after the awaited sleep was cancelled")
			}
			tk.Return(5, nil) // caught it
		})
	l.RunOnce(true)
	task.Cancel("")
	runUntil(t, l, &task.Future, time.Second)
	if st, _ := task.State(); st != ll.Finished {
		t.Fatalf("state %v, want finished", st)
	}
	if v, err := task.Result(); v != 5 || err != nil {
		t.Fatalf("result %d %v", v, err)
	}
	if st, _ := sleep.State(); st != ll.Cancelled {
		t.Fatalf("awaited sleep %v", st)
	}
	if n, _ := task.Cancelling(); n != 1 {
		t.Fatalf("cancelling after the task caught it = %d, want 1", n)
	}
}

func TestTaskCancellingUncancel(t *testing.T) {
	l := newLoop(t)
	inner := newFuture(t, l)
	task := stepper(t, l,
		func(tk *ll.Task) { tk.Await(inner) },
		func(tk *ll.Task) { tk.Return(0, nil) })
	l.RunOnce(true)
	for i, want := range []int{0, 1, 2} {
		if n, err := task.Cancelling(); n != want || err != nil {
			t.Fatalf("cancelling after %d cancels = %d, %v", i, n, err)
		}
		if ok, _ := task.Cancel(""); !ok {
			t.Fatalf("cancel %d reported false", i)
		}
	}
	for _, want := range []int{2, 1, 0, 0} {
		if n, err := task.Uncancel(); n != want || err != nil {
			t.Fatalf("uncancel = %d, %v; want %d", n, err, want)
		}
	}
	runUntil(t, l, &task.Future, time.Second)
	if ok, _ := task.Cancel(""); ok {
		t.Fatal("cancel of a done task reported true")
	}
	if n, _ := task.Cancelling(); n != 0 {
		t.Fatalf("a done task's cancel counted: %d", n)
	}
}

// A task that cancels itself during a step: the future it then awaits is
// cancelled at once; one that returns instead ends cancelled, its value freed.
func TestTaskCancelDuringStep(t *testing.T) {
	l := newLoop(t)
	inner := newFuture(t, l)
	var must bool
	a := stepper(t, l,
		func(tk *ll.Task) { tk.Cancel(""); tk.Await(inner) },
		func(tk *ll.Task) { must = tk.MustRaiseCancel(); tk.Raise(cECANCELLED, "", 0, nil) })
	runUntil(t, l, &a.Future, time.Second)
	if st, _ := inner.State(); st != ll.Cancelled || !must {
		t.Fatalf("awaited future %v, must_raise_cancel %v", st, must)
	}
	log := &freeLog{}
	b := stepper(t, l, func(tk *ll.Task) { tk.Cancel("bye"); tk.Return(0xb0b, log.fn) })
	runUntil(t, l, &b.Future, time.Second)
	if st, _ := b.State(); st != ll.Cancelled || log.count(0xb0b) != 1 {
		t.Fatalf("state %v, value freed %d times", st, log.count(0xb0b))
	}
}

// A bare yield steps again in the next iteration, woken by no future.
func TestTaskBareYield(t *testing.T) {
	l := newLoop(t)
	steps := 0
	var woken []*ll.Future
	task := newTask(t, l, func(tk *ll.Task) {
		steps++
		w, err := tk.Awaited()
		if err != nil {
			t.Errorf("Awaited: %v", err)
		}
		woken = append(woken, w)
		if steps < 3 {
			expectErr(t, "Yield", tk.Yield(), 0)
		} else {
			tk.Return(uintptr(steps), nil)
		}
	})
	for i := 1; i <= 3; i++ {
		l.RunOnce(true)
		if steps != i {
			t.Fatalf("after %d iterations: %d steps", i, steps)
		}
	}
	if v, err := task.Result(); v != 3 || err != nil {
		t.Fatalf("result %d %v", v, err)
	}
	for i, w := range woken {
		if w != nil {
			t.Fatalf("step %d woken by %v", i+1, w)
		}
	}
}

// Mistakes a step can make fail the task with LL_ESTATE.
func TestTaskStepErrors(t *testing.T) {
	l := newLoop(t)
	other := newLoop(t)
	otherFut := newFuture(t, other)
	failsWith := func(name string, step func(*ll.Task), code int) {
		t.Helper()
		task := stepper(t, l, step)
		runUntil(t, l, &task.Future, time.Second)
		exc, err := task.Exception()
		if err != nil || exc == nil || int(exc.Code) != code {
			t.Errorf("%s: exception %+v, %v; want %s", name, exc, err, codeString(code))
		}
	}
	failsWith("await itself", func(tk *ll.Task) {
		expectErr(t, "Await(itself)", tk.Await(&tk.Future), cESTATE)
	}, cESTATE)
	failsWith("await another loop's future", func(tk *ll.Task) {
		expectErr(t, "Await(other loop)", tk.Await(otherFut), cESTATE)
	}, cESTATE)
	failsWith("no outcome", func(*ll.Task) {}, cESTATE)
	failsWith("raise", func(tk *ll.Task) { tk.Raise(-3, "no such process", 0, nil) }, -3)

	// Two outcomes: the second is refused and the first stands.
	steps := 0
	two := newTask(t, l, func(tk *ll.Task) {
		steps++
		if steps == 1 {
			expectErr(t, "Yield", tk.Yield(), 0)
			expectErr(t, "Return after Yield", tk.Return(1, nil), cESTATE)
			expectErr(t, "Await after Yield", tk.Await(otherFut), cESTATE)
			return
		}
		expectErr(t, "Raise(code 0)", tk.Raise(0, "", 0, nil), cEINVAL)
		expectErr(t, "Return", tk.Return(2, nil), 0)
		expectErr(t, "Yield after Return", tk.Yield(), cESTATE)
		expectErr(t, "Raise after Return", tk.Raise(-3, "", 0, nil), cESTATE)
	})
	runUntil(t, l, &two.Future, time.Second)
	if v, err := two.Result(); v != 2 || err != nil || steps != 2 {
		t.Fatalf("two outcomes: result %d %v after %d steps", v, err, steps)
	}
	// Outside a step every outcome is refused.
	idle := newFuture(t, l)
	waiting := stepper(t, l, func(tk *ll.Task) { tk.Await(idle) })
	l.RunOnce(true)
	expectErr(t, "Yield outside a step", waiting.Yield(), cESTATE)
	expectErr(t, "Return outside a step", waiting.Return(1, nil), cESTATE)
	expectErr(t, "Raise outside a step", waiting.Raise(-3, "", 0, nil), cESTATE)
	expectErr(t, "Await outside a step", waiting.Await(idle), cESTATE)
	_, err := waiting.Awaited()
	expectErr(t, "Awaited outside a step", err, cESTATE)
	if waiting.MustRaiseCancel() {
		t.Error("must_raise_cancel outside a step")
	}
	expectErr(t, "SetResult on a task", waiting.SetResult(1, nil), cESTATE)
	expectErr(t, "SetException on a task", waiting.SetException(-3, "", 0, nil), cESTATE)
	if st, _ := waiting.State(); st != ll.Pending {
		t.Fatalf("refused calls changed the task: %v", st)
	}
	assertAlive(t, l.ID())
}

func TestCurrentAndAllTasks(t *testing.T) {
	l := newLoop(t)
	if cur, err := l.CurrentTask(); cur != nil || err != nil {
		t.Fatalf("current task outside a step: %v %v", cur, err)
	}
	idle := newFuture(t, l)
	var seen *ll.Task
	a := stepper(t, l, func(tk *ll.Task) {
		seen, _ = l.CurrentTask()
		tk.Await(idle)
	}, func(tk *ll.Task) { tk.Return(0, nil) })
	b := stepper(t, l, func(tk *ll.Task) { tk.Return(0, nil) })
	all, err := l.AllTasks()
	if err != nil || len(all) != 2 {
		t.Fatalf("all tasks before running: %d, %v", len(all), err)
	}
	l.RunOnce(true)
	if seen != a {
		t.Fatalf("current task in a's step = %v, want a", seen)
	}
	all, _ = l.AllTasks()
	if len(all) != 1 || all[0] != a {
		t.Fatalf("all tasks with b done: %v", all)
	}
	if !b.Done() {
		t.Fatal("b not done")
	}
	out := newOut(t)
	expect(t, "ll_all_tasks(cap 0)", raw.AllTasks(l.ID(), nil, 0), 1)
	expect(t, "ll_all_tasks(cap 1)", raw.AllTasks(l.ID(), out.Ptr(), 1), 1)
	if out.Value() != a.ID() {
		t.Fatalf("ll_all_tasks wrote %#x, want %#x", out.Value(), a.ID())
	}
	idle.SetResult(0, nil)
	l.RunOnce(true)
	l.RunOnce(true)
	if all, _ := l.AllTasks(); len(all) != 0 {
		t.Fatalf("all tasks after both finished: %d", len(all))
	}
}

// A task's value is freed exactly once, after the host released it.
func TestTaskResultFreedOnce(t *testing.T) {
	l := newLoop(t)
	log := &freeLog{}
	task, _ := l.NewTask(func(tk *ll.Task) { tk.Return(0x7a5c, log.fn) })
	runUntil(t, l, &task.Future, time.Second)
	l.RunOnce(true)
	if len(log.calls()) != 0 {
		t.Fatal("freed while the host holds the task")
	}
	release(t, task)
	l.RunOnce(true)
	if log.count(0x7a5c) != 1 || len(log.calls()) != 1 {
		t.Fatalf("frees %#x", log.calls())
	}
}
