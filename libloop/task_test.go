// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// The seed trace: asyncio's "Hello ... World" task, event by event.
func TestHelloWorldTrace(t *testing.T) {
	l := newTestLoop(t)
	var trace []string
	var sleepFut *Future
	task, _ := l.NewTask(func(tk *Task) {
		if tk.Awaited() == nil {
			trace = append(trace, "step1: Hello")
			sleepFut, _ = l.Sleep(0.001)
			sleepFut.AddDoneCallback(func(*Future) { trace = append(trace, "sleep done") })
			tk.Await(sleepFut)
			return
		}
		trace = append(trace, "step2: World")
		tk.Return(7, nil)
	})
	task.AddDoneCallback(func(*Future) { trace = append(trace, "task done") })
	if err := l.RunUntilComplete(&task.Future); err != nil {
		t.Fatal(err)
	}
	trace = append(trace, "loop stopped")
	got := strings.Join(trace, ", ")
	// Done callbacks run in registration order: ours was added before the
	// task's wakeup, so it runs first.
	want := "step1: Hello, sleep done, step2: World, task done, loop stopped"
	if got != want {
		t.Fatalf("trace\n got: %s\nwant: %s", got, want)
	}
	if v, err := task.Result(); v != 7 || err != nil {
		t.Fatalf("result %v %v", v, err)
	}
}

func TestCancelWhileAwaitingCancelsAwaited(t *testing.T) {
	l := newTestLoop(t)
	inner, _ := l.NewFuture()
	steps := 0
	task, _ := l.NewTask(func(tk *Task) {
		steps++
		if steps == 1 {
			tk.Await(inner)
			return
		}
		if !tk.MustRaiseCancel() {
			t.Error("second step should raise cancel")
		}
		tk.Raise(int(ECANCELLED), "", 0, nil)
	})
	l.RunOnce(true)
	if !task.Cancel("stop") || inner.State() != Cancelled || inner.CancelMessage() != "stop" {
		t.Fatalf("inner state %v msg %q", inner.State(), inner.CancelMessage())
	}
	l.RunUntilComplete(&task.Future)
	if task.State() != Cancelled || task.Cancelling() != 1 {
		t.Fatalf("task state %v cancelling %d", task.State(), task.Cancelling())
	}
}

func TestCancelBeforeStepAndCatch(t *testing.T) {
	l := newTestLoop(t)
	task, _ := l.NewTask(func(tk *Task) {
		if tk.MustRaiseCancel() {
			tk.Uncancel()
			tk.Return(42, nil) // caught the cancellation
			return
		}
		tk.Return(1, nil)
	})
	task.Cancel("")
	l.RunUntilComplete(&task.Future)
	if v, err := task.Result(); err != nil || v != 42 {
		t.Fatalf("caught cancel: %v %v", v, err)
	}
	if task.Cancelling() != 0 {
		t.Fatal("uncancel did not count down")
	}
}

func TestCancelDuringStepThenReturnEndsCancelled(t *testing.T) {
	l := newTestLoop(t)
	freed := 0
	var task *Task
	task, _ = l.NewTask(func(tk *Task) {
		tk.Cancel("late")
		tk.Return(5, func(uintptr) { freed++ })
	})
	l.RunUntilComplete(&task.Future)
	if task.State() != Cancelled || freed != 1 {
		t.Fatalf("state %v freed %d", task.State(), freed)
	}
}

func TestAwaitSelfAndStepWithoutOutcomeFail(t *testing.T) {
	l := newTestLoop(t)
	var self *Task
	self, _ = l.NewTask(func(tk *Task) {
		if err := tk.Await(&tk.Future); err != ESTATE {
			t.Errorf("await self: %v", err)
		}
	})
	lazy, _ := l.NewTask(func(tk *Task) {})
	l.RunUntilComplete(&lazy.Future)
	if _, err := self.Result(); err != ESTATE {
		t.Fatalf("await self result %v", err)
	}
	if _, err := lazy.Result(); err != ESTATE {
		t.Fatalf("no outcome result %v", err)
	}
}

func TestFutureCallbacksOrderAndRemove(t *testing.T) {
	l := newTestLoop(t)
	f, _ := l.NewFuture()
	var got []int
	for i := 0; i < 3; i++ {
		i := i
		f.AddDoneCallback(func(*Future) { got = append(got, i) })
	}
	tok := f.AddDoneCallback(func(*Future) { got = append(got, 99) })
	if f.RemoveDoneCallbackToken(tok) != 1 {
		t.Fatal("remove")
	}
	f.SetResult(1, nil)
	if f.SetResult(2, nil) != ESTATE || f.Cancel("") {
		t.Fatal("double set/cancel after done")
	}
	if len(got) != 0 {
		t.Fatal("callbacks ran synchronously")
	}
	l.RunOnce(true)
	f.AddDoneCallback(func(*Future) { got = append(got, 3) })
	l.RunOnce(true)
	if fmt.Sprint(got) != "[0 1 2 3]" {
		t.Fatalf("order %v", got)
	}
}

func TestFreeExactlyOnceAndNeverRetrieved(t *testing.T) {
	l := newTestLoop(t)
	var reports []string
	l.SetExceptionHandler(func(c *ErrorContext) { reports = append(reports, c.Message) })
	freed := 0
	f, _ := l.NewFuture()
	f.SetException(-5, "boom", 9, func(v uintptr) {
		if v == 9 {
			freed++
		}
	})
	f.Release()
	if freed != 1 || len(reports) != 1 || !strings.Contains(reports[0], "never retrieved") {
		t.Fatalf("freed %d reports %v", freed, reports)
	}
	g, _ := l.NewFuture()
	g.SetException(-5, "seen", 0, nil)
	g.Exception()
	g.Release()
	if len(reports) != 1 {
		t.Fatal("retrieved exception reported")
	}
}

