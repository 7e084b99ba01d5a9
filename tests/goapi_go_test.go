// SPDX-License-Identifier: MIT

package tests

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// Go(ctx, loop, fn): typed executor work, as the core's Go. The loop runs
// on a goroutine of its own; Go is called on its thread (onLoop) and the
// typed future waited for from the test's goroutine.

// goOnLoop calls Go on the loop's thread.
func goOnLoop[T any](t *testing.T, l *ll.Loop, ctx context.Context, fn func(context.Context) (T, error)) *ll.TypedFuture[T] {
	t.Helper()
	var tf *ll.TypedFuture[T]
	var err error
	onLoop(t, l, func() { tf, err = ll.Go(ctx, l, fn) })
	if err != nil {
		t.Fatalf("Go: %v", err)
	}
	return tf
}

// A value and an error come back as they were returned, typed; a panic
// fails the future with EINVAL and the loop goes on.
func TestGoAPIGoOutcome(t *testing.T) {
	l, _ := runningLoop(t)
	ctx := context.Background()
	base := ll.LiveTypedValues()
	sum := goOnLoop(t, l, ctx, func(context.Context) ([]int, error) { return []int{1, 2, 3}, nil })
	if v, err := sum.Wait(ctx); err != nil || len(v) != 3 || v[2] != 3 {
		t.Errorf("Go's value = %v, %v; want [1 2 3]", v, err)
	}
	failing := goOnLoop(t, l, ctx, func(context.Context) (string, error) { return "", &codedErr{7} })
	var ce *codedErr
	if _, err := failing.Wait(ctx); !errors.As(err, &ce) || ce.code != 7 {
		t.Errorf("Go's error = %v, want the *codedErr as returned", err)
	}
	panics := goOnLoop(t, l, ctx, func(context.Context) (int, error) { panic("boom") })
	if _, err := panics.Wait(ctx); !errors.Is(err, ll.EINVAL) {
		t.Errorf("Go's panic = %v, want EINVAL", err)
	}
	onLoop(t, l, func() {
		if v, err := sum.Result(); err != nil || len(v) != 3 {
			t.Errorf("Result on the loop thread = %v, %v", v, err)
		}
		sum.Release()
		failing.Release()
		panics.Release()
	})
	liveCallbacksSettled(t, l, -1)
	checkNoTypedLeak(t, base)
}

// fn runs on the loop's executor: with one worker, a second job starts
// only once the first is done; after ShutdownDefaultExecutor, Go is
// ESTATE. Bad input is EINVAL.
func TestGoAPIGoOnTheExecutor(t *testing.T) {
	l, _ := runningLoop(t)
	ctx := context.Background()
	onLoop(t, l, func() {
		if err := l.SetExecutorWorkers(1); err != nil {
			t.Fatal(err)
		}
	})
	var running, most atomic.Int32
	job := func(context.Context) (int, error) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return int(n), nil
	}
	a := goOnLoop(t, l, ctx, job)
	b := goOnLoop(t, l, ctx, job)
	a.Wait(ctx)
	b.Wait(ctx)
	if m := most.Load(); m != 1 {
		t.Errorf("%d jobs ran at once on a one-worker executor", m)
	}
	onLoop(t, l, func() {
		a.Release()
		b.Release()
		//lint:ignore SA1012 a nil context is the bad input checked
		if _, err := ll.Go(nil, l, job); !errors.Is(err, ll.EINVAL) {
			t.Errorf("Go(nil ctx) = %v, want EINVAL", err)
		}
		if _, err := ll.Go[int](ctx, l, nil); !errors.Is(err, ll.EINVAL) {
			t.Errorf("Go(nil fn) = %v, want EINVAL", err)
		}
	})
	var shut *ll.Future
	onLoop(t, l, func() { shut, _ = l.ShutdownDefaultExecutor() })
	shut.Wait(ctx)
	onLoop(t, l, func() {
		shut.Release()
		if _, err := ll.Go(ctx, l, job); !errors.Is(err, ll.ESTATE) {
			t.Errorf("Go after ShutdownDefaultExecutor = %v, want ESTATE", err)
		}
	})
}

// A context that ends fails the future at once with its error, without
// waiting for fn, and cancels fn's context; cancelling the future cancels
// fn's context too.
func TestGoAPIGoContext(t *testing.T) {
	l, _ := runningLoop(t)
	bg := context.Background()
	base := ll.LiveTypedValues()
	sawCancel := make(chan error, 3)
	blocked := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		sawCancel <- ctx.Err()
		return 0, ctx.Err()
	}
	release := make(chan struct{})
	slow := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		sawCancel <- ctx.Err()
		<-release // returns only once the test saw the future end
		return 1, nil
	}
	ctx, cancel := context.WithCancel(bg)
	tf := goOnLoop(t, l, ctx, slow)
	time.Sleep(5 * time.Millisecond)
	cancel()
	if _, err := within(t, func() (int, error) { return tf.Wait(bg) }); !errors.Is(err, context.Canceled) {
		t.Errorf("Go after its context's cancel = %v, want context.Canceled", err)
	}
	close(release)
	if err := waitErr(t, sawCancel); !errors.Is(err, context.Canceled) {
		t.Errorf("fn's context ended with %v, want context.Canceled", err)
	}

	dctx, dcancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer dcancel()
	timed := goOnLoop(t, l, dctx, blocked)
	_, err := within(t, func() (int, error) { return timed.Wait(bg) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Go past its deadline = %v, want context.DeadlineExceeded", err)
	}
	waitErr(t, sawCancel)

	byHand := goOnLoop(t, l, bg, blocked)
	onLoop(t, l, func() { byHand.Cancel("enough") })
	if err := waitErr(t, sawCancel); !errors.Is(err, context.Canceled) {
		t.Errorf("fn's context after the future's cancel ended with %v, want context.Canceled", err)
	}
	if _, err := within(t, func() (int, error) { return byHand.Wait(bg) }); !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled future = %v", err)
	}
	onLoop(t, l, func() {
		tf.Release()
		timed.Release()
		byHand.Release()
	})
	liveCallbacksSettled(t, l, -1)
	checkNoTypedLeak(t, base)
}

func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("fn's context was not cancelled")
		return nil
	}
}

// Many jobs, released: the typed-value table and the callback table come
// back to their size, and no goroutine is left once the loop is closed.
func TestGoAPIGoNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	l, stop := runningLoop(t)
	ctx := context.Background()
	base := ll.LiveTypedValues()
	cbBase := liveCallbacksSettled(t, l, -1)
	for i := range 200 {
		jctx, cancel := context.WithCancel(ctx)
		tf := goOnLoop(t, l, jctx, func(context.Context) (int, error) { return i, nil })
		if v, err := tf.Wait(ctx); v != i || err != nil {
			t.Fatalf("job %d = %d, %v", i, v, err)
		}
		cancel()
		onLoop(t, l, func() { tf.Release() })
	}
	if n := liveCallbacksSettled(t, l, cbBase); n > cbBase {
		t.Errorf("%d callback entries left after 200 Go jobs", n-cbBase)
	}
	checkNoTypedLeak(t, base)
	stop()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the loop closed, %d before", n, before)
	}
}
