// SPDX-License-Identifier: MIT

package tests

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	ll "github.com/libloop/libloop/bindings/go"
)

// fsRun runs its loop until a file call's future is done.
type fsRun struct {
	t *testing.T
	l *ll.Loop
}

// value returns the future's value (released), or fails the test.
func (r fsRun) value(f *ll.Future, err error) uintptr {
	t, l := r.t, r.l
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	runUntil(t, l, f, 10*time.Second)
	v, err := f.Result()
	if err != nil {
		t.Fatalf("file call failed: %v", err)
	}
	return v
}

// code returns the code the future failed with (released), or fails the test.
func (r fsRun) code(f *ll.Future, err error) ll.Error {
	t, l := r.t, r.l
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	runUntil(t, l, f, 10*time.Second)
	exc, err := f.Exception()
	if err != nil || exc == nil {
		t.Fatalf("file call: exception %v, %v; want a failure", exc, err)
	}
	return exc.Code
}

// File calls through libloop.so: values, the caller's C buffer filled in
// place, stat, failures as -errno.
func TestFSReadWriteStat(t *testing.T) {
	l := newLoop(t)
	r := fsRun{t, l}
	path := filepath.Join(t.TempDir(), "f")
	fd := int(r.value(l.FSOpen(path, os.O_RDWR|os.O_CREATE, 0o600)))
	buf, err := ll.NewCString("written by the file pool")
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	n := buf.Len() - 1
	wb, _ := ll.NewCBuf(n)
	copy(unsafe.Slice((*byte)(wb.Ptr()), n), unsafe.Slice((*byte)(buf.Ptr()), n))
	defer wb.Free()
	if got := r.value(l.FSWrite(fd, wb, 0)); got != n {
		t.Fatalf("write: %d bytes", got)
	}
	rb, _ := ll.NewCBuf(64)
	defer rb.Free()
	got := r.value(l.FSRead(fd, rb, 11))
	if s := string(unsafe.Slice((*byte)(rb.Ptr()), got)); s != "the file pool" {
		t.Errorf("read at 11: %q", s)
	}
	st, err := ll.NewStatBuf()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Free()
	r.value(l.FSStat(path, st))
	if s := st.Stat(); s.Size != int64(n) || s.Mode&syscall.S_IFMT != syscall.S_IFREG {
		t.Errorf("stat: size %d mode %o", s.Size, s.Mode)
	}
	r.value(l.FSFtruncate(fd, 4))
	r.value(l.FSFsync(fd))
	r.value(l.FSFstat(fd, st))
	if s := st.Stat(); s.Size != 4 {
		t.Errorf("fstat after ftruncate(4): size %d", s.Size)
	}
	r.value(l.FSClose(fd))
	if code := r.code(l.FSClose(fd)); code != ll.Error(-int(syscall.EBADF)) {
		t.Errorf("second close: %v", code)
	}
	if code := r.code(l.FSStat(path+".missing", st)); code != ll.Error(-int(syscall.ENOENT)) {
		t.Errorf("stat of a missing file: %v", code)
	}
}

// mkdir, scandir's names, rename, copyfile, sendfile, unlink, rmdir.
func TestFSDirectoriesAndCopies(t *testing.T) {
	l := newLoop(t)
	r := fsRun{t, l}
	dir := filepath.Join(t.TempDir(), "d")
	r.value(l.FSMkdir(dir, 0o755))
	data := bytes.Repeat([]byte("copy me "), 10000)
	if err := os.WriteFile(filepath.Join(dir, "b"), data, 0o640); err != nil {
		t.Fatal(err)
	}
	r.value(l.FSCopyfile(filepath.Join(dir, "b"), filepath.Join(dir, "a"), ll.FSCopyfileExcl))
	if got, _ := os.ReadFile(filepath.Join(dir, "a")); !bytes.Equal(got, data) {
		t.Error("copyfile: contents differ")
	}
	if code := r.code(l.FSCopyfile(filepath.Join(dir, "b"), filepath.Join(dir, "a"), ll.FSCopyfileExcl)); code != ll.Error(-int(syscall.EEXIST)) {
		t.Errorf("copyfile EXCL onto a file: %v", code)
	}
	in, _ := os.Open(filepath.Join(dir, "b"))
	defer in.Close()
	out, _ := os.Create(filepath.Join(dir, "c"))
	defer out.Close()
	if n := r.value(l.FSSendfile(int(out.Fd()), int(in.Fd()), 8, 16)); n != 16 {
		t.Errorf("sendfile: %d bytes", n)
	}
	if got, _ := os.ReadFile(out.Name()); string(got) != "copy me copy me " {
		t.Errorf("sendfile wrote %q", got)
	}
	r.value(l.FSRename(filepath.Join(dir, "c"), filepath.Join(dir, "z")))
	sf, err := l.FSScandir(dir)
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, &sf.Future, 10*time.Second)
	names, err := sf.Names()
	sf.Release()
	if err != nil || !slices.Equal(names, []string{"a", "b", "z"}) {
		t.Errorf("scandir: %q, %v", names, err)
	}
	if code := r.code(l.FSRmdir(dir)); code != ll.Error(-int(syscall.ENOTEMPTY)) {
		t.Errorf("rmdir of a full directory: %v", code)
	}
	for _, n := range []string{"a", "b", "z"} {
		r.value(l.FSUnlink(filepath.Join(dir, n)))
	}
	r.value(l.FSRmdir(dir))
}

