// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fsAwait runs its loop until a call's future is done.
type fsAwait struct {
	t *testing.T
	l *Loop
}

// ok returns the future's value, or fails the test.
func (w fsAwait) ok(f *Future, err error) uintptr {
	t, l := w.t, w.l
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, f.Done)
	v, err := f.Result()
	if err != nil {
		t.Fatalf("future failed: %v", err)
	}
	return v
}

// fail returns the code the future failed with, or fails the test.
func (w fsAwait) fail(f *Future, err error) int {
	t, l := w.t, w.l
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, f.Done)
	_, err = f.Result()
	if err == nil {
		t.Fatal("future succeeded, want a failure")
	}
	return Code(err)
}

// Open, write, read (at an offset and at the position), stat, fstat,
// ftruncate, fsync and close: each value is its system call's.
func TestFSFileRoundTrip(t *testing.T) {
	l := newTestLoop(t)
	w := fsAwait{t, l}
	path := filepath.Join(t.TempDir(), "f")
	fd := int(w.ok(l.FSOpen(path, unix.O_RDWR|unix.O_CREAT, 0o640)))
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC == 0 {
		t.Error("the fd FSOpen made is not close-on-exec")
	}
	msg := []byte("hello, file pool")
	if n := w.ok(l.FSWrite(fd, msg, -1)); n != uintptr(len(msg)) {
		t.Fatalf("write: %d bytes", n)
	}
	if n := w.ok(l.FSWrite(fd, []byte("HELLO"), 0)); n != 5 {
		t.Fatalf("pwrite: %d bytes", n)
	}
	buf := make([]byte, 64)
	n := w.ok(l.FSRead(fd, buf, 7))
	if got := string(buf[:n]); got != "file pool" {
		t.Errorf("pread at 7: %q", got)
	}
	if n := w.ok(l.FSRead(fd, buf, -1)); n != 0 {
		t.Errorf("read at the end: %d bytes, want 0", n)
	}
	var st, fst unix.Stat_t
	w.ok(l.FSStat(path, &st))
	w.ok(l.FSFstat(fd, &fst))
	if st.Size != int64(len(msg)) || st.Ino != fst.Ino || uint32(st.Mode)&0o777 != 0o640&^umask() {
		t.Errorf("stat: size %d mode %o; fstat ino %d vs %d", st.Size, st.Mode, fst.Ino, st.Ino)
	}
	w.ok(l.FSFtruncate(fd, 3))
	w.ok(l.FSFsync(fd))
	w.ok(l.FSFstat(fd, &fst))
	if fst.Size != 3 {
		t.Errorf("size after ftruncate(3): %d", fst.Size)
	}
	w.ok(l.FSClose(fd))
	if code := w.fail(l.FSClose(fd)); code != -int(unix.EBADF) {
		t.Errorf("second close: %d, want -EBADF", code)
	}
}

func umask() uint32 {
	m := unix.Umask(0)
	unix.Umask(m)
	return uint32(m)
}

