// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"sync"
	"testing"
	"time"
)

func newTestLoop(t *testing.T) *Loop {
	t.Helper()
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestCallSoonFIFOAndNextIteration(t *testing.T) {
	l := newTestLoop(t)
	var got []int
	for i := 0; i < 5; i++ {
		i := i
		l.CallSoon(func() {
			got = append(got, i)
			if i == 0 {
				l.CallSoon(func() { got = append(got, 100) })
			}
		})
	}
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	want := []int{0, 1, 2, 3, 4}
	if len(got) != len(want) {
		t.Fatalf("first iteration ran %v, want %v", got, want)
	}
	l.RunOnce(true)
	if got[5] != 100 {
		t.Fatalf("callback added during iteration ran at %v", got)
	}
}

func TestTimersOrderedByDeadlineThenSequence(t *testing.T) {
	l := newTestLoop(t)
	var got []int
	start := time.Now() // before now: the deadlines count from now, so from start at least 30 ms pass
	now := l.Time()
	l.CallAt(now+0.02, func() { got = append(got, 3) })
	l.CallAt(now+0.01, func() { got = append(got, 1) })
	l.CallAt(now+0.01, func() { got = append(got, 2) })
	l.CallAt(now+0.03, func() { got = append(got, 4); l.Stop() })
	l.RunForever()
	if time.Since(start) < 30*time.Millisecond {
		t.Fatalf("timers fired early: %v", time.Since(start))
	}
	if len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 4 {
		t.Fatalf("order %v", got)
	}
}

func TestTimerNeverEarly(t *testing.T) {
	l := newTestLoop(t)
	for i := 0; i < 50; i++ {
		d := float64(i%7) * 0.0003
		sched := l.Time()
		l.CallLater(d, func() {
			if l.Time() < sched+d {
				t.Errorf("timer %d fired %.9f early", i, sched+d-l.Time())
			}
		})
	}
	l.CallLater(0.01, func() { l.Stop() })
	l.RunForever()
}

func TestCancelPurge(t *testing.T) {
	l := newTestLoop(t)
	var hs []*Handle
	ran := 0
	for i := 0; i < 300; i++ {
		h, _ := l.CallLater(10, func() { ran++ })
		hs = append(hs, h)
	}
	for _, h := range hs[:200] {
		h.Cancel()
	}
	l.RunOnce(true)
	if l.timers.len() != 100 || l.timerCancelled != 0 {
		t.Fatalf("after purge: %d timers, %d cancelled", l.timers.len(), l.timerCancelled)
	}
	for _, h := range hs[250:300] { // not at the head: only the purge would drop them
		h.Cancel()
	}
	l.RunOnce(true)
	if l.timers.len() != 100 {
		t.Fatalf("purge below threshold removed timers: %d", l.timers.len())
	}
}

func TestThreadsafeWakesBlockedPoll(t *testing.T) {
	l := newTestLoop(t)
	const threads, per = 8, 500
	var mu sync.Mutex
	count := 0
	var wg sync.WaitGroup
	l.CallLater(0.02, func() {
		for g := 0; g < threads; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per; i++ {
					l.CallSoonThreadsafe(func() {
						mu.Lock()
						count++
						c := count
						mu.Unlock()
						if c == threads*per {
							l.Stop()
						}
					})
				}
			}()
		}
	})
	done := make(chan struct{})
	go func() { l.RunForever(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("loop did not wake")
	}
	wg.Wait()
	if count != threads*per {
		t.Fatalf("ran %d", count)
	}
}

func TestReaderOnPipe(t *testing.T) {
	l := newTestLoop(t)
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	fd := int(r.Fd())
	got := 0
	if err := l.AddReader(fd, func() {
		buf := make([]byte, 10)
		n, _ := r.Read(buf)
		got += n
		l.Stop()
	}); err != nil {
		t.Fatal(err)
	}
	l.CallLater(0.01, func() { w.Write([]byte("hey")) })
	l.RunForever()
	if got != 3 {
		t.Fatalf("read %d", got)
	}
	if ok, _ := l.RemoveReader(fd); !ok {
		t.Fatal("remove reported no reader")
	}
	if ok, _ := l.RemoveReader(fd); ok {
		t.Fatal("second remove reported a reader")
	}
	if err := l.AddReader(-1, func() {}); Code(err) != -9 {
		t.Fatalf("bad fd: %v", err)
	}
}

func TestCallSoonAllocFree(t *testing.T) {
	l := newTestLoop(t)
	fn := func() {}
	for i := 0; i < 100; i++ {
		l.CallSoon(fn)
	}
	l.RunOnce(true)
	allocs := testing.AllocsPerRun(1000, func() {
		l.CallSoon(fn)
		l.RunOnce(true)
	})
	if allocs > 0 {
		t.Fatalf("%.1f allocs per call_soon+iteration", allocs)
	}
}

// An exception handler run by Close's sweep (a never-retrieved exception
// disposed of when Close drops the done callback holding its future) gets
// ECLOSED from every scheduling call: nothing it schedules would run.
func TestCloseSweepRefusesScheduling(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var got []error
	l.SetExceptionHandler(func(*ErrorContext) {
		_, e1 := l.CallSoon(func() {})
		_, e2 := l.CallLater(0, func() {})
		e3 := l.CallSoonThreadsafe(func() {})
		_, e4 := l.NewFuture()
		got = append(got, e1, e2, e3, e4)
	})
	f, err := l.NewFuture()
	if err != nil {
		t.Fatal(err)
	}
	f.AddDoneCallback(func(*Future) {})
	f.SetException(int(ETIMEDOUT), "never retrieved", 0, nil)
	f.Release()
	l.Close()
	if len(got) != 4 {
		t.Fatalf("the handler ran %d times in the sweep", len(got)/4)
	}
	for i, e := range got {
		if e != ECLOSED {
			t.Errorf("call %d in the sweep: %v, want ECLOSED", i, e)
		}
	}
}
