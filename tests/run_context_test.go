// SPDX-License-Identifier: MIT

package tests

import (
	"context"
	"errors"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// A context's deadline cancels the future the binding's
// RunUntilCompleteContext runs for, and the run returns the context error;
// a future that finishes first keeps its result.
func TestRunUntilCompleteContext(t *testing.T) {
	l := newLoop(t)
	sleep, err := l.Sleep(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer sleep.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := l.RunUntilCompleteContext(ctx, sleep); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if st, _ := sleep.State(); st != ll.Cancelled {
		t.Fatalf("state %v, want cancelled", st)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("returned after %v", d)
	}
	f := newFuture(t, l)
	l.CallLater(time.Millisecond, func() { f.SetResult(8, nil) })
	if err := l.RunUntilCompleteContext(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Result(); v != 8 {
		t.Fatalf("result %d", v)
	}
	assertAlive(t, l.ID())
}
