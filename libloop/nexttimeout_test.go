// SPDX-License-Identifier: MIT

package libloop

import (
	"testing"
	"time"
)

// NextTimeout is libuv's uv_backend_timeout: -1 with nothing scheduled, 0
// with a callback ready, else the time to the first live timer.
func TestNextTimeout(t *testing.T) {
	l := newTestLoop(t)
	if d := l.NextTimeout(); d != -1 {
		t.Fatalf("empty loop: %v, want -1", d)
	}
	h, _ := l.CallLater(0.5, func() {})
	if d := l.NextTimeout(); d <= 400*time.Millisecond || d > 500*time.Millisecond {
		t.Fatalf("a timer in 500 ms: %v", d)
	}
	l.CallLater(10, func() {})
	h.Cancel() // a cancelled first timer no longer counts
	if d := l.NextTimeout(); d <= 9*time.Second || d > 10*time.Second {
		t.Fatalf("after cancelling the first timer: %v, want about 10 s", d)
	}
	l.CallSoon(func() {})
	if d := l.NextTimeout(); d != 0 {
		t.Fatalf("a ready callback: %v, want 0", d)
	}
	l.RunOnce(true)
	l.CallLater(-1, func() {}) // due already
	if d := l.NextTimeout(); d != 0 {
		t.Fatalf("a due timer: %v, want 0", d)
	}
	l.RunOnce(true)
	l.Stop()
	if d := l.NextTimeout(); d != 0 {
		t.Fatalf("stopping: %v, want 0", d)
	}
	l.RunOnce(true)
	l.Close()
	if d := l.NextTimeout(); d != -1 {
		t.Fatalf("closed: %v, want -1", d)
	}
}

// A callback posted from another thread makes it 0 until the loop takes it.
func TestNextTimeoutPosted(t *testing.T) {
	l := newTestLoop(t)
	done := make(chan struct{})
	go func() { l.CallSoonThreadsafe(func() {}); close(done) }()
	<-done
	if d := l.NextTimeout(); d != 0 {
		t.Fatalf("a posted callback: %v, want 0", d)
	}
	l.RunOnce(true)
	if d := l.NextTimeout(); d != -1 {
		t.Fatalf("after the loop took it: %v, want -1", d)
	}
}
