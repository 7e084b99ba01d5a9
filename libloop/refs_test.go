// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runDefault runs the loop in RunModeDefault, failing the test if it
// takes longer than limit (a loop kept alive by something it should not).
func runDefault(t *testing.T, l *Loop, limit time.Duration) bool {
	t.Helper()
	guard, _ := l.StartTimer(limit.Seconds(), 0, func() { t.Errorf("RunModeDefault still running after %v", limit); l.Stop() })
	guard.Unref()
	alive, err := l.Run(RunModeDefault)
	if err != nil {
		t.Fatal(err)
	}
	guard.Stop()
	return alive
}

func TestRunDefaultEndsWithTheLastReferencedTimer(t *testing.T) {
	l := newTestLoop(t)
	var got []string
	l.CallLater(0.01, func() { got = append(got, "a") })
	h, _ := l.CallLater(0.02, func() { got = append(got, "b") })
	if !h.HasRef() {
		t.Fatal("a new timer handle is unreferenced")
	}
	start := time.Now()
	if runDefault(t, l, 5*time.Second) {
		t.Fatal("Run reported work left after running out of it")
	}
	if len(got) != 2 || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("ran %v in %v, want both timers", got, time.Since(start))
	}
	// Nothing left: the next Run returns at once, running nothing.
	if alive, err := l.Run(RunModeDefault); alive || err != nil {
		t.Fatalf("Run on an empty loop: %v %v", alive, err)
	}
}

func TestUnrefTimerStillFiresButDoesNotKeepTheLoop(t *testing.T) {
	l := newTestLoop(t)
	fired := 0
	far, _ := l.CallLater(60, func() { t.Error("far timer ran") })
	far.Unref()
	if far.HasRef() {
		t.Fatal("HasRef after Unref")
	}
	near, _ := l.CallLater(0.01, func() { fired++ })
	near.Unref()
	l.CallLater(0.03, func() {}) // the only referenced one
	rep, _ := l.StartTimer(0.005, 0.005, func() { fired++ })
	rep.Unref()
	start := time.Now()
	runDefault(t, l, 5*time.Second)
	if el := time.Since(start); el > 10*time.Second || el < 30*time.Millisecond {
		t.Fatalf("ran %v", el)
	}
	if fired < 2 {
		t.Fatalf("unreferenced timers fired %d times, want them to run while the loop runs", fired)
	}
	if !rep.Active() || rep.HasRef() {
		t.Fatal("the repeating timer was stopped or re-referenced")
	}
	// Re-referenced, the repeating timer keeps the loop until it stops.
	rep.Stop()
	n := 0
	var rep2 *Timer
	rep2, _ = l.StartTimer(0.001, 0.001, func() {
		n++
		if n == 3 {
			rep2.Stop()
		}
	})
	rep2.Unref()
	rep2.Ref()
	runDefault(t, l, 5*time.Second)
	if n != 3 {
		t.Fatalf("re-referenced timer ran %d times", n)
	}
}

func TestStopWithReferencedWorkReportsAlive(t *testing.T) {
	l := newTestLoop(t)
	l.CallLater(60, func() {})
	l.CallSoon(func() { l.Stop() })
	if !runDefault(t, l, 5*time.Second) {
		t.Fatal("Stop with a referenced timer left: Run reported nothing left")
	}
	if alive, err := l.Run(RunModeNoWait); !alive || err != nil {
		t.Fatalf("NOWAIT with a timer left: %v %v", alive, err)
	}
	if _, err := l.Run(RunMode(7)); err != EINVAL {
		t.Fatalf("bad mode: %v", err)
	}
}

