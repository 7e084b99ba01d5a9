// SPDX-License-Identifier: MIT

package tests

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

func socketpair(t *testing.T) (a, b int) {
	t.Helper()
	p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

// ioCount registers an fd callback that counts its calls and checks the
// (loop, fd) it is given.
type ioCount struct{ n int }

func (c *ioCount) cb(t *testing.T, loop uint64, fd int) (uintptr, uintptr) {
	return ll.IOCallbackPtr(), ll.RegisterIOCallback(func(l uint64, got int) {
		c.n++
		if l != loop || got != fd {
			t.Errorf("io callback got (loop %#x, fd %d), want (%#x, %d)", l, got, loop, fd)
		}
	}, false)
}

func addReader(t *testing.T, loop uint64, fd int, c *ioCount) {
	t.Helper()
	f, a := c.cb(t, loop, fd)
	expect(t, "ll_add_reader", raw.AddReader(loop, int32(fd), f, a), 0)
}

func addWriter(t *testing.T, loop uint64, fd int, c *ioCount) {
	t.Helper()
	f, a := c.cb(t, loop, fd)
	expect(t, "ll_add_writer", raw.AddWriter(loop, int32(fd), f, a), 0)
}

func TestReaderOnPipe(t *testing.T) {
	loop := newRawLoop(t)
	r, w := pipe(t)
	var c ioCount
	addReader(t, loop, r, &c)
	runNowait(t, loop)
	if c.n != 0 {
		t.Fatalf("reader of an empty pipe ran %d times", c.n)
	}
	unix.Write(w, []byte("x"))
	runNowait(t, loop)
	if c.n != 1 {
		t.Fatalf("reader ran %d times after a write", c.n)
	}
	runNowait(t, loop) // level-triggered: still readable
	if c.n != 2 {
		t.Fatalf("undrained reader ran %d times in two iterations", c.n)
	}
	var buf [8]byte
	unix.Read(r, buf[:])
	runNowait(t, loop)
	if c.n != 2 {
		t.Fatalf("drained reader ran again (%d)", c.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
	expect(t, "ll_remove_reader(again)", raw.RemoveReader(loop, int32(r)), 0)
	unix.Write(w, []byte("y"))
	runNowait(t, loop)
	if c.n != 2 {
		t.Fatalf("removed reader ran (%d)", c.n)
	}
	assertAlive(t, loop)
}

func TestWriterOnPipe(t *testing.T) {
	loop := newRawLoop(t)
	_, w := pipe(t)
	var c ioCount
	addWriter(t, loop, w, &c)
	runNowait(t, loop)
	runNowait(t, loop)
	if c.n != 2 {
		t.Fatalf("writer of an empty pipe ran %d times in two iterations", c.n)
	}
	expect(t, "ll_remove_writer", raw.RemoveWriter(loop, int32(w)), 1)
	expect(t, "ll_remove_writer(again)", raw.RemoveWriter(loop, int32(w)), 0)
	runNowait(t, loop)
	if c.n != 2 {
		t.Fatalf("removed writer ran (%d)", c.n)
	}
	expect(t, "ll_remove_reader(writer's fd)", raw.RemoveReader(loop, int32(w)), 0)
}

func TestReplaceReader(t *testing.T) {
	loop := newRawLoop(t)
	r, w := pipe(t)
	var first, second ioCount
	addReader(t, loop, r, &first)
	addReader(t, loop, r, &second)
	unix.Write(w, []byte("x"))
	runNowait(t, loop)
	if first.n != 0 || second.n != 1 {
		t.Fatalf("replaced reader ran %d times, new one %d", first.n, second.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
	expect(t, "ll_remove_reader(again)", raw.RemoveReader(loop, int32(r)), 0)
}

// A reader added from inside the reader it replaces takes over at once.
func TestReplaceReaderFromItsCallback(t *testing.T) {
	loop := newRawLoop(t)
	r, w := pipe(t)
	var second ioCount
	n := 0
	f := ll.IOCallbackPtr()
	a := ll.RegisterIOCallback(func(uint64, int) {
		n++
		addReader(t, loop, r, &second)
	}, false)
	expect(t, "ll_add_reader", raw.AddReader(loop, int32(r), f, a), 0)
	unix.Write(w, []byte("x"))
	runNowait(t, loop)
	runNowait(t, loop)
	runNowait(t, loop)
	if n != 1 || second.n != 2 {
		t.Fatalf("first reader ran %d times, its replacement %d", n, second.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
}

func TestReaderAndWriterOnSocketpair(t *testing.T) {
	loop := newRawLoop(t)
	a, b := socketpair(t)
	var rd, wr ioCount
	addReader(t, loop, a, &rd)
	addWriter(t, loop, a, &wr)
	runNowait(t, loop)
	if rd.n != 0 || wr.n != 1 {
		t.Fatalf("reader %d, writer %d before data", rd.n, wr.n)
	}
	unix.Write(b, []byte("ping"))
	runNowait(t, loop)
	if rd.n != 1 || wr.n != 2 {
		t.Fatalf("reader %d, writer %d after data", rd.n, wr.n)
	}
	expect(t, "ll_remove_writer", raw.RemoveWriter(loop, int32(a)), 1)
	runNowait(t, loop)
	if rd.n != 2 || wr.n != 2 {
		t.Fatalf("after removing the writer: reader %d, writer %d", rd.n, wr.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(a)), 1)
	runNowait(t, loop)
	if rd.n != 2 || wr.n != 2 {
		t.Fatalf("after removing both: reader %d, writer %d", rd.n, wr.n)
	}
	// The other end, both ways at once.
	addReader(t, loop, b, &rd)
	unix.Write(a, []byte("pong"))
	runNowait(t, loop)
	if rd.n != 3 {
		t.Fatalf("reader of the other end ran %d times", rd.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(b)), 1)
}

// A hang-up (the peer closed) wakes the reader, as EOF.
func TestHangupWakesReader(t *testing.T) {
	loop := newRawLoop(t)
	r, w := pipe(t)
	var c ioCount
	addReader(t, loop, r, &c)
	unix.Close(w)
	runNowait(t, loop)
	if c.n != 1 {
		t.Fatalf("reader ran %d times after the writer closed", c.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
}

func TestRemoveAfterFdClosed(t *testing.T) {
	loop := newRawLoop(t)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	var c ioCount
	addReader(t, loop, p[0], &c)
	unix.Close(p[0])
	expect(t, "ll_remove_reader(closed fd)", raw.RemoveReader(loop, int32(p[0])), 1)
	expect(t, "ll_remove_reader(closed fd, again)", raw.RemoveReader(loop, int32(p[0])), 0)
	assertAlive(t, loop)

	// Both directions on a socket closed under them.
	s, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(s[1])
	addReader(t, loop, s[0], &c)
	addWriter(t, loop, s[0], &c)
	unix.Close(s[0])
	expect(t, "ll_remove_writer(closed fd)", raw.RemoveWriter(loop, int32(s[0])), 1)
	expect(t, "ll_remove_reader(closed fd)", raw.RemoveReader(loop, int32(s[0])), 1)
	expect(t, "ll_remove_reader(closed fd, again)", raw.RemoveReader(loop, int32(s[0])), 0)
	assertAlive(t, loop)
}

// An fd closed while watched and its number reused by a new pipe: adding a
// reader for the new fd works and sees the new pipe's data.
func TestWatchReusedFdNumber(t *testing.T) {
	loop := newRawLoop(t)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	var old ioCount
	addReader(t, loop, p[0], &old)
	unix.Close(p[0])
	unix.Close(p[1])
	r, w := pipe(t)
	if r != p[0] {
		t.Logf("fd %d not reused (got %d); still checking the new pipe", p[0], r)
	}
	var c ioCount
	addReader(t, loop, r, &c)
	unix.Write(w, []byte("x"))
	runNowait(t, loop)
	if c.n != 1 || old.n != 0 {
		t.Fatalf("new reader ran %d times, old %d", c.n, old.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
}

// A loop blocked in poll wakes for fd readiness caused by another thread.
func TestReaderWakesBlockedLoop(t *testing.T) {
	loop := newRawLoop(t)
	r, w := pipe(t)
	var c ioCount
	addReader(t, loop, r, &c)
	later(t, loop, 5, func() {}) // bounds the wait if readiness is missed
	go func() {
		time.Sleep(30 * time.Millisecond)
		unix.Write(w, []byte("x"))
	}()
	start := time.Now()
	expect(t, "ll_loop_run_once(ONCE)", raw.RunOnce(loop, cRunOnce), 0)
	if c.n != 1 {
		t.Fatalf("reader ran %d times", c.n)
	}
	if d := time.Since(start); d < 25*time.Millisecond || d > 5*time.Second {
		t.Fatalf("blocked run returned after %v", d)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
}

func TestBadFds(t *testing.T) {
	loop := newRawLoop(t)
	var c ioCount
	r, w := pipe(t)
	file := filepath.Join(t.TempDir(), "regular")
	if err := os.WriteFile(file, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	reg := int(fh.Fd())
	// Closed last, so nothing opened since has reused its number.
	closedR, closedW := pipe(t)
	unix.Close(closedR)
	unix.Close(closedW)
	cases := []struct {
		name string
		fd   int
		want int
	}{
		{"closed fd", closedR, eBADF},
		{"fd -1", -1, eBADF},
		{"fd -1000", -1000, eBADF},
		{"fd 1<<30+5", 1<<30 + 5, eBADF},
		{"regular file", reg, ePERM},
	}
	for _, tc := range cases {
		f, a := c.cb(t, loop, tc.fd)
		expect(t, "ll_add_reader("+tc.name+")", raw.AddReader(loop, int32(tc.fd), f, a), tc.want)
		f, a = c.cb(t, loop, tc.fd)
		expect(t, "ll_add_writer("+tc.name+")", raw.AddWriter(loop, int32(tc.fd), f, a), tc.want)
		expect(t, "ll_remove_reader("+tc.name+")", raw.RemoveReader(loop, int32(tc.fd)), 0)
		expect(t, "ll_remove_writer("+tc.name+")", raw.RemoveWriter(loop, int32(tc.fd)), 0)
		assertAlive(t, loop)
	}
	if c.n != 0 {
		t.Fatalf("callbacks of rejected fds ran %d times", c.n)
	}
	// A failed add leaves an existing reader in place.
	var good ioCount
	addReader(t, loop, r, &good)
	unix.Write(w, []byte("x"))
	runNowait(t, loop)
	if good.n != 1 {
		t.Fatalf("reader ran %d times", good.n)
	}
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
}
