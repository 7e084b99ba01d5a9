// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// ll_queue_work (libuv's uv_queue_work): work(arg) on an executor thread,
// then after(loop, arg) on the loop thread; no future. The binding routes
// both halves through fixed trampolines keyed by one table entry.

// waitFor polls cond for up to limit.
func waitFor(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); !cond(); {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// 10,000 jobs: each work runs exactly once, off the loop thread; each after
// runs exactly once, after its work, on the loop thread, and sees what its
// work wrote. Every table entry is freed.
func TestQueueWorkManyJobs(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveCallbacks()
	const n = 10000
	workRuns := make([]atomic.Int32, n)
	workTid := make([]atomic.Int32, n)
	results := make([]int, n) // written by work i, read by after i
	afterRuns := make([]int, n)
	loopTid, afterOff, afterEarly, badResult, done := 0, 0, 0, 0, 0
	if _, err := l.CallSoon(func() { loopTid = unix.Gettid() }); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		err := l.QueueWork(func() {
			workRuns[i].Add(1)
			workTid[i].Store(int32(unix.Gettid()))
			results[i] = i * 2
		}, func() {
			afterRuns[i]++
			if workRuns[i].Load() != 1 {
				afterEarly++
			}
			if results[i] != i*2 {
				badResult++
			}
			if tid := unix.Gettid(); tid != loopTid || loopTid == 0 {
				afterOff++
			}
			if done++; done == n {
				l.Stop()
			}
		})
		if err != nil {
			t.Fatalf("QueueWork %d: %v", i, err)
		}
	}
	runForever(t, l.ID(), 60*time.Second)
	for range 3 {
		l.RunOnce(true) // nothing more may run
	}
	tids := map[int32]bool{}
	for i := range n {
		if w, a := workRuns[i].Load(), afterRuns[i]; w != 1 || a != 1 {
			t.Fatalf("job %d: work ran %d times, after %d times", i, w, a)
		}
		tids[workTid[i].Load()] = true
	}
	if tids[int32(loopTid)] || loopTid == 0 {
		t.Fatalf("work ran on the loop thread %d (work threads %v)", loopTid, tids)
	}
	if afterOff != 0 || afterEarly != 0 || badResult != 0 {
		t.Fatalf("after: %d off the loop thread, %d before their work, %d saw a wrong result", afterOff, afterEarly, badResult)
	}
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("%d callback entries after the jobs ran, %d before", live, base)
	}
	t.Logf("%d jobs on %d worker threads", n, len(tids))
	assertAlive(t, l.ID())
}

// The raw layer: ll_queue_work with the binding's trampolines. after gets
// the loop id; with one worker, afters run in submission order.
func TestQueueWorkRaw(t *testing.T) {
	loop := newRawLoop(t)
	expect(t, "ll_loop_set_executor_workers(1)", raw.SetExecutorWorkers(loop, 1), 0)
	base := ll.LiveCallbacks()
	const n = 500
	var order []int
	var worked atomic.Int32
	var wrongLoop int
	for i := range n {
		key := ll.RegisterQueueWork(loop, func() { worked.Add(1) }, func(id uint64) {
			if id != loop {
				wrongLoop++
			}
			order = append(order, i)
		})
		if rc := raw.QueueWork(loop, ll.QueueWorkPtr(), ll.QueueAfterPtr(), key); rc != 0 {
			ll.Unregister(key)
			t.Fatalf("ll_queue_work %d = %s", i, codeString(int(rc)))
		}
	}
	f, a := cb(func(uint64) {})
	raw.CallLater(loop, 30, f, a, nil) // a watchdog timer keeps the loop polling
	for deadline := time.Now().Add(20 * time.Second); len(order) < n && time.Now().Before(deadline); {
		expect(t, "ll_loop_run_once", raw.RunOnce(loop, cRunOnce), 0)
	}
	if len(order) != n || worked.Load() != n || wrongLoop != 0 {
		t.Fatalf("%d afters, %d works of %d; %d afters with a wrong loop id", len(order), worked.Load(), n, wrongLoop)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("with one worker, after %d ran at position %d", v, i)
		}
	}
	if live := ll.LiveCallbacks(); live != base+1 { // +1: the watchdog timer
		t.Fatalf("%d callback entries, want %d", live, base+1)
	}
	ll.Unregister(a)
	assertAlive(t, loop)
}

// neverQueued registers a job whose halves fail the test if they run.
func neverQueued(t *testing.T, loop uint64) uintptr {
	key := ll.RegisterQueueWork(loop, func() { t.Error("refused work ran") },
		func(uint64) { t.Error("refused after ran") })
	t.Cleanup(func() { ll.Unregister(key) })
	return key
}

