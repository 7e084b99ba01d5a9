// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// File-system watchers through the purego binding (ll_fs_watch,
// ll_fs_poll): events arrive with their relative paths, a recursive
// watcher follows a new subdirectory, the poller reports modify,
// disappear and appear, cancel inside the callback is safe, and bad input
// gets codes.

type fsEvents struct{ evs []ll.FSEvent }

func (g *fsEvents) add(ev ll.FSEvent) { g.evs = append(g.evs, ev) }

func (g *fsEvents) has(path string, kind int32, err error) bool {
	for _, ev := range g.evs {
		if ev.Path == path && ev.Events&kind != 0 && (err == nil && ev.Err == nil || err != nil && errors.Is(ev.Err, err)) {
			return true
		}
	}
	return false
}

// waitFS runs the loop until g has the event, for at most 20 s (the machine
// may be loaded): no fixed sleep.
func waitFS(t *testing.T, l *ll.Loop, g *fsEvents, path string, kind int32, err error) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for !g.has(path, kind, err) {
		if time.Now().After(end) {
			t.Fatalf("no event %q kind %d err %v; got %+v", path, kind, err, g.evs)
		}
		l.CallLater(10*time.Millisecond, func() {})
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFS(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFSWatchChangeRenameRecursive(t *testing.T) {
	l := newLoop(t)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFS(t, filepath.Join(root, "a"), "1")
	var g fsEvents
	w, err := l.WatchPath(root, true, g.add)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID() == 0 || !w.Active() {
		t.Fatalf("id %#x active %v", w.ID(), w.Active())
	}
	writeFS(t, filepath.Join(root, "a"), "22")
	waitFS(t, l, &g, "a", ll.FSChange, nil)
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	waitFS(t, l, &g, "b", ll.FSRename, nil)
	writeFS(t, filepath.Join(root, "sub", "f"), "1")
	waitFS(t, l, &g, "sub/f", ll.FSRename, nil)
	os.Remove(filepath.Join(root, "sub", "f"))
	g.evs = nil
	waitFS(t, l, &g, "sub/f", ll.FSRename, nil)
	os.Mkdir(filepath.Join(root, "new"), 0o755)
	writeFS(t, filepath.Join(root, "new", "g"), "1")
	waitFS(t, l, &g, "new/g", ll.FSRename, nil)
	if err := w.Cancel(); err != nil || w.Active() || w.ID() != 0 {
		t.Fatalf("Cancel: %v, active %v", err, w.Active())
	}
	if err := w.Cancel(); err != nil {
		t.Fatalf("second Cancel: %v", err)
	}
	n := len(g.evs)
	writeFS(t, filepath.Join(root, "b"), "333")
	l.CallLater(50*time.Millisecond, func() {})
	l.RunOnce(false)
	if len(g.evs) != n {
		t.Fatalf("a cancelled watcher reported %+v", g.evs[n:])
	}
}

func TestFSPollModifyDisappearAppear(t *testing.T) {
	l := newLoop(t)
	path := filepath.Join(t.TempDir(), "p")
	writeFS(t, path, "1")
	var g fsEvents
	w, err := l.PollPath(path, 20*time.Millisecond, g.add)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Cancel()
	writeFS(t, path, "22")
	waitFS(t, l, &g, path, ll.FSChange, nil)
	os.Remove(path)
	waitFS(t, l, &g, path, ll.FSRename, syscall.ENOENT)
	writeFS(t, path, "1")
	g.evs = nil
	waitFS(t, l, &g, path, ll.FSRename, nil)
}

// Cancel inside the callback, with several events read at once: one call.
func TestFSWatchCancelInCallback(t *testing.T) {
	l := newLoop(t)
	dir := t.TempDir()
	calls := 0
	var w *ll.FSWatcher
	w, err := l.WatchPath(dir, false, func(ll.FSEvent) {
		calls++
		if err := w.Cancel(); err != nil {
			t.Errorf("Cancel in the callback: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"x", "y", "z"} {
		writeFS(t, filepath.Join(dir, n), "1")
	}
	end := time.Now().Add(20 * time.Second)
	for calls == 0 && time.Now().Before(end) {
		l.CallLater(10*time.Millisecond, func() {})
		l.RunOnce(false)
	}
	l.CallLater(50*time.Millisecond, func() {})
	l.RunOnce(false)
	if calls != 1 {
		t.Fatalf("%d calls after cancelling in the first", calls)
	}
	before := ll.LiveCallbacks()
	w2, _ := l.WatchPath(dir, false, func(ll.FSEvent) {})
	w2.Cancel()
	if ll.LiveCallbacks() != before {
		t.Fatal("a cancelled watcher's callback entry leaks")
	}
}

func TestFSWatchBadInput(t *testing.T) {
	l := newLoop(t)
	dir := t.TempDir()
	nop := func(ll.FSEvent) {}
	if _, err := l.WatchPath("", false, nop); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("empty path: %v", err)
	}
	if _, err := l.WatchPath(dir, false, nil); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("nil fn: %v", err)
	}
	if _, err := l.WatchPath(filepath.Join(dir, "missing"), false, nop); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("missing path: %v", err)
	}
	if _, err := l.PollPath(dir, 0, nop); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("interval 0: %v", err)
	}
	if _, err := l.PollPath(dir, -time.Second, nop); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("negative interval: %v", err)
	}
	w, err := l.WatchPath(dir, false, nop)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Active() {
		t.Fatal("a watcher survives its loop's Close")
	}
	if _, err := l.WatchPath(dir, false, nop); err == nil {
		t.Fatal("WatchPath on a closed loop succeeded")
	}
}
