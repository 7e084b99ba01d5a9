// SPDX-License-Identifier: MIT

package tests

import (
	"math"
	"testing"
	"time"
)

func TestLoopLifecycle(t *testing.T) {
	a, b := newRawLoop(t), newRawLoop(t)
	if a == b {
		t.Fatalf("two loops share id %#x", a)
	}
	expect(t, "ll_loop_is_running(new)", raw.IsRunning(a), 0)
	expect(t, "ll_loop_is_closed(new)", raw.IsClosed(a), 0)
	expect(t, "ll_loop_get_debug(new)", raw.GetDebug(a), 0)
	assertAlive(t, a)
	expect(t, "ll_loop_close", raw.LoopClose(a), 0)
	expect(t, "ll_loop_is_closed(closed)", raw.IsClosed(a), 1)
	expect(t, "ll_loop_close(again)", raw.LoopClose(a), 0)
	expect(t, "ll_release(closed loop)", raw.Release(a), 0)
	expect(t, "ll_loop_is_closed(released)", raw.IsClosed(a), cEBADHANDLE)
	expect(t, "ll_release(released loop)", raw.Release(a), cEBADHANDLE)
	// The other loop is untouched, and release closes an open loop.
	assertAlive(t, b)
	soon(t, b, func() { t.Error("callback of a released loop ran") })
	expect(t, "ll_release(open loop)", raw.Release(b), 0)
	expect(t, "ll_loop_is_closed(released)", raw.IsClosed(b), cEBADHANDLE)
}

func TestManyLoops(t *testing.T) {
	ids := map[uint64]bool{}
	for i := 0; i < 50; i++ {
		id := newRawLoop(t)
		if ids[id] {
			t.Fatalf("id %#x issued twice", id)
		}
		ids[id] = true
	}
	for id := range ids {
		assertAlive(t, id)
		expect(t, "ll_release", raw.Release(id), 0)
	}
}

func TestLoopTime(t *testing.T) {
	loop := newRawLoop(t)
	start := time.Now()
	t0 := raw.Time(loop)
	if t0 < 0 || math.IsNaN(t0) {
		t.Fatalf("ll_loop_time = %g", t0)
	}
	time.Sleep(20 * time.Millisecond)
	t1 := raw.Time(loop)
	elapsed := time.Since(start).Seconds()
	if t1-t0 < 0.02 || t1-t0 > elapsed+1e-6 {
		t.Fatalf("loop clock advanced %.6fs over a %.6fs sleep", t1-t0, elapsed)
	}
	for i := 0; i < 1000; i++ {
		if t2 := raw.Time(loop); t2 < t1 {
			t.Fatalf("ll_loop_time went back: %g after %g", t2, t1)
		} else {
			t1 = t2
		}
	}
	// Every loop reads the same monotonic clock.
	other := newRawLoop(t)
	ta, tb, tc := raw.Time(loop), raw.Time(other), raw.Time(loop)
	if ta > tb || tb > tc || tc-ta > 0.01 {
		t.Fatalf("two loops' clocks disagree: %g, %g, %g", ta, tb, tc)
	}
}

func TestIsRunningInsideCallback(t *testing.T) {
	loop := newRawLoop(t)
	running := int32(-1)
	soon(t, loop, func() { running = raw.IsRunning(loop) })
	runNowait(t, loop)
	if running != 1 {
		t.Fatalf("ll_loop_is_running inside a callback = %d", running)
	}
	expect(t, "ll_loop_is_running after", raw.IsRunning(loop), 0)
}

func TestDebugFlag(t *testing.T) {
	loop := newRawLoop(t)
	for _, c := range []struct{ set, want int32 }{{1, 1}, {0, 0}, {7, 1}, {0, 0}} {
		expect(t, "ll_loop_set_debug", raw.SetDebug(loop, c.set), 0)
		expect(t, "ll_loop_get_debug", raw.GetDebug(loop), int(c.want))
	}
	assertAlive(t, loop)
}

func TestSlowCallbackDurationArgs(t *testing.T) {
	loop := newRawLoop(t)
	for _, secs := range []float64{0, 0.5, 1e-6, 3600} {
		expect(t, "ll_loop_set_slow_callback_duration", raw.SetSlowCallbackDuration(loop, secs), 0)
	}
	for _, secs := range []float64{-1, -1e-9, math.NaN()} {
		expect(t, "ll_loop_set_slow_callback_duration(bad)", raw.SetSlowCallbackDuration(loop, secs), cEINVAL)
	}
	assertAlive(t, loop)
}

func TestRunForeverUntilStop(t *testing.T) {
	loop := newRawLoop(t)
	n := 0
	var step func()
	step = func() {
		n++
		if n == 10 {
			expect(t, "ll_loop_stop", raw.Stop(loop), 0)
			return
		}
		soon(t, loop, step)
	}
	soon(t, loop, step)
	runForever(t, loop, 5*time.Second)
	if n != 10 {
		t.Fatalf("ran %d steps", n)
	}
	expect(t, "ll_loop_is_running", raw.IsRunning(loop), 0)
	// It can run again, and again runs until the next stop.
	later(t, loop, 0.01, func() { raw.Stop(loop) })
	runForever(t, loop, 5*time.Second)
	assertAlive(t, loop)
}

func TestRunOnceBlocksUntilTimerDue(t *testing.T) {
	loop := newRawLoop(t)
	ran := false
	later(t, loop, 0.03, func() { ran = true })
	start := time.Now()
	for !ran && time.Since(start) < 5*time.Second {
		expect(t, "ll_loop_run_once(ONCE)", raw.RunOnce(loop, cRunOnce), 0)
	}
	if !ran || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("timer ran=%v after %v", ran, time.Since(start))
	}
}

func TestRunOnceNowaitDoesNotBlock(t *testing.T) {
	loop := newRawLoop(t)
	later(t, loop, 10, func() { t.Error("a 10 s timer ran") })
	start := time.Now()
	for i := 0; i < 5; i++ {
		runNowait(t, loop)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("five NOWAIT iterations took %v", d)
	}
}

func TestCloseDropsPendingWork(t *testing.T) {
	loop := newRawLoop(t)
	soon(t, loop, func() { t.Error("dropped callback ran") })
	later(t, loop, 0, func() { t.Error("dropped timer ran") })
	f, a := never(t, "posted before close")
	expect(t, "ll_call_soon_threadsafe", raw.CallSoonThreadsafe(loop, f, a), 0)
	expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
	expect(t, "ll_loop_run_once(closed)", raw.RunOnce(loop, cRunNowait), cECLOSED)
	expect(t, "ll_loop_run_forever(closed)", raw.RunForever(loop), cECLOSED)
}
