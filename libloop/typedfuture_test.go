// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTypedFutureResultAndError(t *testing.T) {
	l := newTestLoop(t)
	tf, err := NewTypedFuture[string](l)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Release()
	if _, err := tf.Result(); err != ESTATE {
		t.Fatalf("pending Result err = %v, want ESTATE", err)
	}
	l.CallSoon(func() { tf.SetResult("hello") })
	v, err := Run(context.Background(), tf)
	if err != nil || v != "hello" {
		t.Fatalf("Run = %q, %v", v, err)
	}
	if tf.SetResult("again") != ESTATE {
		t.Fatal("SetResult on a done future succeeded")
	}
	if v, _ := tf.Result(); v != "hello" {
		t.Fatalf("a refused SetResult changed the value to %q", v)
	}

	// The Go error comes back as is (errors.Is/As see it).
	sentinel := errors.New("no such row")
	ef, _ := NewTypedFuture[int](l)
	defer ef.Release()
	ef.SetError(sentinel)
	if _, err := ef.Result(); !errors.Is(err, sentinel) {
		t.Fatalf("Result err = %v, want the sentinel", err)
	}
	if code, _, _, _ := ef.Future().Exception(); code != int(EINVAL) {
		t.Fatalf("untyped code %d, want EINVAL", code)
	}
	if ef.SetError(nil) != EINVAL {
		t.Fatal("SetError(nil) accepted")
	}
}

// Go runs on the executor and returns a typed value; a Go error keeps its
// identity; cancelling the future cancels the func's context.
func TestGoOnExecutor(t *testing.T) {
	checkNoGoroutineLeak(t)
	l := newTestLoop(t)
	tf, err := Go(context.Background(), l, func(context.Context) ([]int, error) { return []int{1, 2, 3}, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Release()
	v, err := Run(context.Background(), tf)
	if err != nil || len(v) != 3 || v[2] != 3 {
		t.Fatalf("Run = %v, %v", v, err)
	}

	sentinel := errors.New("boom")
	ef, _ := Go(context.Background(), l, func(context.Context) (int, error) { return 0, sentinel })
	defer ef.Release()
	if _, err := Run(context.Background(), ef); !errors.Is(err, sentinel) {
		t.Fatalf("err = %v, want the func's error", err)
	}

	// A context that ends cancels the future and the func's context.
	funcSawCancel := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	cf, _ := Go(ctx, l, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		close(funcSawCancel)
		return 0, ctx.Err()
	})
	defer cf.Release()
	if _, err := Run(context.Background(), cf); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	select {
	case <-funcSawCancel:
	case <-time.After(5 * time.Second):
		t.Fatal("the func's context was not cancelled")
	}

	// Cancelling the future cancels the func's context too.
	started := make(chan struct{})
	xf, _ := Go(context.Background(), l, func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		return 0, ctx.Err()
	})
	defer xf.Release()
	<-started
	xf.Cancel("")
	if _, err := Run(context.Background(), xf); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want Canceled", err)
	}
	// Let the worker return before the leak check.
	sf, _ := l.ShutdownDefaultExecutor()
	l.RunUntilComplete(sf)
	sf.Release()
}

// Await from another goroutine while the loop runs elsewhere.
func TestAwaitTypedFromGoroutine(t *testing.T) {
	checkNoGoroutineLeak(t)
	l := runningLoop(t)
	got := make(chan *TypedFuture[string], 1)
	l.CallSoonThreadsafe(func() {
		tf, _ := Go(context.Background(), l, func(context.Context) (string, error) { return "from a worker", nil })
		got <- tf
	})
	tf := <-got
	v, err := Await(context.Background(), tf)
	if err != nil || v != "from a worker" {
		t.Fatalf("Await = %q, %v", v, err)
	}
	l.CallSoonThreadsafe(func() { tf.Release(); l.ShutdownDefaultExecutor() })
}

// A typed task awaits a sleep, then returns a value; another raises a Go
// error; Return after the task is done is refused.
func TestTypedTask(t *testing.T) {
	l := newTestLoop(t)
	steps := 0
	tt, err := NewTypedTask(l, func(tk *TypedTask[float64]) {
		steps++
		if steps == 1 {
			tk.SleepDuration(time.Millisecond)
			return
		}
		tk.Return(2.5)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tt.Release()
	v, err := Run(context.Background(), tt.Typed())
	if err != nil || v != 2.5 || steps != 2 {
		t.Fatalf("Run = %v, %v after %d steps", v, err, steps)
	}
	if tt.Return(9) != ESTATE {
		t.Fatal("Return outside a step accepted")
	}
	if v, _ := tt.Result(); v != 2.5 {
		t.Fatalf("value changed to %v", v)
	}

	sentinel := errors.New("bad input")
	et, _ := NewTypedTask(l, func(tk *TypedTask[int]) { tk.Raise(sentinel) })
	defer et.Release()
	if _, err := Run(context.Background(), et.Typed()); !errors.Is(err, sentinel) {
		t.Fatalf("err = %v", err)
	}
	ct, _ := NewTypedTask(l, func(tk *TypedTask[int]) { tk.Raise(context.Canceled) })
	defer ct.Release()
	Run(context.Background(), ct.Typed())
	if ct.State() != Cancelled {
		t.Fatalf("raising context.Canceled left state %v, want cancelled", ct.State())
	}
}