func TestUnrefHookAndSignalAndTransport(t *testing.T) {
	l := newTestLoop(t)
	checks := 0
	hk, _ := l.AddHook(HookCheck, func() { checks++ })
	hk.Unref()
	if err := l.AddSignalHandler(int(unix.SIGUSR2), func() {}, HostCall{}); err != nil {
		t.Fatal(err)
	}
	if err := l.UnrefSignal(int(unix.SIGUSR2)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.SignalHasRef(int(unix.SIGUSR2)); ok {
		t.Fatal("signal still referenced")
	}
	if err := l.UnrefSignal(int(unix.SIGUSR1)); err != EINVAL {
		t.Fatalf("unref of a signal with no handler: %v", err)
	}
	sp := socketpair(t)
	fd, _ := unix.Dup(sp[0])
	got := 0
	tr, err := l.OpenTransport(fd, Stream, func(ev *Event) bool {
		if ev.Kind == DataReceived {
			got += len(ev.Data)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	tr.Unref()
	if tr.HasRef() {
		t.Fatal("transport still referenced")
	}
	unix.Write(sp[1], []byte("hello"))
	l.CallLater(0.02, func() {})
	runDefault(t, l, 5*time.Second)
	if got != 5 || checks == 0 {
		t.Fatalf("unreferenced transport read %d bytes, hook ran %d times", got, checks)
	}
	// Referenced again, the transport keeps the loop until it is lost.
	tr.Ref()
	l.CallLater(0.01, func() { tr.Close() })
	runDefault(t, l, 5*time.Second)
	if !tr.IsClosing() {
		t.Fatal("Run returned before the referenced transport closed")
	}
	if l.Alive() {
		t.Fatal("alive with nothing referenced left")
	}
}

func TestUnrefProcessAndServer(t *testing.T) {
	l := newTestLoop(t)
	srv, err := l.ListenTCP("127.0.0.1", 0, 16, 0, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	srv.Unref()
	exited := false
	p, err := l.Spawn(&ProcessOptions{File: "/bin/sh", Argv: []string{"sh", "-c", "sleep 0.05"},
		Stdio: [3]int{StdioDevNull, StdioDevNull, StdioDevNull}}, func(ev *Event) bool {
		exited = exited || ev.Kind == ProcessExited
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	runDefault(t, l, 10*time.Second)
	if !exited {
		t.Fatal("Run returned before the referenced process exited")
	}
	if !srv.IsServing() || l.Alive() {
		t.Fatal("the unreferenced server was closed, or keeps the loop alive")
	}
	// An unreferenced process: Run returns at once and the child is
	// still reaped later.
	p2, _ := l.Spawn(&ProcessOptions{File: "/bin/sh", Argv: []string{"sh", "-c", "sleep 0.05"},
		Stdio: [3]int{StdioDevNull, StdioDevNull, StdioDevNull}}, func(*Event) bool { return false })
	p2.Unref()
	if p2.HasRef() || !p.HasRef() {
		t.Fatal("HasRef")
	}
	start := time.Now()
	runDefault(t, l, 10*time.Second)
	if time.Since(start) > 40*time.Millisecond {
		t.Fatalf("an unreferenced process kept the loop %v", time.Since(start))
	}
	srv.Close()
	p2.SendSignal(int(syscall.SIGKILL))
}

func TestExecutorJobKeepsTheLoopAlive(t *testing.T) {
	l := newTestLoop(t)
	var got uintptr
	f, _ := l.RunInExecutor(func() (uintptr, int) { time.Sleep(30 * time.Millisecond); return 7, 0 })
	f.AddDoneCallback(func(f *Future) { got, _ = f.Result() })
	runDefault(t, l, 5*time.Second)
	if got != 7 {
		t.Fatalf("Run returned before the job's outcome was delivered (%d)", got)
	}
}

func TestWalkListsEachKindAndSurvivesCloses(t *testing.T) {
	l := newTestLoop(t)
	h, _ := l.CallLater(60, func() {})
	tm, _ := l.StartTimer(60, 1, func() {})
	hk, _ := l.AddHook(HookPrepare, func() {})
	l.AddSignalHandler(int(unix.SIGUSR2), func() {}, HostCall{})
	sp := socketpair(t)
	fd, _ := unix.Dup(sp[0])
	tr, _ := l.OpenTransport(fd, Stream, func(*Event) bool { return false })
	srv, _ := l.ListenTCP("127.0.0.1", 0, 16, 0, func(*Event) bool { return false })
	p, err := l.Spawn(&ProcessOptions{File: "/bin/sh", Argv: []string{"sh", "-c", "sleep 5"},
		Stdio: [3]int{StdioDevNull, StdioDevNull, StdioDevNull}}, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	want := map[WalkKind]any{WalkHandle: h, WalkTimer: tm, WalkHook: hk, WalkSignal: Signal(unix.SIGUSR2),
		WalkTransport: tr, WalkServer: srv, WalkProcess: p}
	seen := map[WalkKind]int{}
	l.Walk(func(k WalkKind, obj any) bool {
		seen[k]++
		if want[k] != obj {
			t.Errorf("kind %d: got %v, want %v", k, obj, want[k])
		}
		return true
	})
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("kind %d listed %d times", k, seen[k])
		}
	}
	// Stops at the first false.
	n := 0
	l.Walk(func(WalkKind, any) bool { n++; return false })
	if n != 1 {
		t.Fatalf("walk went on after false: %d calls", n)
	}
	// The first call ends everything: nothing else is handed over.
	n = 0
	l.Walk(func(k WalkKind, obj any) bool {
		n++
		h.Cancel()
		tm.Stop()
		hk.Cancel()
		l.RemoveSignalHandler(int(unix.SIGUSR2))
		tr.Abort()
		srv.Close()
		return true
	})
	if n != 2 { // the handle, then the process: it has not exited yet
		t.Fatalf("walk handed over %d objects after they were ended", n)
	}
	p.SendSignal(int(syscall.SIGKILL))
	runDefault(t, l, 10*time.Second)
	l.Walk(func(k WalkKind, obj any) bool { t.Errorf("left after the run: %d %v", k, obj); return true })
}

func TestFSWatchersKeepTheLoopUntilUnreferenced(t *testing.T) {
	l := newTestLoop(t)
	dir := t.TempDir()
	heard := 0
	w, err := l.WatchPath(dir, false, func(FSEvent) { heard++ })
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.PollPath(dir, 10*time.Millisecond, func(FSEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Alive() {
		t.Fatal("referenced watchers do not keep the loop alive")
	}
	w.Unref()
	if !l.Alive() {
		t.Fatal("the referenced polling watcher does not keep the loop alive")
	}
	p.Unref() // neither its inotify fd nor its poll timer keeps it now
	if runDefault(t, l, 5*time.Second) {
		t.Fatal("Run reported work left with only unreferenced watchers")
	}
	// Unreferenced, it still reports: a referenced timer waits for it.
	var tick *Timer
	tick, _ = l.StartTimer(0.005, 0.005, func() {
		if heard > 0 {
			tick.Stop()
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	runDefault(t, l, 5*time.Second)
	if heard == 0 {
		t.Fatal("an unreferenced watcher heard nothing")
	}
	w.Ref()
	if !w.HasRef() || !l.Alive() {
		t.Fatal("Ref did not make the watcher keep the loop again")
	}
	w.Cancel()
	p.Cancel()
	if l.Alive() {
		t.Fatal("cancelled watchers still keep the loop")
	}
	n := 0
	l.Walk(func(kind WalkKind, obj any) bool { n++; return true })
	if n != 0 {
		t.Fatalf("walk lists %d objects after the watchers were cancelled", n)
	}
}

// A job's outcome and the pool's count of outstanding jobs change hands
// under the post queue's lock: a Run(RunDefault) that delivered the last
// outcome must not then wait in poll for a job still counted, nor return
// before an outcome is delivered. Each round is one chance for the race
// (the job sleeps so that the loop is in poll when the outcome comes).
func TestExecutorRunDefaultEndsAtEachLastOutcome(t *testing.T) {
	l := newTestLoop(t)
	for i := range 1000 {
		got := 0
		f, _ := l.RunInExecutor(func() (uintptr, int) { time.Sleep(100 * time.Microsecond); return 1, 0 })
		f.AddDoneCallback(func(*Future) { got++ })
		runDefault(t, l, 2*time.Second)
		if got != 1 {
			t.Fatalf("round %d: Run returned with %d outcomes delivered", i, got)
		}
		if t.Failed() {
			t.Fatalf("round %d hung", i)
		}
	}
}