// Every call's failure is its system call's -errno.
func TestFSErrors(t *testing.T) {
	l := newTestLoop(t)
	w := fsAwait{t, l}
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	var st unix.Stat_t
	var names []string
	buf := make([]byte, 8)
	enoent := -int(unix.ENOENT)
	ebadf := -int(unix.EBADF)
	for _, c := range []struct {
		name string
		want int
		call func() (*Future, error)
	}{
		{"open", enoent, func() (*Future, error) { return l.FSOpen(missing, unix.O_RDONLY, 0) }},
		{"read", ebadf, func() (*Future, error) { return l.FSRead(-1, buf, 0) }},
		{"write", ebadf, func() (*Future, error) { return l.FSWrite(-1, buf, -1) }},
		{"stat", enoent, func() (*Future, error) { return l.FSStat(missing, &st) }},
		{"lstat", enoent, func() (*Future, error) { return l.FSLstat(missing, &st) }},
		{"fstat", ebadf, func() (*Future, error) { return l.FSFstat(-1, &st) }},
		{"rename", enoent, func() (*Future, error) { return l.FSRename(missing, missing+"2") }},
		{"unlink", enoent, func() (*Future, error) { return l.FSUnlink(missing) }},
		{"mkdir", -int(unix.EEXIST), func() (*Future, error) { return l.FSMkdir(dir, 0o700) }},
		{"rmdir", enoent, func() (*Future, error) { return l.FSRmdir(missing) }},
		{"scandir", enoent, func() (*Future, error) { return l.FSScandir(missing, &names) }},
		{"fsync", ebadf, func() (*Future, error) { return l.FSFsync(-1) }},
		{"ftruncate", ebadf, func() (*Future, error) { return l.FSFtruncate(-1, 0) }},
		{"copyfile", enoent, func() (*Future, error) { return l.FSCopyfile(missing, missing+"2", 0) }},
		{"sendfile", ebadf, func() (*Future, error) { return l.FSSendfile(-1, -1, 0, 8) }},
	} {
		f, err := c.call()
		if got := w.fail(f, err); got != c.want {
			t.Errorf("%s: failed with %d, want %d", c.name, got, c.want)
		}
		if _, msg, _, _ := f.Exception(); msg == "" {
			t.Errorf("%s: the failure has no message", c.name)
		}
	}
}

// Arguments no system call could take are refused at once, and nothing runs.
func TestFSBadInput(t *testing.T) {
	l := newTestLoop(t)
	buf := make([]byte, 8)
	for name, call := range map[string]func() (*Future, error){
		"read offset -2":     func() (*Future, error) { return l.FSRead(0, buf, -2) },
		"write offset -2":    func() (*Future, error) { return l.FSWrite(1, buf, -2) },
		"stat nil":           func() (*Future, error) { return l.FSStat("/", nil) },
		"lstat nil":          func() (*Future, error) { return l.FSLstat("/", nil) },
		"fstat nil":          func() (*Future, error) { return l.FSFstat(0, nil) },
		"scandir nil":        func() (*Future, error) { return l.FSScandir("/", nil) },
		"ftruncate negative": func() (*Future, error) { return l.FSFtruncate(0, -1) },
		"close negative":     func() (*Future, error) { return l.FSClose(-1) },
		"copyfile flags":     func() (*Future, error) { return l.FSCopyfile("a", "b", 8) },
		"sendfile negative":  func() (*Future, error) { return l.FSSendfile(1, 0, 0, -1) },
		"sendfile offset":    func() (*Future, error) { return l.FSSendfile(1, 0, -2, 1) },
		"run nil":            func() (*Future, error) { return l.RunInFS(nil) },
	} {
		if f, err := call(); err != EINVAL || f != nil {
			t.Errorf("%s: %v, want EINVAL", name, err)
		}
	}
	if checkIO(MaxFSIO+1, 0) != EINVAL || checkIO(MaxFSIO, -1) != nil {
		t.Error("the length bound is not MaxFSIO")
	}
	if l.SetFSWorkers(0) != EINVAL || l.SetFSWorkers(MaxExecutorWorkers+1) != EINVAL {
		t.Error("SetFSWorkers takes an out-of-range count")
	}
	l.Close()
	if _, err := l.FSUnlink("x"); err != ECLOSED {
		t.Errorf("closed loop: %v, want ECLOSED", err)
	}
	if l.SetFSWorkers(2) != ECLOSED {
		t.Error("SetFSWorkers on a closed loop")
	}
}

// mkdir, scandir (sorted, no dot entries), rename, unlink, lstat of a
// link, rmdir.
func TestFSDirectories(t *testing.T) {
	l := newTestLoop(t)
	w := fsAwait{t, l}
	dir := filepath.Join(t.TempDir(), "d")
	w.ok(l.FSMkdir(dir, 0o755))
	for _, n := range []string{"b", "a", "c"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	if n := w.ok(l.FSScandir(dir, &names)); n != 3 || !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("scandir: %d %q", n, names)
	}
	w.ok(l.FSRename(filepath.Join(dir, "c"), filepath.Join(dir, "z")))
	if err := os.Symlink("a", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	w.ok(l.FSLstat(filepath.Join(dir, "link"), &st))
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFLNK {
		t.Errorf("lstat of a link: mode %o", st.Mode)
	}
	w.ok(l.FSStat(filepath.Join(dir, "link"), &st))
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		t.Errorf("stat through a link: mode %o", st.Mode)
	}
	if code := w.fail(l.FSRmdir(dir)); code != -int(unix.ENOTEMPTY) {
		t.Errorf("rmdir of a full directory: %d", code)
	}
	for _, n := range []string{"a", "b", "z", "link"} {
		w.ok(l.FSUnlink(filepath.Join(dir, n)))
	}
	w.ok(l.FSScandir(dir, &names))
	if len(names) != 0 {
		t.Errorf("scandir of an empty directory: %q", names)
	}
	w.ok(l.FSRmdir(dir))
}

