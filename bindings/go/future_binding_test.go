// SPDX-License-Identifier: MIT

package libloop

import (
	"strings"
	"testing"
	"time"
)

// The binding's bookkeeping for futures and tasks: callback-table entries
// and Go free funcs are freed once they can no longer be called.

func runDone(t *testing.T, l *Loop, f *Future) {
	t.Helper()
	stop, _ := l.CallLater(5*time.Second, func() { l.Stop() })
	if err := l.RunUntilComplete(f); err != nil {
		t.Fatalf("run_until_complete: %v", err)
	}
	stop.Cancel()
}

func TestFutureAndTaskEntriesDoNotLeak(t *testing.T) {
	l := newLoop(t)
	base, baseFrees := LiveCallbacks(), LiveFrees()
	var tasks []*Future
	for range 10 {
		task, err := l.NewTask(func(tk *Task) {
			if w, _ := tk.Awaited(); w == nil {
				s, _ := l.Sleep(0)
				tk.Await(s)
				s.Release()
				return
			}
			tk.Return(1, func(uintptr) {})
		})
		if err != nil {
			t.Fatal(err)
		}
		task.AddDoneCallback(func(*Future) {})
		tasks = append(tasks, &task.Future)
	}
	g, _ := l.Gather(tasks, false)
	runDone(t, l, g)
	l.RunOnce(true) // the binding's cleanup callbacks run one iteration after the tasks end
	if n := LiveCallbacks(); n != base {
		t.Fatalf("%d callback entries after the tasks finished (base %d)", n, base)
	}
	for _, f := range append(tasks, g) {
		f.Release()
	}
	l.RunOnce(true)
	if n := LiveFrees(); n != baseFrees {
		t.Fatalf("%d free funcs after the tasks were released (base %d)", n, baseFrees)
	}
	// Removed done callbacks, refused outcomes and refused work free theirs.
	f, _ := l.NewFuture()
	id, _ := f.AddDoneCallback(func(*Future) { t.Error("removed callback ran") })
	f.RemoveDoneCallback(id)
	f.SetResult(2, func(uintptr) {})
	if f.SetResult(3, func(uintptr) { t.Error("refused value freed") }) != ESTATE {
		t.Fatal("second SetResult accepted")
	}
	sd, _ := l.ShutdownDefaultExecutor()
	if _, err := l.RunInExecutor(func() (uintptr, error) { return 0, nil }); err != ESTATE {
		t.Fatalf("RunInExecutor after shutdown: %v", err)
	}
	f.Release()
	sd.Release()
	if LiveCallbacks() != base || LiveFrees() != baseFrees {
		t.Fatalf("entries %d (base %d), frees %d (base %d)", LiveCallbacks(), base, LiveFrees(), baseFrees)
	}
	// Closing the loop frees the entries of tasks and callbacks that will
	// never run, and its host queue.
	p, _ := l.NewFuture()
	p.AddDoneCallback(func(*Future) {})
	pending, _ := l.NewTask(func(tk *Task) { tk.Await(p) })
	l.RunOnce(true)
	l.SetHostQueue(func() bool { return false })
	if LiveCallbacks() == base {
		t.Fatal("no entries for the pending task")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := LiveCallbacks(); n != base {
		t.Fatalf("%d entries after close (base %d)", n, base)
	}
	pending.Release()
	p.Release()
}

// A Go free func is routed by value: two registrations of one value are
// each called once, in registration order.
func TestFreeRoutedByValue(t *testing.T) {
	l := newLoop(t)
	var got []string
	a, _ := l.NewFuture()
	b, _ := l.NewFuture()
	a.SetResult(0x5, func(v uintptr) { got = append(got, "first") })
	b.SetResult(0x5, func(v uintptr) { got = append(got, "second") })
	b.Release()
	if len(got) != 1 || got[0] != "first" {
		t.Fatalf("after one release: %v", got)
	}
	a.Release()
	if len(got) != 2 || got[1] != "second" {
		t.Fatalf("after both: %v", got)
	}
	forget := RegisterFree(0x6, func(uintptr) { t.Error("forgotten free ran") })
	if !forget() || forget() {
		t.Fatal("forget should report true once")
	}
}

// A step that panics before choosing its outcome fails the task with
// EINVAL and the panic's text; after, the panic goes to the handler.
func TestTaskStepPanic(t *testing.T) {
	l := newLoop(t)
	var reports []ErrorContext
	l.SetExceptionHandler(func(c ErrorContext) { reports = append(reports, c) })
	a, _ := l.NewTask(func(*Task) { panic("step exploded") })
	defer a.Release()
	runDone(t, l, &a.Future)
	exc, err := a.Exception()
	if err != nil || exc == nil || exc.Code != EINVAL || !strings.Contains(exc.Message, "step exploded") {
		t.Fatalf("exception %+v %v", exc, err)
	}
	b, _ := l.NewTask(func(tk *Task) { tk.Return(4, nil); panic("after return") })
	defer b.Release()
	runDone(t, l, &b.Future)
	if v, err := b.Result(); v != 4 || err != nil {
		t.Fatalf("result %d %v", v, err)
	}
	if len(reports) != 1 || !strings.Contains(reports[0].Message, "after return") || reports[0].Loop != l.ID() {
		t.Fatalf("reports %+v", reports)
	}
}

// Done callbacks and Awaited hand back the binding's own Future.
func TestFutureIdentity(t *testing.T) {
	l := newLoop(t)
	f, _ := l.NewFuture()
	defer f.Release()
	var inCallback, awaited *Future
	f.AddDoneCallback(func(g *Future) { inCallback = g })
	task, _ := l.NewTask(func(tk *Task) {
		if w, _ := tk.Awaited(); w != nil {
			awaited = w
			cur, _ := l.CurrentTask()
			if cur != tk {
				t.Error("CurrentTask is not the step's Task")
			}
			tk.Return(0, nil)
			return
		}
		tk.Await(f)
	})
	defer task.Release()
	l.CallSoon(func() { f.SetResult(1, nil) })
	runDone(t, l, &task.Future)
	if inCallback != f || awaited != f || task.Task() != task {
		t.Fatalf("identity: callback %p awaited %p f %p", inCallback, awaited, f)
	}
	if s := Cancelled.String(); s != "cancelled" {
		t.Fatal(s)
	}
}
