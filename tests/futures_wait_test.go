// SPDX-License-Identifier: MIT

package tests

import (
	"context"
	"errors"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// runningLoop runs a new loop on a goroutine of its own until the test
// ends (stop ends it earlier), as a Go program that waits from other
// goroutines does.
func runningLoop(t *testing.T) (l *ll.Loop, stop func()) {
	t.Helper()
	l, err := ll.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	ended := make(chan error, 1)
	l.CallSoon(func() { close(started) })
	go func() { ended <- l.RunForever() }()
	<-started
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		l.CallSoonThreadsafe(func() { l.Stop() })
		if err := <-ended; err != nil {
			t.Errorf("RunForever: %v", err)
		}
		if err := l.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	}
	t.Cleanup(stop)
	return l, stop
}

// onLoop runs fn on the loop's thread and waits for it.
func onLoop(t *testing.T, l *ll.Loop, fn func()) {
	t.Helper()
	done := make(chan struct{})
	if err := l.CallSoonThreadsafe(func() { fn(); close(done) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not run a posted callback")
	}
}

// Future.Wait from another goroutine: the result, the failure's code, a
// future done already.
func TestFutureWaitOutcome(t *testing.T) {
	l, _ := runningLoop(t)
	var f, failed *ll.Future
	onLoop(t, l, func() {
		f, _ = l.NewFuture()
		failed, _ = l.NewFuture()
		l.CallLater(10*time.Millisecond, func() {
			f.SetResult(42, nil)
			failed.SetException(int(ll.EINVAL), "bad", 0, nil)
		})
	})
	defer onLoop(t, l, func() { f.Release(); failed.Release() })
	if v, err := f.Wait(context.Background()); v != 42 || err != nil {
		t.Fatalf("Wait: %d, %v; want 42", v, err)
	}
	if _, err := failed.Wait(context.Background()); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("Wait on a failed future: %v, want EINVAL", err)
	}
	if v, err := f.Wait(context.Background()); v != 42 || err != nil {
		t.Fatalf("Wait again: %d, %v", v, err)
	}
}

// A context done first: Wait returns its error at once and the future is
// cancelled on the loop thread; a context done before the call refuses.
func TestFutureWaitContext(t *testing.T) {
	l, _ := runningLoop(t)
	var f *ll.Future
	onLoop(t, l, func() { f, _ = l.NewFuture() })
	defer onLoop(t, l, func() { f.Release() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait: %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Wait returned after %v", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var st ll.FutureState
		onLoop(t, l, func() { st, _ = f.State() })
		if st == ll.Cancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("future state %v after the context ended, want cancelled", st)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with a done context: %v", err)
	}
	//lint:ignore SA1012 a nil context is the bad input checked
	if _, err := f.Wait(nil); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("Wait(nil): %v, want EINVAL", err)
	}
}

// The loop closing while a goroutine waits ends the wait with ECLOSED.
func TestFutureWaitLoopClosed(t *testing.T) {
	l, stop := runningLoop(t)
	var f *ll.Future
	onLoop(t, l, func() { f, _ = l.NewFuture() })
	errc := make(chan error, 1)
	go func() { _, err := f.Wait(context.Background()); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	stop()
	select {
	case err := <-errc:
		if !errors.Is(err, ll.ECLOSED) {
			t.Fatalf("Wait after the loop closed: %v, want ECLOSED", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the loop did not end Wait")
	}
	if _, err := f.Wait(context.Background()); !errors.Is(err, ll.ECLOSED) && !errors.Is(err, ll.EBADHANDLE) {
		t.Fatalf("Wait on a closed loop: %v", err)
	}
}
