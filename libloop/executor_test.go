// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"testing"
	"time"
)

// A job may fail with any non-zero code: ECANCELLED too must resolve the
// future (it once left it pending forever, as SetException refuses that code).
func TestExecutorJobFailsWithAnyCode(t *testing.T) {
	l := newTestLoop(t)
	for _, code := range []int{-5, int(ETIMEDOUT), int(ECANCELLED)} {
		f, err := l.RunInExecutor(func() (uintptr, int) { return 0, code })
		if err != nil {
			t.Fatal(err)
		}
		stop, _ := l.CallLater(10, func() { l.Stop() })
		if err := l.RunUntilComplete(f); err != nil {
			t.Fatalf("code %d: %v", code, err)
		}
		stop.Cancel()
		if _, err := f.Result(); err != Errno(code) {
			t.Fatalf("code %d: result error %v", code, err)
		}
		f.Release()
	}
}

// Closing a loop with work in flight drops the jobs' references to their
// futures (their deliveries will never run), so the futures are disposed;
// the work still finishes, and nothing crashes.
func TestExecutorCloseDisposesInflightFutures(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	l.SetExecutorWorkers(1)
	gate := make(chan struct{})
	finished := make(chan struct{}, 3)
	disposed := 0
	watchDisposal(l, func(*Future) { disposed++ })
	for range 3 { // one running, two queued
		f, err := l.RunInExecutor(func() (uintptr, int) { <-gate; finished <- struct{}{}; return 1, 0 })
		if err != nil {
			t.Fatal(err)
		}
		f.Release() // the host's reference; the job keeps its own
	}
	sd, _ := l.ShutdownDefaultExecutor()
	sd.Release()
	if disposed != 0 {
		t.Fatalf("%d futures disposed while their jobs are in flight", disposed)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if disposed != 4 {
		t.Fatalf("%d of 4 futures disposed by Close", disposed)
	}
	close(gate)
	for range 3 {
		<-finished
	}
}

// Shutting down an executor that was never used still refuses later work.
func TestExecutorShutdownBeforeFirstUse(t *testing.T) {
	l := newTestLoop(t)
	sd, err := l.ShutdownDefaultExecutor()
	if err != nil || !sd.Done() {
		t.Fatalf("shutdown: %v, done %v", err, sd.Done())
	}
	if _, err := l.RunInExecutor(func() (uintptr, int) { return 0, 0 }); err != ESTATE {
		t.Fatalf("RunInExecutor after shutdown: %v, want ESTATE", err)
	}
}

// A pool whose bound is lowered while its workers sleep: the worker woken
// for new jobs leaves (it is above the bound) and must pass the wake-up to
// one that stays, or the jobs wait forever beside an idle worker.
func TestExecutorLoweredBoundLosesNoWakeUp(t *testing.T) {
	l := newTestLoop(t)
	if err := l.SetExecutorWorkers(2); err != nil {
		t.Fatal(err)
	}
	var both sync.WaitGroup
	both.Add(2)
	for range 2 { // two workers at once: each job waits for the other
		f, _ := l.RunInExecutor(func() (uintptr, int) { both.Done(); both.Wait(); return 0, 0 })
		f.AddDoneCallback(func(*Future) {})
	}
	runDefault(t, l, 5*time.Second)
	e := l.exec()
	for deadline := time.Now().Add(5 * time.Second); ; {
		e.mu.Lock()
		idle := e.idle
		e.mu.Unlock()
		if idle == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 workers went idle", idle)
		}
		time.Sleep(time.Millisecond)
	}
	if err := l.SetExecutorWorkers(1); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for range 5 {
		f, _ := l.RunInExecutor(func() (uintptr, int) { return 0, 0 })
		f.AddDoneCallback(func(*Future) { ran++ })
	}
	runDefault(t, l, 5*time.Second)
	if ran != 5 {
		t.Fatalf("%d of 5 jobs ran after the bound was lowered", ran)
	}
}

// The wake rule: a pool wakes at most one idle worker at a time unless it
// wakes each (the file pool), and never more workers than are idle.
func TestExecutorWakeRule(t *testing.T) {
	for _, c := range []struct {
		each          bool
		idle, waking  int
		want          bool
		wantWakingNow int
	}{
		{false, 0, 0, false, 0},
		{false, 2, 0, true, 1},
		{false, 2, 1, false, 1}, // one wake-up already on its way
		{true, 2, 1, true, 2},   // the file pool wakes the second idle worker too
		{true, 2, 2, false, 2},  // every idle worker is being woken
		{true, 0, 0, false, 0},
	} {
		e := &executor{wakeEach: c.each, idle: c.idle, waking: c.waking}
		e.park.init(&e.mu, false)
		if got := e.wakeOne(); got != c.want || e.waking != c.wantWakingNow {
			t.Errorf("wakeEach=%v idle=%d waking=%d: wakeOne()=%v waking=%d, want %v and %d",
				c.each, c.idle, c.waking, got, e.waking, c.want, c.wantWakingNow)
		}
	}
	l := newTestLoop(t)
	if !l.files().wakeEach || l.exec().wakeEach || l.names().wakeEach {
		t.Fatal("only the file pool wakes a worker per call")
	}
}
