// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestStatsThroughTheLibrary(t *testing.T) {
	l := newLoop(t)
	before, err := l.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		l.CallSoon(func() {})
	}
	h, _ := l.CallLater(10*time.Second, func() {})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := l.AddReader(int(r.Fd()), func(int) {}); err != nil {
		t.Fatal(err)
	}
	s, _ := l.Stats()
	if s.Ready-before.Ready != 20 || s.Timers != 1 || s.FDs != 1 {
		t.Fatalf("ready +%d timers %d fds %d, want +20 1 1", s.Ready-before.Ready, s.Timers, s.FDs)
	}
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	after, _ := l.Stats()
	if after.Callbacks-before.Callbacks != 20 || after.Iterations-before.Iterations != 1 {
		t.Fatalf("callbacks +%d iterations +%d, want +20 +1",
			after.Callbacks-before.Callbacks, after.Iterations-before.Iterations)
	}
	h.Cancel()
	l.RemoveReader(int(r.Fd()))

	// Blocked 50 ms: the time is idle, and utilization low.
	l.CallLater(50*time.Millisecond, func() { l.Stop() })
	l.RunForever()
	slept, _ := l.Stats()
	if idle := slept.Idle - after.Idle; idle < 45*time.Millisecond {
		t.Fatalf("idle grew by %v while blocked 50 ms", idle)
	}
	if u := slept.Utilization(after); u > 0.5 {
		t.Fatalf("utilization while sleeping = %.2f", u)
	}
}

func TestStatsRefusedFromAnotherThread(t *testing.T) {
	l := newLoop(t)
	got := make(chan error, 1)
	l.CallSoon(func() {
		go func() {
			_, err := l.Stats()
			got <- err
			l.CallSoonThreadsafe(func() { l.Stop() })
		}()
	})
	l.RunForever()
	if err := <-got; !errors.Is(err, EWRONGTHREAD) {
		t.Fatalf("Stats from another goroutine while running: %v, want EWRONGTHREAD", err)
	}
}
