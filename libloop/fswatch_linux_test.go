// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A recursive watcher hears of files created and deleted in a
// subdirectory, of a new subdirectory and a file made in it at once, and
// of a directory moved in; paths are relative to the root. A directory
// moved out is no longer watched.
func TestWatchPathRecursive(t *testing.T) {
	l := newTestLoop(t)
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	var g fsLog
	w, err := l.WatchPath(root, true, g.add)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "sub", "deep", "f"), "1")
	g.until(t, l, "create in sub/deep", evIs("sub/deep/f", FSRename))
	os.Remove(filepath.Join(root, "sub", "deep", "f"))
	g.until(t, l, "delete in sub/deep", func(ev FSEvent) bool {
		return ev.Path == "sub/deep/f" && ev.Events&FSRename != 0 && len(g.evs) > 1
	})

	// A new directory and a file in it straight away: the file may be
	// made before the directory's watch exists; it is reported anyway.
	if err := os.Mkdir(filepath.Join(root, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "new", "g"), "1")
	g.until(t, l, "new dir", evIs("new", FSRename))
	g.until(t, l, "file in new dir", evIs("new/g", FSRename))
	writeFile(t, filepath.Join(root, "new", "g"), "22")
	g.until(t, l, "write in new dir", evIs("new/g", FSChange))

	// Moved in from outside: watched; moved out: not.
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(outside, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(outside, "m"), filepath.Join(root, "m")); err != nil {
		t.Fatal(err)
	}
	g.until(t, l, "moved in", evIs("m", FSRename))
	writeFile(t, filepath.Join(root, "m", "h"), "1")
	g.until(t, l, "file in moved-in dir", evIs("m/h", FSRename))
	if err := os.Rename(filepath.Join(root, "m"), filepath.Join(outside, "m2")); err != nil {
		t.Fatal(err)
	}
	g.until(t, l, "moved out", func(ev FSEvent) bool {
		return ev.Path == "m" && ev.Events&FSRename != 0 && g.evs[len(g.evs)-1].Path == "m"
	})
	for _, list := range l.fsw.backend.wds {
		for _, e := range list {
			if e.rel == "m" {
				t.Fatal("a directory moved out is still watched")
			}
		}
	}
	w.Cancel()
	if l.fsw.backend != nil {
		t.Fatal("the inotify fd outlives the last watcher")
	}
}

// Events read in one iteration merge per path: 200 writes alternating
// between two files (which the kernel's own merging of identical
// consecutive events leaves as 400 records) are a report or two per file.
func TestWatchPathCoalesces(t *testing.T) {
	l := newTestLoop(t)
	dir := t.TempDir()
	var g fsLog
	if _, err := l.WatchPath(dir, false, g.add); err != nil {
		t.Fatal(err)
	}
	var fs [2]*os.File
	for i, name := range []string{"c", "d"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fs[i] = f
	}
	for i := 0; i < 200; i++ {
		fs[i%2].Write([]byte("x"))
	}
	g.until(t, l, "writes to c", evIs("c", FSChange))
	g.until(t, l, "writes to d", evIs("d", FSChange))
	if len(g.evs) > 6 {
		t.Fatalf("200 writes to two files gave %d reports: %+v", len(g.evs), g.evs)
	}
}

// A queue overflow is reported as ENOBUFS to each watcher, which goes on:
// more writes than the kernel queues (max_queued_events), alternating
// between two files so that the kernel cannot merge them, made while the
// loop does not read.
func TestWatchPathOverflow(t *testing.T) {
	l := newTestLoop(t)
	dir := t.TempDir()
	var g fsLog
	w, err := l.WatchPath(dir, true, g.add)
	if err != nil {
		t.Fatal(err)
	}
	limit := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		fmt.Sscan(string(b), &limit)
	}
	var fs [2]*os.File
	for i, name := range []string{"a", "b"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fs[i] = f
	}
	for i := 0; i < limit+100; i++ {
		fs[i%2].Write([]byte("x"))
	}
	g.until(t, l, "overflow", func(ev FSEvent) bool {
		return ev.Status() == -int(unix.ENOBUFS) && ev.Path == "" && ev.Events == FSChange|FSRename
	})
	n := 0
	for _, ev := range g.evs {
		if ev.Err != nil {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d overflow reports for one overflow", n)
	}
	writeFile(t, filepath.Join(dir, "after"), "1")
	g.until(t, l, "event after overflow", evIs("after", FSRename))
	if !w.Active() {
		t.Fatal("overflow stopped the watcher")
	}
}

// A recursive watcher names a file made in a new subdirectory relative to
// the watched directory.
func ExampleLoop_WatchPath() {
	loop, _ := New()
	defer loop.Close()
	root, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(root)

	seen := false
	w, err := loop.WatchPath(root, true, func(ev FSEvent) {
		if ev.Path == filepath.Join("sub", "f") && ev.Events&FSRename != 0 && !seen {
			seen = true
			fmt.Println("created:", ev.Path)
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Cancel()
	os.Mkdir(filepath.Join(root, "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "sub", "f"), []byte("1"), 0o644)
	for end := time.Now().Add(20 * time.Second); !seen && time.Now().Before(end); {
		loop.CallLater(0.01, func() {})
		loop.RunOnce(false)
	}
	// Output: created: sub/f
}
