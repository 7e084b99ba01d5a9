// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"testing"
	"time"
)

func TestStatsCountsCallbacksAndIterations(t *testing.T) {
	l := newTestLoop(t)
	if s := l.Stats(); s != (Stats{}) {
		t.Fatalf("a new loop's stats: %+v", s)
	}
	left := 100
	var next func()
	next = func() {
		if left--; left > 0 {
			l.CallSoon(next)
		} else {
			l.Stop()
		}
	}
	l.CallSoon(next)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	if s.Callbacks != 100 || s.Iterations != 100 {
		t.Fatalf("after a chain of 100: %d callbacks, %d iterations", s.Callbacks, s.Iterations)
	}
	for i := 0; i < 10; i++ {
		l.CallSoon(func() {})
	}
	h, _ := l.CallSoon(func() {})
	h.Cancel()
	if got := l.Stats().Ready; got != 11 {
		t.Fatalf("ready = %d, want 11", got)
	}
	l.RunOnce(true)
	s2 := l.Stats()
	if s2.Callbacks-s.Callbacks != 10 || s2.Ready != 0 {
		t.Fatalf("a cancelled handle was counted: %+v", s2)
	}
}

func TestStatsCurrentCounts(t *testing.T) {
	l := newTestLoop(t)
	var hs []*Handle
	for i := 0; i < 4; i++ {
		h, _ := l.CallLater(10, func() {})
		hs = append(hs, h)
	}
	hs[0].Cancel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	l.AddReader(int(r.Fd()), func() {})
	l.AddWriter(int(w.Fd()), func() {})
	l.NewTask(func(task *Task) { task.Return(0, nil) })
	s := l.Stats()
	if s.Timers != 3 || s.FDs != 2 || s.Tasks != 1 {
		t.Fatalf("timers %d fds %d tasks %d, want 3 2 1", s.Timers, s.FDs, s.Tasks)
	}
	before := s.Events
	l.RunOnce(true) // the task ends; the pipe's write end is writable
	s = l.Stats()
	if s.Tasks != 0 || s.Events-before != 1 {
		t.Fatalf("after a run: tasks %d, events +%d", s.Tasks, s.Events-before)
	}
	l.RemoveReader(int(r.Fd()))
	if got := l.Stats().FDs; got != 1 {
		t.Fatalf("fds after RemoveReader = %d", got)
	}
}

func TestStatsIdleAndBusy(t *testing.T) {
	l := newTestLoop(t)
	l.CallLater(0.05, func() { l.Stop() })
	start := time.Now()
	l.RunForever()
	wall := time.Since(start)
	s := l.Stats()
	if s.Idle < 45*time.Millisecond || s.Running < s.Idle || s.Running > wall || s.Busy() > 20*time.Millisecond {
		t.Fatalf("blocked 50 ms: idle %v running %v busy %v (wall %v)", s.Idle, s.Running, s.Busy(), wall)
	}
	if u := s.Utilization(Stats{}); u > 0.4 {
		t.Fatalf("utilization of a sleeping loop = %.2f", u)
	}
	l.CallSoon(func() {
		for until := time.Now().Add(50 * time.Millisecond); time.Now().Before(until); {
		}
	})
	l.CallSoon(func() { l.Stop() })
	l.RunForever()
	s2 := l.Stats()
	if s2.Idle-s.Idle > 5*time.Millisecond || s2.Busy()-s.Busy() < 50*time.Millisecond {
		t.Fatalf("busy 50 ms: idle +%v busy +%v", s2.Idle-s.Idle, s2.Busy()-s.Busy())
	}
	if u := s2.Utilization(s); u < 0.8 {
		t.Fatalf("utilization of a busy interval = %.2f", u)
	}
	// Read from a callback, a run in progress counts up to the call.
	var mid Stats
	l.CallLater(0.02, func() { mid = l.Stats(); l.Stop() })
	l.RunForever()
	if mid.Running-s2.Running < 15*time.Millisecond {
		t.Fatalf("a run in progress was not counted: +%v", mid.Running-s2.Running)
	}
}
