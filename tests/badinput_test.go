// SPDX-License-Identifier: MIT

package tests

import (
	"fmt"
	"math"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// badIDs returns the ids no function may accept as a loop (or, with handle
// set, as a handle): 0, stale, forged and of the other kind. alive is a live
// loop for the caller to check after each bad call.
func badIDs(t *testing.T, handle bool) (ids map[string]uint64, alive uint64) {
	alive = newRawLoop(t)
	staleLoop := newRawLoop(t)
	expect(t, "ll_release", raw.Release(staleLoop), 0)
	liveHandle := soonHandle(t, alive, func() {})
	staleHandle := soonHandle(t, alive, func() {})
	expect(t, "ll_release(handle)", raw.Release(staleHandle), 0)
	runNowait(t, alive)
	ids = map[string]uint64{
		"id 0":              0,
		"forged all-ones":   math.MaxUint64,
		"forged generation": alive ^ 0x5a5a<<32,
		"forged slot":       1<<32 | 0xFFFFFF,
		"forged low bits 0": 0x1_0000_0000,
		"forged max slot":   0xFFFF_FFFF,
		"stale loop":        staleLoop,
		"stale handle":      staleHandle,
		"handle id as loop": liveHandle,
		"loop id as handle": alive,
		"forged handle gen": liveHandle ^ 0x77<<40,
	}
	if handle {
		delete(ids, "handle id as loop")
	} else {
		delete(ids, "loop id as handle")
	}
	t.Cleanup(func() { raw.Release(liveHandle) })
	return ids, alive
}

// Every function that takes a loop id rejects a bad one with LL_EBADHANDLE
// (ll_loop_time with a negative value), never writes *out, never runs the
// callback, and the live loop goes on.
func TestBadLoopIDs(t *testing.T) {
	ids, alive := badIDs(t, false)
	r, _ := pipe(t)
	out := newOut(t)
	for name, id := range ids {
		what := func(fn string) string { return fmt.Sprintf("%s(%s)", fn, name) }
		calls := map[string]func() int32{
			"ll_loop_close":                      func() int32 { return raw.LoopClose(id) },
			"ll_loop_run_forever":                func() int32 { return raw.RunForever(id) },
			"ll_loop_run_once(ONCE)":             func() int32 { return raw.RunOnce(id, cRunOnce) },
			"ll_loop_run_once(NOWAIT)":           func() int32 { return raw.RunOnce(id, cRunNowait) },
			"ll_loop_stop":                       func() int32 { return raw.Stop(id) },
			"ll_loop_is_running":                 func() int32 { return raw.IsRunning(id) },
			"ll_loop_is_closed":                  func() int32 { return raw.IsClosed(id) },
			"ll_loop_set_debug":                  func() int32 { return raw.SetDebug(id, 1) },
			"ll_loop_get_debug":                  func() int32 { return raw.GetDebug(id) },
			"ll_loop_set_slow_callback_duration": func() int32 { return raw.SetSlowCallbackDuration(id, 1) },
			"ll_loop_set_exception_handler": func() int32 {
				return raw.SetExceptionHandler(id, ll.ExceptionHandlerPtr(), 0)
			},
			"ll_loop_wakeup":     func() int32 { return raw.Wakeup(id) },
			"ll_remove_reader":   func() int32 { return raw.RemoveReader(id, int32(r)) },
			"ll_remove_writer":   func() int32 { return raw.RemoveWriter(id, int32(r)) },
			"ll_call_soon(NULL)": func() int32 { f, a := never(t, what("ll_call_soon")); return raw.CallSoon(id, f, a, nil) },
			"ll_call_soon(out)": func() int32 {
				f, a := never(t, what("ll_call_soon"))
				return raw.CallSoon(id, f, a, out.Ptr())
			},
			"ll_call_later": func() int32 {
				f, a := never(t, what("ll_call_later"))
				return raw.CallLater(id, 0, f, a, out.Ptr())
			},
			"ll_call_at": func() int32 {
				f, a := never(t, what("ll_call_at"))
				return raw.CallAt(id, 0, f, a, out.Ptr())
			},
			"ll_call_soon_threadsafe": func() int32 {
				f, a := never(t, what("ll_call_soon_threadsafe"))
				return raw.CallSoonThreadsafe(id, f, a)
			},
			"ll_add_reader": func() int32 { return raw.AddReader(id, int32(r), ll.IOCallbackPtr(), 0) },
			"ll_add_writer": func() int32 { return raw.AddWriter(id, int32(r), ll.IOCallbackPtr(), 0) },
		}
		for fn, call := range calls {
			out.Set(0xdead)
			expect(t, what(fn), call(), cEBADHANDLE)
			if out.Value() != 0xdead {
				t.Errorf("%s wrote *out = %#x", what(fn), out.Value())
			}
		}
		if tm := raw.Time(id); tm >= 0 {
			t.Errorf("%s = %g, want negative", what("ll_loop_time"), tm)
		}
		if name != "handle id as loop" {
			expect(t, what("ll_release"), raw.Release(id), cEBADHANDLE)
		}
		assertAlive(t, alive)
	}
}

// Every function that takes a handle id rejects a bad one.
func TestBadHandleIDs(t *testing.T) {
	ids, alive := badIDs(t, true)
	for name, id := range ids {
		expect(t, "ll_handle_cancel("+name+")", raw.HandleCancel(id), cEBADHANDLE)
		expect(t, "ll_handle_cancelled("+name+")", raw.HandleCancelled(id), cEBADHANDLE)
		if w := raw.TimerWhen(id); w >= 0 {
			t.Errorf("ll_timer_when(%s) = %g, want negative", name, w)
		}
		if name != "loop id as handle" {
			expect(t, "ll_release("+name+")", raw.Release(id), cEBADHANDLE)
		}
		assertAlive(t, alive)
	}
	// A released handle stays released: releasing twice is an error.
	h := soonHandle(t, alive, func() {})
	expect(t, "ll_release(handle)", raw.Release(h), 0)
	expect(t, "ll_release(handle, twice)", raw.Release(h), cEBADHANDLE)
	expect(t, "ll_handle_cancel(released)", raw.HandleCancel(h), cEBADHANDLE)
	assertAlive(t, alive)
}

// A closed loop refuses new work with LL_ECLOSED; close is idempotent;
// queries and removal still answer.
func TestClosedLoop(t *testing.T) {
	loop := newRawLoop(t)
	r, w := pipe(t)
	out := newOut(t)
	expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
	calls := map[string]func() int32{
		"ll_call_soon(NULL)": func() int32 { f, a := never(t, "closed"); return raw.CallSoon(loop, f, a, nil) },
		"ll_call_soon(out)":  func() int32 { f, a := never(t, "closed"); return raw.CallSoon(loop, f, a, out.Ptr()) },
		"ll_call_later":      func() int32 { f, a := never(t, "closed"); return raw.CallLater(loop, 0, f, a, out.Ptr()) },
		"ll_call_at":         func() int32 { f, a := never(t, "closed"); return raw.CallAt(loop, 0, f, a, out.Ptr()) },
		"ll_call_soon_threadsafe": func() int32 {
			f, a := never(t, "closed")
			return raw.CallSoonThreadsafe(loop, f, a)
		},
		"ll_add_reader":          func() int32 { return raw.AddReader(loop, int32(r), ll.IOCallbackPtr(), 0) },
		"ll_add_writer":          func() int32 { return raw.AddWriter(loop, int32(w), ll.IOCallbackPtr(), 0) },
		"ll_loop_run_forever":    func() int32 { return raw.RunForever(loop) },
		"ll_loop_run_once":       func() int32 { return raw.RunOnce(loop, cRunNowait) },
		"ll_loop_run_once(ONCE)": func() int32 { return raw.RunOnce(loop, cRunOnce) },
		"ll_loop_stop":           func() int32 { return raw.Stop(loop) },
		"ll_loop_wakeup":         func() int32 { return raw.Wakeup(loop) },
	}
	for fn, call := range calls {
		out.Set(0xdead)
		expect(t, fn+"(closed loop)", call(), cECLOSED)
		if out.Value() != 0xdead {
			t.Errorf("%s on a closed loop wrote *out", fn)
		}
	}
	expect(t, "ll_loop_close(again)", raw.LoopClose(loop), 0)
	expect(t, "ll_loop_is_closed", raw.IsClosed(loop), 1)
	expect(t, "ll_loop_is_running", raw.IsRunning(loop), 0)
	expect(t, "ll_remove_reader(closed loop)", raw.RemoveReader(loop, int32(r)), 0)
	if tm := raw.Time(loop); tm < 0 {
		t.Errorf("ll_loop_time(closed loop) = %g", tm)
	}
	expect(t, "ll_release(closed loop)", raw.Release(loop), 0)
	assertAlive(t, newRawLoop(t))
}

// Handles outlive their loop safely: the host can still drop them.
func TestHandlesOfReleasedLoop(t *testing.T) {
	loop := newRawLoop(t)
	h := later(t, loop, 10, func() { t.Error("timer of a released loop ran") })
	hs := soonHandle(t, loop, func() { t.Error("callback of a released loop ran") })
	expect(t, "ll_release(loop)", raw.Release(loop), 0)
	for _, id := range []uint64{h, hs} {
		if rc := raw.HandleCancelled(id); rc != 0 && rc != 1 {
			t.Errorf("ll_handle_cancelled(handle of released loop) = %d", rc)
		}
		expect(t, "ll_handle_cancel(handle of released loop)", raw.HandleCancel(id), 0)
		expect(t, "ll_release(handle of released loop)", raw.Release(id), 0)
		expect(t, "ll_release(again)", raw.Release(id), cEBADHANDLE)
	}
	assertAlive(t, newRawLoop(t))
}

func TestNullOutPointer(t *testing.T) {
	expect(t, "ll_loop_new(NULL)", raw.LoopNew(nil), cEINVAL)
	loop := newRawLoop(t)
	expect(t, "ll_loop_stats(NULL)", raw.LoopStats(loop, nil), cEINVAL)
	// An 8-byte slot holding 0: a size below the struct's first version.
	expect(t, "ll_loop_stats(size 0)", raw.LoopStats(loop, newOut(t).Ptr()), cEINVAL)
	assertAlive(t, loop)
}

func TestNullCallback(t *testing.T) {
	loop := newRawLoop(t)
	r, w := pipe(t)
	out := newOut(t)
	out.Set(0xdead)
	calls := map[string]func() int32{
		"ll_call_soon(NULL out)":  func() int32 { return raw.CallSoon(loop, 0, 1, nil) },
		"ll_call_soon(out)":       func() int32 { return raw.CallSoon(loop, 0, 1, out.Ptr()) },
		"ll_call_later":           func() int32 { return raw.CallLater(loop, 0, 0, 1, out.Ptr()) },
		"ll_call_at":              func() int32 { return raw.CallAt(loop, 0, 0, 1, out.Ptr()) },
		"ll_call_soon_threadsafe": func() int32 { return raw.CallSoonThreadsafe(loop, 0, 1) },
		"ll_add_reader":           func() int32 { return raw.AddReader(loop, int32(r), 0, 1) },
		"ll_add_writer":           func() int32 { return raw.AddWriter(loop, int32(w), 0, 1) },
	}
	for fn, call := range calls {
		expect(t, fn+" with a NULL callback", call(), cEINVAL)
		assertAlive(t, loop)
	}
	if out.Value() != 0xdead {
		t.Errorf("a failed call wrote *out = %#x", out.Value())
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 0)
	expect(t, "ll_remove_writer", raw.RemoveWriter(loop, int32(w)), 0)
	// NULL callbacks from inside a running callback (the C fast path).
	soon(t, loop, func() {
		expect(t, "ll_call_soon(NULL cb) in a callback", raw.CallSoon(loop, 0, 1, nil), cEINVAL)
	})
	runNowait(t, loop)
	assertAlive(t, loop)
}

func TestBadDelays(t *testing.T) {
	loop := newRawLoop(t)
	bad := map[string]float64{
		"NaN": math.NaN(), "+Inf": math.Inf(1),
		"1e300": 1e300, "200 years": 200 * 365 * 24 * 3600,
	}
	for name, d := range bad {
		out := newOut(t)
		out.Set(0xdead)
		f, a := never(t, "ll_call_later("+name+")")
		expect(t, "ll_call_later("+name+")", raw.CallLater(loop, d, f, a, out.Ptr()), cEINVAL)
		f, a = never(t, "ll_call_at("+name+")")
		expect(t, "ll_call_at("+name+")", raw.CallAt(loop, d, f, a, out.Ptr()), cEINVAL)
		if out.Value() != 0xdead {
			t.Errorf("failed ll_call_later(%s) wrote *out", name)
		}
		assertAlive(t, loop)
	}
	// Allowed: negative delays, even -Inf, run at once; long ones wait.
	n := 0
	later(t, loop, -1, func() { n++ })
	later(t, loop, -1e-9, func() { n++ })
	later(t, loop, math.Inf(-1), func() { n++ })
	long := later(t, loop, 50*365*24*3600, func() { t.Error("50-year timer ran") })
	runNowait(t, loop)
	if n != 3 {
		t.Fatalf("%d of 3 negative-delay timers ran", n)
	}
	expect(t, "ll_handle_cancel", raw.HandleCancel(long), 0)
	expect(t, "ll_release", raw.Release(long), 0)
}

func TestUnknownRunMode(t *testing.T) {
	loop := newRawLoop(t)
	for _, mode := range []int32{2, 3, -1, -2, 100, math.MaxInt32, math.MinInt32} {
		expect(t, fmt.Sprintf("ll_loop_run_once(mode %d)", mode), raw.RunOnce(loop, mode), cEINVAL)
		assertAlive(t, loop)
	}
}

// Running, closing or releasing a loop from inside its own callback fails
// with LL_ERUNNING, as does running any other loop on that thread; the loop
// goes on.
func TestRunWhileRunning(t *testing.T) {
	loop, other := newRawLoop(t), newRawLoop(t)
	ran := false
	soon(t, loop, func() {
		ran = true
		expect(t, "ll_loop_run_forever (nested)", raw.RunForever(loop), cERUNNING)
		expect(t, "ll_loop_run_once(NOWAIT) (nested)", raw.RunOnce(loop, cRunNowait), cERUNNING)
		expect(t, "ll_loop_run_once(ONCE) (nested)", raw.RunOnce(loop, cRunOnce), cERUNNING)
		expect(t, "ll_loop_run_forever(other loop) (nested)", raw.RunForever(other), cERUNNING)
		expect(t, "ll_loop_run_once(other loop) (nested)", raw.RunOnce(other, cRunNowait), cERUNNING)
		expect(t, "ll_loop_close (running)", raw.LoopClose(loop), cERUNNING)
		expect(t, "ll_release (running)", raw.Release(loop), cERUNNING)
		expect(t, "ll_loop_is_running", raw.IsRunning(loop), 1)
		expect(t, "ll_loop_is_closed", raw.IsClosed(loop), 0)
	})
	runNowait(t, loop)
	if !ran {
		t.Fatal("callback did not run")
	}
	expect(t, "ll_loop_is_running after", raw.IsRunning(loop), 0)
	expect(t, "ll_loop_is_closed after", raw.IsClosed(loop), 0)
	assertAlive(t, loop)
	assertAlive(t, other)
	// The same from run_forever, and from an I/O callback.
	r, w := pipe(t)
	calls := 0
	f := ll.IOCallbackPtr()
	a := ll.RegisterIOCallback(func(uint64, int) {
		calls++
		expect(t, "ll_loop_run_forever (in io callback)", raw.RunForever(loop), cERUNNING)
		expect(t, "ll_loop_close (in io callback)", raw.LoopClose(loop), cERUNNING)
		raw.RemoveReader(loop, int32(r))
		raw.Stop(loop)
	}, false)
	expect(t, "ll_add_reader", raw.AddReader(loop, int32(r), f, a), 0)
	if _, err := unix.Write(w, []byte("x")); err != nil {
		t.Fatal(err)
	}
	runForever(t, loop, 5*time.Second)
	if calls != 1 {
		t.Fatalf("io callback ran %d times", calls)
	}
	ll.Unregister(a)
	assertAlive(t, loop)
}