// NULL work or after is LL_EINVAL; a bad loop id LL_EBADHANDLE; nothing
// runs and the loop goes on.
func TestQueueWorkBadInput(t *testing.T) {
	ids, alive := badIDs(t, false)
	fx := newAIOFixture(t)
	ids["future id as loop"] = fx.fut
	ids["task id as loop"] = fx.task
	key := neverQueued(t, alive)
	for name, id := range ids {
		expect(t, fmt.Sprintf("ll_queue_work(%s)", name), raw.QueueWork(id, ll.QueueWorkPtr(), ll.QueueAfterPtr(), key), cEBADHANDLE)
		assertAlive(t, alive)
	}
	for _, c := range []struct {
		name        string
		work, after uintptr
	}{
		{"NULL work", 0, ll.QueueAfterPtr()},
		{"NULL after", ll.QueueWorkPtr(), 0},
		{"both NULL", 0, 0},
	} {
		expect(t, "ll_queue_work("+c.name+")", raw.QueueWork(alive, c.work, c.after, key), cEINVAL)
		assertAlive(t, alive)
	}
	l := newLoop(t)
	base := ll.LiveCallbacks()
	expectErr(t, "QueueWork(nil work)", l.QueueWork(nil, func() { t.Error("after ran") }), cEINVAL)
	expectErr(t, "QueueWork(nil after)", l.QueueWork(func() { t.Error("work ran") }, nil), cEINVAL)
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("refused QueueWork calls left %d entries", live-base)
	}
	time.Sleep(20 * time.Millisecond) // a wrongly queued job would have run
	runNowait(t, alive)
	assertAlive(t, alive)
	assertAlive(t, l.ID())
}

// A closed loop refuses work with LL_ECLOSED, a released one with
// LL_EBADHANDLE, an executor shut down with LL_ESTATE; debug mode refuses
// another thread with LL_EWRONGTHREAD.
func TestQueueWorkRefusals(t *testing.T) {
	loop := newRawLoop(t)
	key := neverQueued(t, loop)
	expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
	expect(t, "ll_queue_work(closed loop)", raw.QueueWork(loop, ll.QueueWorkPtr(), ll.QueueAfterPtr(), key), cECLOSED)
	expect(t, "ll_release", raw.Release(loop), 0)
	expect(t, "ll_queue_work(released loop)", raw.QueueWork(loop, ll.QueueWorkPtr(), ll.QueueAfterPtr(), key), cEBADHANDLE)

	base := ll.LiveCallbacks()
	closed := newLoop(t)
	expectErr(t, "Close", closed.Close(), 0)
	expectErr(t, "QueueWork(closed loop)", closed.QueueWork(func() { t.Error("work ran") }, func() { t.Error("after ran") }), cECLOSED)
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("a refused QueueWork left %d entries", live-base)
	}

	// Shutdown: the job queued before it still runs both halves; later
	// jobs are refused.
	l := newLoop(t)
	gate := make(chan struct{})
	var worked atomic.Bool
	afterRan := false
	if err := l.QueueWork(func() { <-gate; worked.Store(true) }, func() { afterRan = true }); err != nil {
		t.Fatal(err)
	}
	sd, err := l.ShutdownDefaultExecutor()
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Release()
	expectErr(t, "QueueWork after shutdown", l.QueueWork(func() { t.Error("work ran") }, func() { t.Error("after ran") }), cESTATE)
	expect(t, "ll_queue_work after shutdown", raw.QueueWork(l.ID(), ll.QueueWorkPtr(), ll.QueueAfterPtr(), neverQueued(t, l.ID())), cESTATE)
	close(gate)
	runUntil(t, l, sd, 10*time.Second)
	l.RunOnce(true)
	if !worked.Load() || !afterRan {
		t.Fatalf("the job queued before shutdown: work %v, after %v", worked.Load(), afterRan)
	}
	assertAlive(t, l.ID())
	// A loop that never used its executor refuses work after shutdown too.
	m := newLoop(t)
	sd2, _ := m.ShutdownDefaultExecutor()
	defer sd2.Release()
	expectErr(t, "QueueWork after shutdown of an unused executor", m.QueueWork(func() {}, func() {}), cESTATE)

	// Debug mode: from another thread while the loop runs.
	d := newLoop(t)
	d.SetDebug(true)
	var wrongErr error
	d.CallSoon(func() {
		onOtherThread(func() {
			wrongErr = d.QueueWork(func() { t.Error("wrong-thread work ran") }, func() { t.Error("wrong-thread after ran") })
		})
		d.Stop()
	})
	if err := d.RunForever(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(wrongErr, ll.EWRONGTHREAD) {
		t.Fatalf("QueueWork from another thread in debug mode: %v", wrongErr)
	}
	base = ll.LiveCallbacks()
	time.Sleep(10 * time.Millisecond)
	d.RunOnce(true)
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("entries changed from %d to %d", base, live)
	}
}

