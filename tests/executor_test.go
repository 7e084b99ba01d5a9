// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// The executor: work runs on the library's worker threads (threads the
// test's Go runtime never made, entering Go through purego's callback), and
// its outcome comes back on the loop thread.

func TestExecutorManyJobs(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveCallbacks()
	loopTid := 0
	const n = 300
	var mu sync.Mutex
	tids := map[int]bool{}
	futs := make([]*ll.Future, n)
	for i := range futs {
		f, err := l.RunInExecutor(func() (uintptr, error) {
			mu.Lock()
			tids[unix.Gettid()] = true
			mu.Unlock()
			return uintptr(i * 3), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Release()
		futs[i] = f
	}
	g, _ := l.Gather(futs, false)
	defer g.Release()
	var resolvedOn []int
	for _, f := range futs[:3] {
		f.AddDoneCallback(func(*ll.Future) { resolvedOn = append(resolvedOn, unix.Gettid()) })
	}
	l.CallSoon(func() { loopTid = unix.Gettid() })
	runUntil(t, l, g, 20*time.Second)
	for i, f := range futs {
		if v, err := f.Result(); v != uintptr(i*3) || err != nil {
			t.Fatalf("job %d: %d %v", i, v, err)
		}
	}
	if tids[loopTid] || len(tids) == 0 {
		t.Fatalf("work ran on the loop thread %d (work threads %v)", loopTid, tids)
	}
	for _, tid := range resolvedOn {
		if tid != loopTid {
			t.Fatalf("a future was resolved on thread %d, not the loop's %d", tid, loopTid)
		}
	}
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("%d callback entries after the jobs ran, %d before", live, base)
	}
	assertAlive(t, l.ID())
}

func TestExecutorErrors(t *testing.T) {
	l := newLoop(t)
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"libloop code", ll.ETIMEDOUT, cETIMEDOUT},
		{"errno", syscall.EIO, -int(syscall.EIO)},
		{"host code", ll.Error(-12345), -12345},
		{"other Go error", errors.New("no"), cEINVAL},
		{"cancelled", ll.ECANCELLED, cECANCELLED},
	}
	for _, c := range cases {
		f, err := l.RunInExecutor(func() (uintptr, error) { return 1, c.err })
		if err != nil {
			t.Fatal(err)
		}
		runUntil(t, l, f, 10*time.Second)
		_, err = f.Result()
		expectErr(t, c.name, err, c.want)
		f.Result() // retrieved: nothing to report on release
		f.Release()
	}
	// A panic in work fails the job with LL_EINVAL.
	f, _ := l.RunInExecutor(func() (uintptr, error) { panic("work panicked") })
	runUntil(t, l, f, 10*time.Second)
	_, err := f.Result()
	expectErr(t, "panicking work", err, cEINVAL)
	f.Release()
	// Raw: the work fn sets *err.
	out := newOut(t)
	key := ll.RegisterWork(func() (uintptr, int) { return 0, -7 })
	expect(t, "ll_run_in_executor", raw.RunInExecutor(l.ID(), ll.WorkPtr(), key, out.Ptr()), 0)
	rf := out.Value()
	defer raw.Release(rf)
	for deadline := time.Now().Add(10 * time.Second); raw.FutureDone(rf) != 1 && time.Now().Before(deadline); {
		raw.RunOnce(l.ID(), cRunOnce)
	}
	if rc, _ := result(t, rf); rc != -7 {
		t.Fatalf("raw job result %s", codeString(rc))
	}
	assertAlive(t, l.ID())
}

