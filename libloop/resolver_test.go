// SPDX-License-Identifier: MIT

package libloop

import (
	"sync/atomic"
	"testing"
	"time"
)

// Lookups run at most ResolverWorkers at once, the rest wait their turn,
// and none waits behind a busy executor.
func TestResolverBoundAndApart(t *testing.T) {
	l := newTestLoop(t)
	if err := l.SetExecutorWorkers(1); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	busy, err := l.RunInExecutor(func() (uintptr, int) { <-release; return 0, 0 })
	if err != nil {
		t.Fatal(err)
	}
	var running, most atomic.Int32
	gate := make(chan struct{})
	const jobs = ResolverWorkers + 3
	futs := make([]*Future, jobs)
	for i := range futs {
		i := i
		futs[i], err = l.RunInResolver(func() (uintptr, int) {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			if i < ResolverWorkers {
				<-gate // the first ones hold every worker until released
			}
			running.Add(-1)
			return uintptr(i), 0
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(100 * time.Millisecond)
	runUntil(t, l, time.Second, func() bool { return time.Now().After(deadline) })
	if got := running.Load(); got != ResolverWorkers {
		t.Errorf("%d lookups running at once, want the bound %d", got, ResolverWorkers)
	}
	close(gate)
	runUntil(t, l, 5*time.Second, func() bool { return allDone(futs) })
	for i, f := range futs {
		if v, err := f.Result(); v != uintptr(i) || err != nil {
			t.Errorf("lookup %d: %d, %v", i, v, err)
		}
		f.Release()
	}
	if most.Load() > ResolverWorkers {
		t.Errorf("%d lookups ran at once, bound %d", most.Load(), ResolverWorkers)
	}
	if busy.Done() {
		t.Error("the executor job finished: the test did not keep it busy")
	}
	close(release)
	runUntil(t, l, 5*time.Second, busy.Done)
	busy.Release()
}

// DialTCP resolves a name on the resolver pool, and reports a name that
// does not resolve as ENONAME.
func TestDialTCPByName(t *testing.T) {
	l := newTestLoop(t)
	var dialErr error
	done := false
	if err := l.DialTCP("no-such-host.invalid", 80, nil, func(tr *Transport, err error) {
		dialErr, done = err, true
	}); err != nil {
		t.Fatal(err)
	}
	if l.resolver == nil {
		t.Error("the name is not being resolved on the resolver pool")
	}
	runUntil(t, l, 30*time.Second, func() bool { return done })
	if dialErr != ENONAME {
		t.Fatalf("DialTCP(no-such-host.invalid): %v, want ENONAME", dialErr)
	}
}
