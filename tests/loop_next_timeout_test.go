// SPDX-License-Identifier: MIT

package tests

import (
	"testing"
	"time"
)

// ll_loop_next_timeout through the binding: -1, a timer's milliseconds
// rounded up, 0 when a callback is ready, codes for bad ids.
func TestLoopNextTimeout(t *testing.T) {
	l := newLoop(t)
	if d, err := l.NextTimeout(); err != nil || d != -1 {
		t.Fatalf("empty loop: %v, %v; want -1", d, err)
	}
	h, err := l.CallLater(200*time.Millisecond, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := l.NextTimeout(); d <= 150*time.Millisecond || d > 200*time.Millisecond {
		t.Fatalf("a timer in 200 ms: %v", d)
	}
	h.Cancel()
	if d, _ := l.NextTimeout(); d != -1 {
		t.Fatalf("after cancelling the only timer: %v, want -1", d)
	}
	l.CallSoon(func() {})
	if d, _ := l.NextTimeout(); d != 0 {
		t.Fatalf("a ready callback: %v, want 0", d)
	}
	l.RunOnce(true)
	loop := newRawLoop(t)
	expect(t, "ll_loop_next_timeout(0)", raw.LoopNextTimeout(0), cEBADHANDLE)
	expect(t, "ll_loop_next_timeout(forged)", raw.LoopNextTimeout(loop^0x5a5a0000), cEBADHANDLE)
	expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
	expect(t, "ll_loop_next_timeout(closed)", raw.LoopNextTimeout(loop), cECLOSED)
	expect(t, "ll_release", raw.Release(loop), 0)
	expect(t, "ll_loop_next_timeout(released)", raw.LoopNextTimeout(loop), cEBADHANDLE)
}
