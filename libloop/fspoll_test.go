// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"os"
	"path/filepath"
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