// copyfile copies contents and permission bits, replaces a destination,
// refuses one with EXCL, and FICLONE falls back to a copy.
func TestFSCopyfile(t *testing.T) {
	l := newTestLoop(t)
	w := fsAwait{t, l}
	dir := t.TempDir()
	from, to := filepath.Join(dir, "from"), filepath.Join(dir, "to")
	data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB: several kernel copies
	if err := os.WriteFile(from, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, []byte("a longer old destination than nothing"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.ok(l.FSCopyfile(from, to, 0))
	got, _ := os.ReadFile(to)
	fi, _ := os.Stat(to)
	if !bytes.Equal(got, data) || fi.Mode().Perm() != 0o600 {
		t.Errorf("copy: %d bytes, mode %v", len(got), fi.Mode())
	}
	if code := w.fail(l.FSCopyfile(from, to, FSCopyfileExcl)); code != -int(unix.EEXIST) {
		t.Errorf("EXCL onto an existing file: %d", code)
	}
	if got, _ := os.ReadFile(to); !bytes.Equal(got, data) {
		t.Error("a refused EXCL copy changed the destination")
	}
	to2 := filepath.Join(dir, "to2")
	w.ok(l.FSCopyfile(from, to2, FSCopyfileFiclone|FSCopyfileExcl))
	if got, _ := os.ReadFile(to2); !bytes.Equal(got, data) {
		t.Error("FICLONE did not fall back to a copy")
	}
	w.ok(l.FSCopyfile(from, from, 0)) // onto itself: nothing lost
	if got, _ := os.ReadFile(from); !bytes.Equal(got, data) {
		t.Error("copying a file onto itself lost it")
	}
}

// sendfile copies between two files, from an offset or from the position.
func TestFSSendfileFiles(t *testing.T) {
	l := newTestLoop(t)
	w := fsAwait{t, l}
	dir := t.TempDir()
	in, err := os.Create(filepath.Join(dir, "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	in.WriteString("0123456789")
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if n := w.ok(l.FSSendfile(int(out.Fd()), int(in.Fd()), 2, 5)); n != 5 {
		t.Fatalf("sendfile from 2: %d bytes", n)
	}
	in.Seek(8, 0)
	if n := w.ok(l.FSSendfile(int(out.Fd()), int(in.Fd()), -1, 100)); n != 2 {
		t.Fatalf("sendfile from the position: %d bytes", n)
	}
	if got, _ := os.ReadFile(out.Name()); string(got) != "2345689" {
		t.Errorf("out holds %q", got)
	}
}

// blockPool fills l's file pool (one worker) with a call that waits for
// the returned channel to close.
func blockPool(t *testing.T, l *Loop) (*Future, chan struct{}) {
	t.Helper()
	if err := l.SetFSWorkers(1); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	f, err := l.RunInFS(func() (uintptr, int) { close(started); <-release; return 7, 0 })
	if err != nil {
		t.Fatal(err)
	}
	<-started
	return f, release
}

// A queued call cancelled before a worker takes it never runs; a started
// one cannot be cancelled and completes with its value.
func TestFSCancel(t *testing.T) {
	l := newTestLoop(t)
	w := fsAwait{t, l}
	path := filepath.Join(t.TempDir(), "f")
	busy, release := blockPool(t, l)
	queued, err := l.FSMkdir(path, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if !queued.Cancel("never mind") {
		t.Fatal("cancelling a queued call failed")
	}
	if busy.Cancel("") {
		t.Fatal("a started call was cancelled")
	}
	close(release)
	if v := w.ok(busy, nil); v != 7 {
		t.Errorf("the started call's value: %d", v)
	}
	// A call queued after the withdrawn one runs, so the worker got past it.
	after, err := l.FSStat(filepath.Dir(path), new(unix.Stat_t))
	w.ok(after, err)
	if queued.State() != Cancelled {
		t.Errorf("withdrawn call: state %v", queued.State())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("a withdrawn mkdir ran")
	}
	if l.files().inflight != nil && len(l.files().inflight) != 0 {
		t.Errorf("%d records left in flight", len(l.files().inflight))
	}
}

// File calls wait neither for a busy executor nor for the resolver, and
// run at most the pool's bound at once.
func TestFSPoolApart(t *testing.T) {
	l := newTestLoop(t)
	w := fsAwait{t, l}
	if err := l.SetExecutorWorkers(1); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	defer close(hold)
	if _, err := l.RunInExecutor(func() (uintptr, int) { <-hold; return 0, 0 }); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RunInResolver(func() (uintptr, int) { <-hold; return 0, 0 }); err != nil {
		t.Fatal(err)
	}
	w.ok(l.FSStat("/", new(unix.Stat_t)))
	if got := l.files().max; got != DefaultFSWorkers {
		t.Errorf("the pool's bound: %d, want %d", got, DefaultFSWorkers)
	}
}

// Close withdraws queued calls and returns only after the started ones
// have finished with their buffers.
func TestFSCloseWaitsForStarted(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "f")
	busy, release := blockPool(t, l)
	_ = busy
	queued, err := l.FSMkdir(path, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	_ = queued
	finished := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(finished)
		close(release)
	}()
	l.Close()
	select {
	case <-finished:
	default:
		t.Error("Close returned while a started call still ran")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("a call queued at Close ran")
	}
}

// A burst of calls wakes enough workers to run DefaultFSWorkers at once,
// never more, and every call completes (no wake-up is lost when the
// workers wake each other).
func TestFSBurstBound(t *testing.T) {
	l := newTestLoop(t)
	var running, most atomic.Int32
	const n = 200
	futs := make([]*Future, n)
	for i := range futs {
		var err error
		futs[i], err = l.RunInFS(func() (uintptr, int) {
			r := running.Add(1)
			for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			running.Add(-1)
			return uintptr(i), 0
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	runUntil(t, l, 10*time.Second, func() bool { return allDone(futs) })
	for i, f := range futs {
		if v, err := f.Result(); v != uintptr(i) || err != nil {
			t.Fatalf("call %d: %d, %v", i, v, err)
		}
	}
	if got := most.Load(); got != DefaultFSWorkers {
		t.Errorf("%d calls ran at once, want the bound %d", got, DefaultFSWorkers)
	}
}

// A task awaiting a started file call and cancelled meanwhile is woken
// when the call completes (its buffer is in use until then) and must raise
// its cancellation at that step.
func TestFSTaskCancelWaitsForStartedCall(t *testing.T) {
	l := newTestLoop(t)
	busy, release := blockPool(t, l)
	steps, sawCancel := 0, false
	task, err := l.NewTask(func(tk *Task) {
		steps++
		if steps == 1 {
			tk.Await(busy)
			return
		}
		sawCancel = tk.MustRaiseCancel()
		tk.Raise(int(ECANCELLED), "cancelled", 0, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return steps == 1 })
	if !task.Cancel("stop") {
		t.Fatal("cancelling the task was refused")
	}
	for i := 0; i < 5; i++ {
		l.RunOnce(true)
	}
	if steps != 1 || busy.Done() {
		t.Fatalf("the task stepped (%d) or the started call ended (%v) before the call completed", steps, busy.Done())
	}
	close(release)
	runUntil(t, l, 5*time.Second, task.Done)
	if !sawCancel || task.State() != Cancelled || busy.State() != Finished {
		t.Errorf("raise cancel %v, task %v, call %v", sawCancel, task.State(), busy.State())
	}
}