// Releasing (or closing) a loop with work queued, running and finished but
// not yet delivered: no crash, the work still runs, after never does, and
// the binding frees every entry.
func TestQueueWorkReleaseInFlight(t *testing.T) {
	for _, how := range []string{"release", "close"} {
		t.Run(how, func(t *testing.T) {
			base := ll.LiveCallbacks()
			l, err := ll.NewLoop()
			if err != nil {
				t.Fatal(err)
			}
			l.SetExecutorWorkers(2)
			var finished atomic.Int32
			after := func() { t.Error("after ran on a closed loop") }
			// Two jobs that finish before the loop goes (after not delivered yet).
			for range 2 {
				if err := l.QueueWork(func() { finished.Add(1) }, after); err != nil {
					t.Fatal(err)
				}
			}
			if !waitFor(5*time.Second, func() bool { return finished.Load() == 2 }) {
				t.Fatal("the quick jobs did not finish")
			}
			// Six that wait: two running, four queued.
			gate := make(chan struct{})
			for range 6 {
				if err := l.QueueWork(func() { <-gate; finished.Add(1) }, after); err != nil {
					t.Fatal(err)
				}
			}
			if how == "release" {
				expectErr(t, "Release with work in flight", l.Release(), 0)
			} else {
				expectErr(t, "Close with work in flight", l.Close(), 0)
				expectErr(t, "QueueWork on the closed loop", l.QueueWork(func() {}, func() {}), cECLOSED)
			}
			close(gate)
			if !waitFor(10*time.Second, func() bool { return finished.Load() == 8 }) {
				t.Fatalf("%d of 8 jobs finished after the loop went", finished.Load())
			}
			if !waitFor(5*time.Second, func() bool { return ll.LiveCallbacks() == base }) {
				t.Errorf("%d callback entries left (base %d)", ll.LiveCallbacks(), base)
			}
			if how == "close" {
				expectErr(t, "RunOnce on the closed loop", l.RunOnce(true), cECLOSED)
				expectErr(t, "Release", l.Release(), 0)
			}
			assertAlive(t, newRawLoop(t))
		})
	}
}

// The raw form, as a C host does it: jobs that sleep 20 ms, the loop
// released while they run; afters never come.
func TestQueueWorkRawReleaseInFlight(t *testing.T) {
	out := newOut(t)
	expect(t, "ll_loop_new", raw.LoopNew(out.Ptr()), 0)
	loop := out.Value()
	var finished atomic.Int32
	var keys []uintptr
	for range 8 {
		key := ll.RegisterQueueWork(0, func() { time.Sleep(20 * time.Millisecond); finished.Add(1) },
			func(uint64) { t.Error("after ran on a released loop") })
		keys = append(keys, key)
		expect(t, "ll_queue_work", raw.QueueWork(loop, ll.QueueWorkPtr(), ll.QueueAfterPtr(), key), 0)
	}
	time.Sleep(5 * time.Millisecond)
	expect(t, "ll_release(loop) with work in flight", raw.Release(loop), 0)
	if !waitFor(10*time.Second, func() bool { return finished.Load() == 8 }) {
		t.Fatalf("%d of 8 jobs finished", finished.Load())
	}
	time.Sleep(20 * time.Millisecond)
	for _, k := range keys {
		if !ll.Unregister(k) { // the loop never ran after: the host frees it
			t.Error("an entry was freed though after never ran")
		}
	}
	assertAlive(t, newRawLoop(t))
}

// A panic in work is reported on stderr and after still runs; a panic in
// after goes to the loop's exception handler.
func TestQueueWorkPanics(t *testing.T) {
	l := newLoop(t)
	var got []ll.ErrorContext
	if err := l.SetExceptionHandler(func(c ll.ErrorContext) { got = append(got, c) }); err != nil {
		t.Fatal(err)
	}
	base := ll.LiveCallbacks()
	afterRan := 0
	l.QueueWork(func() { panic("work boom") }, func() { afterRan++ })
	l.QueueWork(func() {}, func() { afterRan++; panic("after boom") })
	for deadline := time.Now().Add(10 * time.Second); afterRan < 2 && time.Now().Before(deadline); {
		l.RunOnce(true)
		time.Sleep(time.Millisecond)
	}
	if afterRan != 2 {
		t.Fatalf("%d afters ran", afterRan)
	}
	if len(got) != 1 || !strings.Contains(got[0].Message, "after boom") {
		t.Fatalf("exception handler got %+v", got)
	}
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("%d entries left", live-base)
	}
	assertAlive(t, l.ID())
}
