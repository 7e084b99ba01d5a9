// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ioHost records the host calls the loop runs, whole (FD and Kind too).
type ioHost struct {
	recordingHost
	calls []HostCall
}

func (h *ioHost) Run(l *Loop, n int) {
	for _, c := range h.buf[:n] {
		if c.Fn != 0 {
			h.calls = append(h.calls, c)
		}
	}
}

// outcome runs l until the host has seen a call with arg, and returns
// that call's FD (the outcome); it fails the test if more than one came.
func (h *ioHost) outcome(t *testing.T, l *Loop, arg uintptr) int32 {
	t.Helper()
	var got []HostCall
	runUntil(t, l, 5*time.Second, func() bool {
		got = got[:0]
		for _, c := range h.calls {
			if c.Arg == arg {
				got = append(got, c)
			}
		}
		return len(got) > 0
	})
	if len(got) != 1 || got[0].Kind != HostIO || got[0].ID != l.Tag || got[0].Fn != 9 {
		t.Fatalf("calls for arg %d: %+v", arg, got)
	}
	return got[0].FD
}

// done is the completion call for the i-th call of a test.
func done(i uintptr) HostCall { return HostCall{Fn: 9, Arg: i, Kind: HostIO} }

// A read or write with a host callback: the callback comes on the loop
// thread with the loop's id and the byte count or -errno as its FD, and
// the bytes are where the call says.
func TestFSHostReadWrite(t *testing.T) {
	l := newTestLoop(t)
	l.Tag = 77
	h := &ioHost{}
	l.SetHost(h)
	path := filepath.Join(t.TempDir(), "f")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	data := bytes.Repeat([]byte("0123456789"), 500)
	if err := l.FSWriteHost(fd, data, -1, done(1)); err != nil {
		t.Fatal(err)
	}
	if n := h.outcome(t, l, 1); n != int32(len(data)) {
		t.Fatalf("write: %d", n)
	}
	if err := l.FSWriteHost(fd, []byte("abc"), 20, done(2)); err != nil {
		t.Fatal(err)
	}
	if n := h.outcome(t, l, 2); n != 3 {
		t.Fatalf("write at an offset: %d", n)
	}
	copy(data[20:], "abc")
	buf := make([]byte, 2*len(data))
	if err := l.FSReadHost(fd, buf, 0, done(3)); err != nil {
		t.Fatal(err)
	}
	if n := h.outcome(t, l, 3); n != int32(len(data)) || !bytes.Equal(buf[:n], data) {
		t.Fatalf("read: %d bytes, equal %v", n, bytes.Equal(buf[:len(data)], data))
	}
	if err := l.FSReadHost(fd, buf, -1, done(4)); err != nil { // the position is at the end
		t.Fatal(err)
	}
	if n := h.outcome(t, l, 4); n != 0 {
		t.Fatalf("read at the end: %d", n)
	}
	if err := l.FSReadHost(9999, buf, 0, done(5)); err != nil {
		t.Fatal(err)
	}
	if n := h.outcome(t, l, 5); n != -int32(unix.EBADF) {
		t.Fatalf("bad fd: %d", n)
	}
	if err := l.FSReadHost(1<<40, buf, 0, done(6)); err != nil {
		t.Fatal(err)
	}
	if n := h.outcome(t, l, 6); n != -int32(unix.EBADF) {
		t.Fatalf("an fd past int32: %d", n)
	}
	if len(h.calls) != 6 {
		t.Fatalf("%d calls for 6 reads and writes", len(h.calls))
	}
}

func TestFSHostBadInput(t *testing.T) {
	l := newTestLoop(t)
	h := &ioHost{}
	l.SetHost(h)
	buf := make([]byte, 8)
	for name, err := range map[string]error{
		"plain call":    l.FSReadHost(0, buf, 0, HostCall{Fn: 9}),
		"no function":   l.FSReadHost(0, buf, 0, HostCall{Kind: HostIO}),
		"offset -2":     l.FSReadHost(0, buf, -2, done(1)),
		"write -3":      l.FSWriteHost(1, buf, -3, done(1)),
		"write no func": l.FSWriteHost(1, buf, 0, HostCall{Kind: HostIO}),
	} {
		if err != EINVAL {
			t.Errorf("%s: %v, want EINVAL", name, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.FSReadHost(0, buf, 0, done(1)); err != ECLOSED {
		t.Errorf("closed loop: %v", err)
	}
	if len(h.calls) != 0 {
		t.Errorf("refused calls called back: %+v", h.calls)
	}
}

// Close drops a queued host read unrun and waits for the started call;
// no callback runs after Close.
func TestFSHostCloseWithdrawsQueued(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	h := &ioHost{}
	l.SetHost(h)
	_, release := blockPool(t, l)
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	buf := []byte("untouched")
	if err := l.FSReadHost(int(zero.Fd()), buf, -1, done(1)); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		close(release)
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "untouched" {
		t.Errorf("a read queued at Close ran: %q", buf)
	}
	if n := l.files().pending.Load(); n != 0 {
		t.Errorf("%d jobs still counted as pending", n)
	}
	if len(h.calls) != 0 {
		t.Errorf("callbacks after Close: %+v", h.calls)
	}
}

// A pending host read keeps Run(RunModeDefault) going until its callback ran.
func TestFSHostKeepsLoopAlive(t *testing.T) {
	l := newTestLoop(t)
	h := &ioHost{}
	l.SetHost(h)
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 4)
	if err := l.FSReadHost(p[0], buf, -1, done(1)); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		unix.Write(p[1], []byte("late"))
	}()
	if _, err := l.Run(RunModeDefault); err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 || h.calls[0].FD != 4 || string(buf) != "late" {
		t.Fatalf("after Run: %+v, %q", h.calls, buf)
	}
}