func TestGatherAndWaitFor(t *testing.T) {
	l := newTestLoop(t)
	a, _ := l.Sleep(0.001)
	b, _ := l.Sleep(0.002)
	g, _ := l.Gather([]*Future{a, b}, false)
	l.RunUntilComplete(g)
	if v, err := g.Result(); v != 2 || err != nil {
		t.Fatalf("gather %v %v", v, err)
	}
	c, _ := l.NewFuture()
	d, _ := l.NewFuture()
	g2, _ := l.Gather([]*Future{c, d}, false)
	c.SetException(-7, "bad", 0, nil)
	l.RunUntilComplete(g2)
	if _, err := g2.Result(); err != Errno(-7) {
		t.Fatalf("gather failure %v", err)
	}
	slow, _ := l.Sleep(10)
	w, _ := l.WaitFor(slow, 0.005)
	l.RunUntilComplete(w)
	if _, err := w.Result(); err != ETIMEDOUT || slow.State() != Cancelled {
		t.Fatalf("wait_for %v slow %v", err, slow.State())
	}
	fast, _ := l.Sleep(0.001)
	w2, _ := l.WaitFor(fast, 5)
	l.RunUntilComplete(w2)
	if _, err := w2.Result(); err != nil {
		t.Fatalf("wait_for fast %v", err)
	}
	e, _ := l.Sleep(10)
	h, _ := l.Sleep(10)
	g3, _ := l.Gather([]*Future{e, h}, false)
	if !g3.Cancel("") {
		t.Fatal("gather cancel")
	}
	l.RunUntilComplete(g3)
	if _, err := g3.Result(); err != ECANCELLED || e.State() != Cancelled {
		t.Fatalf("cancelled gather %v", err)
	}
}

func TestExecutor(t *testing.T) {
	l := newTestLoop(t)
	l.SetExecutorWorkers(4)
	var futs []*Future
	for i := 0; i < 100; i++ {
		i := i
		f, err := l.RunInExecutor(func() (uintptr, int) {
			if i == 50 {
				return 0, -22
			}
			return uintptr(i * 2), 0
		})
		if err != nil {
			t.Fatal(err)
		}
		futs = append(futs, f)
	}
	g, _ := l.Gather(futs, true)
	l.RunUntilComplete(g)
	for i, f := range futs {
		v, err := f.Result()
		if i == 50 {
			if err != Errno(-22) {
				t.Fatalf("job 50 err %v", err)
			}
		} else if err != nil || v != uintptr(i*2) {
			t.Fatalf("job %d: %v %v", i, v, err)
		}
	}
	s, _ := l.ShutdownDefaultExecutor()
	l.RunUntilComplete(s)
	if _, err := l.RunInExecutor(func() (uintptr, int) { return 0, 0 }); err != ESTATE {
		t.Fatalf("after shutdown %v", err)
	}
}

func TestTaskSleepAndYieldOutcomes(t *testing.T) {
	l := newTestLoop(t)
	steps := 0
	var started float64
	task, _ := l.NewTask(func(tk *Task) {
		steps++
		switch steps {
		case 1:
			if err := tk.Sleep(math.NaN()); err != EINVAL {
				t.Errorf("NaN sleep: %v", err)
			}
			started = l.Time()
			if err := tk.Sleep(0.005); err != nil {
				t.Error(err)
			}
			if err := tk.Sleep(0); err != ESTATE {
				t.Errorf("second outcome: %v", err)
			}
		case 2:
			if l.Time()-started < 0.005 {
				t.Error("woke early")
			}
			tk.Sleep(0) // a bare yield
		default:
			tk.Return(3, nil)
		}
	})
	l.RunUntilComplete(&task.Future)
	if v, err := task.Result(); steps != 3 || v != 3 || err != nil {
		t.Fatalf("steps %d result %v %v", steps, v, err)
	}
}

// Closing a loop drops its own holds: futures held only by a pending sleep
// timer, an awaiting task or a gather are disposed once the host lets go.
func TestCloseDisposesWhatOnlyTheLoopHeld(t *testing.T) {
	l, _ := New()
	disposed := map[string]bool{}
	names := map[*Future]string{}
	watchDisposal(l, func(f *Future) { disposed[names[f]] = true })
	watch := func(name string, f *Future) { names[f] = name }
	sleep, _ := l.Sleep(3600)
	watch("sleep", sleep)
	awaited, _ := l.NewFuture()
	watch("awaited", awaited)
	task, _ := l.NewTask(func(tk *Task) { tk.Await(awaited) })
	watch("task", &task.Future)
	child, _ := l.NewFuture()
	watch("child", child)
	g, _ := l.Gather([]*Future{child}, false)
	watch("gather", g)
	l.RunOnce(true) // the task now awaits
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*Future{sleep, awaited, &task.Future, child, g} {
		f.Release() // the host's reference: the last one left
	}
	for _, name := range []string{"sleep", "awaited", "task", "child", "gather"} {
		if !disposed[name] {
			t.Errorf("%s not disposed after close and release", name)
		}
	}
	if l.live != nil {
		t.Error("live list not empty")
	}
}
