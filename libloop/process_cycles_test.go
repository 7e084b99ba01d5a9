// SPDX-License-Identifier: MIT

package libloop

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Spawn/kill cycles leave the number of goroutines and of open fds where
// they were (the fault campaign; settledGoroutines: stream_cycles_test.go).

func TestSpawnKillCyclesLeaveNothing(t *testing.T) {
	l := newTestLoop(t)
	cycle := func(n int) {
		const live = 16
		ended, started := 0, 0
		spawn := func() {
			started++
			exited, lost := false, false
			var p *Process
			p, err := l.Spawn(&ProcessOptions{File: "sh", Argv: []string{"sh", "-c", "echo up; exec sleep 30"},
				Stdio: [3]int{StdioDevNull, StdioPipe, StdioDevNull}}, func(ev *Event) bool {
				switch ev.Kind {
				case DataReceived:
					p.SendSignal(int(unix.SIGKILL))
				case ConnectionLost:
					lost = true
				case ProcessExited:
					exited = true
					if ev.Code != -int(unix.SIGKILL) {
						t.Errorf("return code %d, want -SIGKILL", ev.Code)
					}
				}
				if exited && lost {
					ended++
				}
				return false
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < live && started < n; i++ {
			spawn()
		}
		for ended < n {
			before := ended
			runUntil(t, l, 10*time.Second, func() bool { return ended > before })
			for started < n && started-ended < live {
				spawn()
			}
		}
	}
	cycle(8)
	g0, fds0 := runtime.NumGoroutine(), openFDs(t)
	start := time.Now()
	cycle(1000)
	g1 := settledGoroutines(g0)
	t.Logf("1000 spawn/kill cycles in %v; goroutines %d -> %d, fds %d -> %d",
		time.Since(start), g0, g1, fds0, openFDs(t))
	if g1 > g0 {
		t.Errorf("goroutines %d -> %d after 1,000 spawn/kill cycles", g0, g1)
	}
	if fds := openFDs(t); fds != fds0 {
		t.Errorf("fds %d -> %d after 1,000 spawn/kill cycles", fds0, fds)
	}
}
