// SPDX-License-Identifier: MIT

package libloop

import (
	"runtime"
	"testing"
	"time"
)

// The fault campaign's cycle counts, seen from the core, where goroutines
// can be counted: connect/close cycles (here) and spawn/kill cycles
// (process_cycles_test.go) leave the number of goroutines and of open fds
// where they were. LIBLOOP_LONG_TESTS=1 (see tests/c) is for the C
// versions; these stay fast.

// settledGoroutines waits (briefly) for goroutines that are finishing.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for end := time.Now().Add(2 * time.Second); n > want && time.Now().Before(end); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

func TestConnectCloseCyclesLeaveNothing(t *testing.T) {
	l := newTestLoop(t)
	srv, err := l.ListenTCP("127.0.0.1", 0, 512, 0, echoProto)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	cycle := func(n int) {
		const batch = 50
		for done := 0; done < n; done += batch {
			made, lost := 0, 0
			for i := 0; i < batch; i++ {
				err := l.DialTCP("127.0.0.1", port, func(ev *Event) bool {
					if ev.Kind == ConnectionLost {
						lost++
					}
					return false
				}, func(tr *Transport, err error) {
					if err != nil {
						t.Errorf("connect: %v", err)
						lost++
						return
					}
					made++
					tr.Close()
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			runUntil(t, l, 10*time.Second, func() bool { return lost == batch })
			if made != batch {
				t.Fatalf("%d of %d connected", made, batch)
			}
		}
	}
	// the server's ends close once they read EOF: give them a moment
	settle := func() {
		for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
			l.CallLater(0.01, func() {})
			l.RunOnce(false)
		}
	}
	cycle(100) // warm up: the loop's tables at their working size
	settle()
	g0, fds0 := runtime.NumGoroutine(), openFDs(t)
	start := time.Now()
	cycle(10000)
	g1 := settledGoroutines(g0)
	settle()
	if fds := openFDs(t); fds != fds0 {
		t.Errorf("fds %d -> %d after 10,000 connect/close cycles", fds0, fds)
	}
	t.Logf("10000 connect/close cycles in %v; goroutines %d -> %d, fds %d -> %d",
		time.Since(start), g0, g1, fds0, openFDs(t))
	if g1 > g0 {
		t.Errorf("goroutines %d -> %d after 10,000 connect/close cycles", g0, g1)
	}
}