// runConcurrent queues jobs that block until released and returns the
// most that ran at once.
func runConcurrent(t *testing.T, l *ll.Loop, jobs int, expectMax int) int32 {
	var running, peak atomic.Int32
	release := make(chan struct{})
	futs := make([]*ll.Future, jobs)
	for i := range futs {
		f, err := l.RunInExecutor(func() (uintptr, error) {
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			<-release
			running.Add(-1)
			return 0, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Release()
		futs[i] = f
	}
	// Let the pool fill up to its bound (and give it time to exceed it).
	for deadline := time.Now().Add(5 * time.Second); peak.Load() < int32(expectMax) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	g, _ := l.Gather(futs, false)
	defer g.Release()
	runUntil(t, l, g, 20*time.Second)
	return peak.Load()
}

func TestExecutorWorkersBound(t *testing.T) {
	def := min(32, runtime.NumCPU()+4)
	if p := runConcurrent(t, newLoop(t), def+6, def); int(p) != def {
		t.Fatalf("default pool ran %d jobs at once, want min(32, ncpu+4) = %d", p, def)
	}
	l := newLoop(t)
	expectErr(t, "SetExecutorWorkers(2)", l.SetExecutorWorkers(2), 0)
	if p := runConcurrent(t, l, 8, 2); p != 2 {
		t.Fatalf("2-worker pool ran %d jobs at once", p)
	}
	expectErr(t, "SetExecutorWorkers(1)", l.SetExecutorWorkers(1), 0)
	var order []int
	var mu sync.Mutex
	futs := make([]*ll.Future, 20)
	for i := range futs {
		futs[i], _ = l.RunInExecutor(func() (uintptr, error) {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			return 0, nil
		})
		defer futs[i].Release()
	}
	g, _ := l.Gather(futs, false)
	defer g.Release()
	runUntil(t, l, g, 20*time.Second)
	for i, v := range order {
		if v != i {
			t.Fatalf("one worker ran jobs out of order: %v", order)
		}
	}
	for _, n := range []int32{0, -1, 1025} {
		expect(t, "ll_loop_set_executor_workers(bad)", raw.SetExecutorWorkers(l.ID(), n), cEINVAL)
	}
	expect(t, "ll_loop_set_executor_workers(1024)", raw.SetExecutorWorkers(l.ID(), 1024), 0)
	assertAlive(t, l.ID())
}

func TestExecutorShutdown(t *testing.T) {
	l := newLoop(t)
	gate := make(chan struct{})
	var done atomic.Bool
	job, _ := l.RunInExecutor(func() (uintptr, error) { <-gate; done.Store(true); return 1, nil })
	defer job.Release()
	sd, err := l.ShutdownDefaultExecutor()
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Release()
	_, err = l.RunInExecutor(func() (uintptr, error) { t.Error("work accepted after shutdown ran"); return 0, nil })
	expectErr(t, "RunInExecutor after shutdown", err, cESTATE)
	out := newOut(t)
	key := ll.RegisterWork(func() (uintptr, int) { return 0, 0 })
	expect(t, "ll_run_in_executor after shutdown", raw.RunInExecutor(l.ID(), ll.WorkPtr(), key, out.Ptr()), cESTATE)
	ll.Unregister(key)
	l.RunOnce(true)
	time.Sleep(10 * time.Millisecond)
	l.RunOnce(true)
	if sd.Done() {
		t.Fatal("shutdown future done while a job still runs")
	}
	close(gate)
	runUntil(t, l, sd, 10*time.Second)
	if !done.Load() {
		t.Fatal("shutdown finished before the running job")
	}
	// A loop that never used its executor shuts down at once and refuses
	// work from then on; shutting down twice is fine.
	m := newLoop(t)
	for range 2 {
		s, err := m.ShutdownDefaultExecutor()
		if err != nil {
			t.Fatal(err)
		}
		runUntil(t, m, s, time.Second)
		s.Release()
		_, err = m.RunInExecutor(func() (uintptr, error) { t.Error("work ran after shutdown"); return 0, nil })
		expectErr(t, "RunInExecutor after shutdown of an unused executor", err, cESTATE)
	}
	assertAlive(t, l.ID())
	assertAlive(t, m.ID())
}

// Releasing a loop with work queued and running is safe: the work finishes,
// its outcome is dropped, nothing crashes.
func TestExecutorReleaseLoopWithWorkInFlight(t *testing.T) {
	l, err := ll.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	l.SetExecutorWorkers(2)
	gate := make(chan struct{})
	var finished atomic.Int32
	var futs []*ll.Future
	for range 6 {
		f, err := l.RunInExecutor(func() (uintptr, error) { <-gate; finished.Add(1); return 5, nil })
		if err != nil {
			t.Fatal(err)
		}
		futs = append(futs, f)
	}
	expectErr(t, "release loop", l.Release(), 0)
	close(gate)
	for deadline := time.Now().Add(10 * time.Second); finished.Load() < 6 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := finished.Load(); n != 6 {
		t.Fatalf("%d of 6 jobs finished after the loop was released", n)
	}
	time.Sleep(10 * time.Millisecond) // let the workers try to deliver
	for _, f := range futs {
		if st, err := f.State(); err == nil && st != ll.Pending {
			t.Errorf("a job's outcome was delivered to a released loop: %v", st)
		}
		expectErr(t, "release job future", f.Release(), 0)
		// Nothing holds it any more: its id is gone (no leak).
		expect(t, "ll_future_state(released job future of a released loop)", raw.FutureState(f.ID()), cEBADHANDLE)
	}
	assertAlive(t, newRawLoop(t))
}
