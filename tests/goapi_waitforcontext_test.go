// SPDX-License-Identifier: MIT

package tests

import (
	"context"
	"errors"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// WaitForContext: WaitFor bounded by a context, as the core's. The
// loop runs on a goroutine of its own; the futures are made and read on
// its thread (onLoop) and waited for from the test's.

// within runs wait (a Wait from the test's goroutine) and fails the test
// if it does not return in 5 s, so a broken cancel fails instead of
// hanging the suite.
func within[T any](t *testing.T, wait func() (T, error)) (T, error) {
	t.Helper()
	type outcome struct {
		v   T
		err error
	}
	ch := make(chan outcome, 1)
	go func() { v, err := wait(); ch <- outcome{v, err} }()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end within 5 s")
		panic("unreachable")
	}
}

// A future that finishes before its context ends gives its result; one
// whose context is cancelled ends cancelled (context.Canceled), one whose
// deadline passes fails with ETIMEDOUT (context.DeadlineExceeded); the
// awaited future is cancelled in both.
func TestGoAPIWaitForContext(t *testing.T) {
	l, _ := runningLoop(t)
	ctx := context.Background()
	var f, out *ll.Future
	onLoop(t, l, func() {
		f, _ = l.NewFuture()
		out, _ = l.WaitForContext(ctx, f)
		l.CallLater(2*time.Millisecond, func() { f.SetResult(42, nil) })
	})
	if v, err := within(t, func() (uintptr, error) { return out.Wait(ctx) }); v != 42 || err != nil {
		t.Errorf("WaitForContext of a future that finishes = %d, %v; want 42", v, err)
	}
	onLoop(t, l, func() { out.Release(); f.Release() })

	cctx, cancel := context.WithCancel(ctx)
	onLoop(t, l, func() {
		f, _ = l.NewFuture()
		out, _ = l.WaitForContext(cctx, f)
	})
	time.Sleep(5 * time.Millisecond)
	cancel()
	if _, err := within(t, func() (uintptr, error) { return out.Wait(ctx) }); !errors.Is(err, context.Canceled) || !errors.Is(err, ll.ECANCELLED) {
		t.Errorf("WaitForContext after its context's cancel = %v, want ECANCELLED (context.Canceled)", err)
	}
	onLoop(t, l, func() {
		if st, _ := f.State(); st != ll.Cancelled {
			t.Errorf("the awaited future is %v after the cancel, want cancelled", st)
		}
		out.Release()
		f.Release()
	})

	dctx, dcancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer dcancel()
	t0 := time.Now()
	onLoop(t, l, func() {
		f, _ = l.NewFuture()
		out, _ = l.WaitForContext(dctx, f)
	})
	_, err := within(t, func() (uintptr, error) { return out.Wait(ctx) })
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ll.ETIMEDOUT) {
		t.Errorf("WaitForContext past its deadline = %v, want ETIMEDOUT (context.DeadlineExceeded)", err)
	}
	if d := time.Since(t0); d < 15*time.Millisecond || d > 3*time.Second {
		t.Errorf("the deadline of 20ms ended the wait after %v", d)
	}
	onLoop(t, l, func() {
		if st, _ := f.State(); st != ll.Cancelled {
			t.Errorf("the awaited future is %v after the deadline, want cancelled", st)
		}
		out.Release()
		f.Release()
	})
}

// A context done before the call cancels at once; bad input is EINVAL;
// many waits leave no callback entry behind.
func TestGoAPIWaitForContextDoneAndNoLeak(t *testing.T) {
	l, _ := runningLoop(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var f, out *ll.Future
	onLoop(t, l, func() {
		f, _ = l.NewFuture()
		out, _ = l.WaitForContext(done, f)
		//lint:ignore SA1012 a nil context is the bad input checked
		if _, err := l.WaitForContext(nil, f); !errors.Is(err, ll.EINVAL) {
			t.Errorf("WaitForContext(nil ctx) = %v, want EINVAL", err)
		}
		if _, err := l.WaitForContext(context.Background(), nil); !errors.Is(err, ll.EINVAL) {
			t.Errorf("WaitForContext(nil future) = %v, want EINVAL", err)
		}
	})
	if _, err := within(t, func() (uintptr, error) { return out.Wait(context.Background()) }); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForContext with a done context = %v, want context.Canceled", err)
	}
	onLoop(t, l, func() { out.Release(); f.Release() })

	base := liveCallbacksSettled(t, l, -1)
	for i := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		onLoop(t, l, func() {
			f, _ = l.NewFuture()
			out, _ = l.WaitForContext(ctx, f)
			if i%2 == 0 {
				f.SetResult(uintptr(i), nil)
			}
		})
		if i%2 == 1 {
			cancel()
		}
		within(t, func() (uintptr, error) { return out.Wait(context.Background()) })
		cancel()
		onLoop(t, l, func() { out.Release(); f.Release() })
	}
	if n := liveCallbacksSettled(t, l, base); n > base {
		t.Errorf("%d callback entries left after 50 WaitForContext calls", n-base)
	}
}