// Cancelling a call queued behind a busy worker withdraws it; the busy
// (started) one cannot be cancelled and completes.
func TestFSCancel(t *testing.T) {
	l := newLoop(t)
	if err := l.SetFSWorkers(1); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rb, _ := ll.NewCBuf(8)
	defer rb.Free()
	busy, err := l.FSRead(int(r.Fd()), rb, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Release()
	time.Sleep(100 * time.Millisecond) // the one worker takes the read, which waits for bytes
	path := filepath.Join(t.TempDir(), "never")
	queued, err := l.FSMkdir(path, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer queued.Release()
	if ok, err := queued.Cancel(""); !ok || err != nil {
		t.Fatalf("cancel of a queued call: %v, %v", ok, err)
	}
	if ok, _ := busy.Cancel(""); ok {
		t.Fatal("a started read was cancelled")
	}
	w.Write([]byte("hi"))
	runUntil(t, l, busy, 10*time.Second)
	if v, err := busy.Result(); v != 2 || err != nil {
		t.Errorf("the started read: %d, %v", v, err)
	}
	if _, err := queued.Result(); !errors.Is(err, ll.ECANCELLED) {
		t.Errorf("the withdrawn call: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("the withdrawn mkdir ran")
	}
}

// Bad input is refused at once with LL_ codes.
func TestFSBadInput(t *testing.T) {
	l := newLoop(t)
	for name, call := range map[string]func() (*ll.Future, error){
		"read nil buffer":    func() (*ll.Future, error) { return l.FSRead(0, nil, 0) },
		"write nil buffer":   func() (*ll.Future, error) { return l.FSWrite(1, nil, 0) },
		"stat nil":           func() (*ll.Future, error) { return l.FSStat("/", nil) },
		"fstat nil":          func() (*ll.Future, error) { return l.FSFstat(0, nil) },
		"close negative":     func() (*ll.Future, error) { return l.FSClose(-1) },
		"ftruncate negative": func() (*ll.Future, error) { return l.FSFtruncate(0, -1) },
		"copyfile flags":     func() (*ll.Future, error) { return l.FSCopyfile("a", "b", 16) },
		"sendfile offset":    func() (*ll.Future, error) { return l.FSSendfile(1, 0, -3, 1) },
	} {
		if f, err := call(); !errors.Is(err, ll.EINVAL) || f != nil {
			t.Errorf("%s: %v, want EINVAL", name, err)
		}
	}
	if err := l.SetFSWorkers(0); !errors.Is(err, ll.EINVAL) {
		t.Errorf("SetFSWorkers(0): %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.FSUnlink("x"); !errors.Is(err, ll.ECLOSED) {
		t.Errorf("closed loop: %v, want ECLOSED", err)
	}
}

// ll_fs_read_cb and ll_fs_write_cb through the binding: each callback gets
// the byte count or -errno, once, and leaves no callback entry behind.
func TestFSReadWriteCallbacks(t *testing.T) {
	l := newLoop(t)
	path := filepath.Join(t.TempDir(), "cb")
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	before := ll.LiveCallbacks()
	wb, _ := ll.NewCBuf(10)
	defer wb.Free()
	copy(unsafe.Slice((*byte)(wb.Ptr()), 10), "0123456789")
	var results []int
	record := func(r int) { results = append(results, r) }
	if err := l.FSWriteCB(fd, wb, 0, record); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(ll.RunModeDefault); err != nil {
		t.Fatal(err)
	}
	rb, _ := ll.NewCBuf(64)
	defer rb.Free()
	if err := l.FSReadCB(fd, rb, 4, record); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(ll.RunModeDefault); err != nil {
		t.Fatal(err)
	}
	if err := l.FSReadCB(9999, rb, 0, record); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(ll.RunModeDefault); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(results, []int{10, 6, -int(syscall.EBADF)}) {
		t.Fatalf("results %v, want [10 6 -EBADF]", results)
	}
	if s := string(unsafe.Slice((*byte)(rb.Ptr()), 6)); s != "456789" {
		t.Errorf("read at 4: %q", s)
	}
	if err := l.FSReadCB(fd, nil, 0, record); !errors.Is(err, ll.EINVAL) {
		t.Errorf("nil buffer: %v", err)
	}
	if err := l.FSWriteCB(fd, wb, -2, record); !errors.Is(err, ll.EINVAL) {
		t.Errorf("offset -2: %v", err)
	}
	if n := ll.LiveCallbacks(); n != before {
		t.Errorf("%d callback entries left, %d before", n, before)
	}
}
