// SPDX-License-Identifier: MIT

package tests

import (
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// The host queue (ll_loop_set_host_queue / ll_loop_host_ready): a binding's
// own ready queue, run once per iteration before the loop's callbacks while
// it has work.

func TestHostQueueRunsBeforeLoopCallbacks(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		r := &recorder{}
		more := true
		calls := 0
		key := ll.RegisterHostQueue(func(id uint64) bool {
			calls++
			if id != loop {
				t.Errorf("host fn got loop %#x, want %#x", id, loop)
			}
			r.add("host")()
			return more
		})
		defer ll.Unregister(key)
		expect(t, "ll_loop_set_host_queue", raw.SetHostQueue(loop, ll.HostQueuePtr(), key), 0)
		// Not called until the host says it has work.
		runNowait(t, loop)
		if calls != 0 {
			t.Fatal("host fn called before ll_loop_host_ready")
		}
		expect(t, "ll_loop_host_ready", raw.HostReady(loop), 0)
		// While it returns 1: once per iteration, before that iteration's callbacks.
		var chain func()
		n := 0
		chain = func() {
			r.add("cb")()
			if n++; n < 3 {
				soon(t, loop, chain)
			}
		}
		soon(t, loop, chain)
		for range 3 {
			runNowait(t, loop)
		}
		if !r.equal("host", "cb", "host", "cb", "host", "cb") {
			t.Fatalf("order %v", r)
		}
		// Once it returns 0 it is not called again until ll_loop_host_ready.
		more = false
		runNowait(t, loop)
		calls = 0
		for range 3 {
			runNowait(t, loop)
		}
		if calls != 0 {
			t.Fatalf("host fn called %d times after it reported no more work", calls)
		}
		soon(t, loop, func() { expect(t, "ll_loop_host_ready in a callback", raw.HostReady(loop), 0) })
		runNowait(t, loop)
		runNowait(t, loop)
		runNowait(t, loop)
		if calls != 1 {
			t.Fatalf("host fn called %d times after ll_loop_host_ready, want 1", calls)
		}
		// NULL removes it.
		expect(t, "ll_loop_set_host_queue(NULL)", raw.SetHostQueue(loop, 0, 0), 0)
		expect(t, "ll_loop_host_ready", raw.HostReady(loop), 0)
		runNowait(t, loop)
		if calls != 1 {
			t.Fatal("removed host fn was called")
		}
		assertAlive(t, loop)
	})
}

// While the host has work the loop does not block in poll; without it, it does.
func TestHostQueueKeepsLoopFromBlocking(t *testing.T) {
	l := newLoop(t)
	more := true
	calls := 0
	if err := l.SetHostQueue(func() bool { calls++; return more }); err != nil {
		t.Fatal(err)
	}
	far, _ := l.CallLater(10*time.Second, func() { t.Error("10 s timer ran") })
	defer far.Cancel()
	if err := l.HostReady(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 5 {
		if err := l.RunOnce(false); err != nil { // LL_RUN_ONCE: may block
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el > 2*time.Second || calls != 5 {
		t.Fatalf("5 blocking iterations with host work took %v, %d host calls", el, calls)
	}
	more = false
	l.RunOnce(false) // the host drains its queue
	l.CallLater(30*time.Millisecond, func() {})
	start = time.Now()
	l.RunOnce(false)
	if el := time.Since(start); el < 25*time.Millisecond {
		t.Fatalf("with no host work the loop did not block for its 30 ms timer (%v)", el)
	}
	// Announced between runs: the next iteration does not block.
	l.HostReady()
	start = time.Now()
	l.RunOnce(false)
	if time.Since(start) > 2*time.Second {
		t.Fatal("blocked with host work pending")
	}
	// A panic in the host fn is reported and counts as no more work.
	var reports []ll.ErrorContext
	l.SetExceptionHandler(func(c ll.ErrorContext) { reports = append(reports, c) })
	l.SetHostQueue(func() bool { panic("host queue broke") })
	l.HostReady()
	l.RunOnce(true)
	if len(reports) != 1 {
		t.Fatalf("reports %+v", reports)
	}
	l.SetHostQueue(nil)
	assertAlive(t, l.ID())
}
