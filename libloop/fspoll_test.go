// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The polling watcher reports a modification, the path going away (with
// ENOENT) and coming back, and nothing after Cancel.
func TestPollPathModifyDisappearAppear(t *testing.T) {
	l := newTestLoop(t)
	path := filepath.Join(t.TempDir(), "p")
	var g fsLog
	w, err := l.PollPath(path, 20*time.Millisecond, g.add)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Polling() {
		t.Fatal("PollPath's watcher does not say it polls")
	}
	g.until(t, l, "missing at start", func(ev FSEvent) bool { return errors.Is(ev.Err, unix.ENOENT) && ev.Path == path })
	writeFile(t, path, "1")
	g.until(t, l, "appear", evIs(path, FSRename))
	writeFile(t, path, "22")
	g.until(t, l, "modify", evIs(path, FSChange))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	k := len(g.evs)
	runUntil(t, l, 20*time.Second, func() bool { return len(g.evs) > k })
	if ev := g.evs[k]; !errors.Is(ev.Err, unix.ENOENT) || ev.Events != FSRename {
		t.Fatalf("disappear reported as %+v", ev)
	}
	w.Cancel()
	writeFile(t, path, "333")
	n := len(g.evs)
	l.CallLater(0.1, func() {})
	l.RunOnce(false)
	if len(g.evs) != n || w.Active() || len(l.fsw.all) != 0 {
		t.Fatalf("a cancelled poller reported %+v", g.evs[n:])
	}
}

// An unchanged path is not reported: the baseline stat is taken at start.
func TestPollPathQuietWhenUnchanged(t *testing.T) {
	l := newTestLoop(t)
	path := filepath.Join(t.TempDir(), "p")
	writeFile(t, path, "1")
	var g fsLog
	if _, err := l.PollPath(path, 5*time.Millisecond, g.add); err != nil {
		t.Fatal(err)
	}
	ticks := 0
	tm, _ := l.StartTimer(0.005, 0.005, func() { ticks++ })
	runUntil(t, l, 20*time.Second, func() bool { return ticks >= 10 })
	tm.Stop()
	if len(g.evs) != 0 {
		t.Fatalf("an unchanged file was reported: %+v", g.evs)
	}
}

// A stat that hangs (a hung network file system) holds a file pool
// worker, not the loop: another timer keeps running meanwhile, no second
// stat starts while it hangs, and what it sees once it returns is
// reported. The hang is injected (pollStat): deterministic where a real
// slow file system is not.
func TestPollPathHungStatLeavesLoopRunning(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	pollStat = func(path string, st *unix.Stat_t) error {
		if calls.Add(1) == 2 {
			<-release
		}
		return unix.Stat(path, st)
	}
	t.Cleanup(func() { pollStat = unix.Stat }) // after the loop's Close (cleanups run last first)
	l := newTestLoop(t)
	path := filepath.Join(t.TempDir(), "p")
	writeFile(t, path, "1")
	var g fsLog
	if _, err := l.PollPath(path, 5*time.Millisecond, g.add); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return calls.Load() == 2 })
	ticks := 0
	tm, _ := l.StartTimer(0.002, 0.002, func() { ticks++ })
	runUntil(t, l, 5*time.Second, func() bool { return ticks >= 20 })
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d stats started while one hung, want none after it", n)
	}
	writeFile(t, path, "22")
	close(release)
	g.until(t, l, "the change seen by the hung stat", evIs(path, FSChange))
	tm.Stop()
	if len(g.evs) != 1 {
		t.Fatalf("events: %+v", g.evs)
	}
}

// Cancelling a watcher withdraws its stat if no worker has started it:
// with the pool's one worker busy, the first tick's stat never runs (only
// the baseline, made by PollPath, does) and nothing is reported.
func TestPollPathCancelWithdrawsQueuedStat(t *testing.T) {
	var calls atomic.Int32
	pollStat = func(path string, st *unix.Stat_t) error {
		calls.Add(1)
		return unix.Stat(path, st)
	}
	t.Cleanup(func() { pollStat = unix.Stat })
	l := newTestLoop(t)
	busy, release := blockPool(t, l)
	var g fsLog
	w, err := l.PollPath(t.TempDir(), time.Millisecond, g.add)
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return w.poll.stat != nil }) // a tick's stat, queued behind the busy worker
	w.Cancel()
	close(release)
	runUntil(t, l, 5*time.Second, busy.Done)
	l.CallLater(0.02, func() {})
	l.RunOnce(false)
	if n := calls.Load(); n != 1 || len(g.evs) != 0 {
		t.Fatalf("%d stats (the baseline and a withdrawn one: want 1), reported %+v", n, g.evs)
	}
}
