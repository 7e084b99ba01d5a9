// SPDX-License-Identifier: MIT

package tests

import (
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// Debug mode off: the calls a host is likely to make from a worker thread
// by mistake are refused with LL_EWRONGTHREAD while the loop runs on
// another thread, and change nothing (they used to corrupt the loop and end
// in a Go panic). The read-only loop queries answer from any thread.
func TestWrongThreadRefusedWithoutDebug(t *testing.T) {
	loop := newRawLoop(t)
	fut := newFut(t, loop)
	r, w := pipe(t)
	h := later(t, loop, 60, func() { t.Error("timer ran though never due") })
	soon(t, loop, func() {
		onOtherThread(func() {
			out := newOut(t)
			out.Set(77)
			f, a := never(t, "wrong-thread ll_call_soon")
			expect(t, "ll_call_soon", raw.CallSoon(loop, f, a, nil), cEWRONGTHREAD)
			expect(t, "ll_call_soon out", raw.CallSoon(loop, f, a, out.Ptr()), cEWRONGTHREAD)
			expect(t, "ll_call_later", raw.CallLater(loop, 0, f, a, out.Ptr()), cEWRONGTHREAD)
			expect(t, "ll_call_at", raw.CallAt(loop, 0, f, a, nil), cEWRONGTHREAD)
			if out.Value() != 77 {
				t.Errorf("a refused call wrote *out = %d", out.Value())
			}
			expect(t, "ll_future_set_result", raw.FutureSetResult(fut, 1, 0), cEWRONGTHREAD)
			expect(t, "ll_future_set_exception", raw.FutureSetException(fut, -5, nil, 0, 0), cEWRONGTHREAD)
			expect(t, "ll_future_cancel", raw.FutureCancel(fut, nil), cEWRONGTHREAD)
			expect(t, "ll_add_reader", raw.AddReader(loop, int32(r), ll.IOCallbackPtr(), 0), cEWRONGTHREAD)
			expect(t, "ll_add_writer", raw.AddWriter(loop, int32(w), ll.IOCallbackPtr(), 0), cEWRONGTHREAD)
			expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), cEWRONGTHREAD)
			expect(t, "ll_remove_writer", raw.RemoveWriter(loop, int32(w)), cEWRONGTHREAD)
			expect(t, "ll_handle_cancel", raw.HandleCancel(h), cEWRONGTHREAD)
			expect(t, "ll_release(handle)", raw.Release(h), cEWRONGTHREAD)
			expect(t, "ll_release(future)", raw.Release(fut), cEWRONGTHREAD)
			expect(t, "ll_release(loop)", raw.Release(loop), cEWRONGTHREAD)
			expect(t, "ll_loop_stop", raw.Stop(loop), cEWRONGTHREAD)
			expect(t, "ll_loop_close", raw.LoopClose(loop), cEWRONGTHREAD)
			// Running it here too is refused as any second run is.
			expect(t, "ll_loop_run_once", raw.RunOnce(loop, cRunNowait), cERUNNING)
			// Thread-safe in every mode.
			expect(t, "ll_loop_is_running", raw.IsRunning(loop), 1)
			expect(t, "ll_loop_is_closed", raw.IsClosed(loop), 0)
			if now := raw.Time(loop); now <= 0 {
				t.Errorf("ll_loop_time from another thread = %v", now)
			}
		})
		expect(t, "ll_loop_stop", raw.Stop(loop), 0)
	})
	runForever(t, loop, 5*time.Second)
	expect(t, "ll_future_state", int32(state(fut)), 0) // LL_PENDING
	expect(t, "ll_handle_cancelled", raw.HandleCancelled(h), 0)
	unix.Write(w, []byte("x"))
	assertAlive(t, loop) // no reader was registered by the refused call
	expect(t, "ll_handle_cancel", raw.HandleCancel(h), 0)
}

// ll_loop_is_running, ll_loop_is_closed and ll_loop_time are thread-safe:
// debug mode does not refuse them from another thread either.
func TestLoopQueriesFromAnyThreadInDebugMode(t *testing.T) {
	loop := newRawLoop(t)
	expect(t, "ll_loop_set_debug", raw.SetDebug(loop, 1), 0)
	soon(t, loop, func() {
		before := raw.Time(loop)
		onOtherThread(func() {
			expect(t, "ll_loop_is_running", raw.IsRunning(loop), 1)
			expect(t, "ll_loop_is_closed", raw.IsClosed(loop), 0)
			if now := raw.Time(loop); now < before {
				t.Errorf("ll_loop_time from another thread went back: %v < %v", now, before)
			}
		})
		expect(t, "ll_loop_stop", raw.Stop(loop), 0)
	})
	runForever(t, loop, 5*time.Second)
	onOtherThread(func() {
		expect(t, "ll_loop_is_running (stopped)", raw.IsRunning(loop), 0)
	})
}
