// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fsLog records a watcher's events; until runs the loop until one matches
// (with a generous limit: the machine may be loaded; no fixed sleeps).
type fsLog struct {
	evs []FSEvent
}

func (g *fsLog) add(ev FSEvent) { g.evs = append(g.evs, ev) }

func (g *fsLog) has(match func(FSEvent) bool) bool {
	for _, ev := range g.evs {
		if match(ev) {
			return true
		}
	}
	return false
}

func (g *fsLog) until(t *testing.T, l *Loop, what string, match func(FSEvent) bool) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for !g.has(match) {
		if time.Now().After(end) {
			t.Fatalf("no event for %s; got %+v", what, g.evs)
		}
		l.CallLater(0.01, func() {})
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
	}
}

func evIs(path string, kind FSEventKind) func(FSEvent) bool {
	return func(ev FSEvent) bool { return ev.Path == path && ev.Events&kind != 0 && ev.Err == nil }
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A write to a file in a watched directory is a change of that name; a
// rename is a rename of both names; the loop's fd set is empty again once
// the watcher is cancelled.
func TestWatchPathChangeAndRename(t *testing.T) {
	l := newTestLoop(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), "1")
	var g fsLog
	w, err := l.WatchPath(dir, false, g.add)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Active() || w.Polling() {
		t.Fatalf("Active %v Polling %v", w.Active(), w.Polling())
	}
	writeFile(t, filepath.Join(dir, "a"), "22")
	if runtime.GOOS == "linux" {
		g.until(t, l, "write a", evIs("a", FSChange))
	} else {
		g.until(t, l, "write a", evIs(filepath.Base(dir), FSChange))
	}
	if err := os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		g.until(t, l, "rename from a", evIs("a", FSRename))
		g.until(t, l, "rename to b", evIs("b", FSRename))
	}
	w.Cancel()
	w.Cancel() // twice: nothing
	if w.Active() || l.nWatched != 0 || l.fsw.backend != nil || l.NumFSWatchers() != 0 {
		t.Fatalf("after Cancel: active %v, %d fds watched, backend %v, %d watchers",
			w.Active(), l.nWatched, l.fsw.backend, len(l.fsw.all))
	}
	n := len(g.evs)
	writeFile(t, filepath.Join(dir, "b"), "333")
	l.CallLater(0.05, func() {})
	l.RunOnce(false)
	if len(g.evs) != n {
		t.Fatalf("a cancelled watcher reported %+v", g.evs[n:])
	}
}

// Bad input is an error, never a panic.
func TestWatchPathBadInput(t *testing.T) {
	l := newTestLoop(t)
	dir := t.TempDir()
	if _, err := l.WatchPath("", false, func(FSEvent) {}); err != EINVAL {
		t.Fatalf("empty path: %v", err)
	}
	if _, err := l.WatchPath(dir, false, nil); err != EINVAL {
		t.Fatalf("nil fn: %v", err)
	}
	if _, err := l.WatchPath(filepath.Join(dir, "missing"), false, func(FSEvent) {}); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("missing path: %v", err)
	}
	if _, err := l.PollPath(dir, 0, func(FSEvent) {}); err != EINVAL {
		t.Fatalf("interval 0: %v", err)
	}
	if _, err := l.PollPath(dir, -time.Second, func(FSEvent) {}); err != EINVAL {
		t.Fatalf("negative interval: %v", err)
	}
	if l.fsw.backend != nil || len(l.fsw.all) != 0 || l.nWatched != 0 {
		t.Fatal("a failed start left state behind")
	}
	l.Close()
	if _, err := l.WatchPath(dir, false, func(FSEvent) {}); err != ECLOSED {
		t.Fatalf("closed loop: %v", err)
	}
	if _, err := l.PollPath(dir, time.Second, func(FSEvent) {}); err != ECLOSED {
		t.Fatalf("closed loop poll: %v", err)
	}
}

// A callback may cancel its own watcher (and another); neither hears
// anything after that, even events read in the same iteration.
func TestWatchPathCancelInCallback(t *testing.T) {
	l := newTestLoop(t)
	dir := t.TempDir()
	var other *FSWatcher
	n, m := 0, 0
	var w *FSWatcher
	var err error
	w, err = l.WatchPath(dir, false, func(FSEvent) {
		n++
		w.Cancel()
		other.Cancel()
	})
	if err != nil {
		t.Fatal(err)
	}
	other, err = l.WatchPath(dir, false, func(FSEvent) { m++ })
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		writeFile(t, filepath.Join(dir, "f"+string(rune('0'+i))), "x")
	}
	runUntil(t, l, 20*time.Second, func() bool { return n > 0 })
	l.CallLater(0.05, func() {})
	l.RunOnce(false)
	if n != 1 || m != 0 {
		t.Fatalf("after cancelling both in the first callback: %d and %d calls, want 1 and 0", n, m)
	}
	if l.fsw.backend != nil {
		t.Fatal("backend still open with no watcher")
	}
}

// A panic in a callback is reported to the exception handler; the watcher
// and the loop go on.
func TestWatchPathPanicReported(t *testing.T) {
	l := newTestLoop(t)
	dir := t.TempDir()
	reported := 0
	l.SetExceptionHandler(func(*ErrorContext) { reported++ })
	calls := 0
	if _, err := l.WatchPath(dir, false, func(FSEvent) { calls++; panic("boom") }); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "x"), "1")
	runUntil(t, l, 20*time.Second, func() bool { return reported > 0 })
	writeFile(t, filepath.Join(dir, "y"), "1")
	runUntil(t, l, 20*time.Second, func() bool { return calls > 1 })
}

// Deleting the watched directory is reported with ENOENT and ends the
// watcher.
func TestWatchPathRootDeleted(t *testing.T) {
	l := newTestLoop(t)
	dir := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var g fsLog
	var w *FSWatcher
	activeInLast := true
	w, err := l.WatchPath(dir, false, func(ev FSEvent) {
		g.add(ev)
		activeInLast = w.Active()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	g.until(t, l, "root deleted", func(ev FSEvent) bool {
		return ev.Path == "root" && errors.Is(ev.Err, unix.ENOENT) && ev.Status() == -int(unix.ENOENT)
	})
	if w.Active() || activeInLast || len(l.fsw.all) != 0 {
		t.Fatal("the watcher of a deleted directory is still active")
	}
}

// Closing the loop stops its watchers and closes their fds.
func TestWatchPathLoopClose(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	w, err := l.WatchPath(t.TempDir(), false, func(FSEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.PollPath(t.TempDir(), time.Second, func(FSEvent) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Active() || p.Active() || l.fsw.backend != nil {
		t.Fatal("watchers survive Close")
	}
	w.Cancel()
	p.Cancel()
}
