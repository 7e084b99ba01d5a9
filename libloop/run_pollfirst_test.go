// SPDX-License-Identifier: MIT

package libloop

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// With an fd watched, an iteration polls without blocking first and only
// then chooses its timeout; when that try finds nothing the poll that
// follows must still block until the first timer, a post from another
// thread, or the fd, whichever comes first, and count the wait as idle.
// The same holds with the order a selector that does not try first gets
// (kqueue: timeout first, then the poll), forced here on epoll.
func TestPollFirstThenBlock(t *testing.T) {
	for _, first := range []bool{true, false} {
		l := newTestLoop(t)
		l.pollFirst = first
		pollThenBlock(t, l)
	}
}

func pollThenBlock(t *testing.T, l *Loop) {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.SetNonblock(sp[0], true)
	defer unix.Close(sp[0])
	defer unix.Close(sp[1])
	readable := 0
	if err := l.AddReader(sp[0], func() {
		var b [8]byte
		unix.Read(sp[0], b[:])
		readable++
	}); err != nil {
		t.Fatal(err)
	}

	// The first timer ends the wait, not earlier and not never.
	// (start is read before the timer is made: read after, a descheduled
	// CallLater under -race and load made the wait look up to 16 ms short)
	fired := false
	start := time.Now()
	l.CallLater(0.03, func() { fired = true })
	for !fired {
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("timer never fired")
		}
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("timer fired after %v, before its 30 ms", d)
	}
	if idle := l.Stats().Idle; idle < 20*time.Millisecond {
		t.Fatalf("Stats.Idle %v after a 30 ms wait", idle)
	}

	// A post from another thread wakes a poll that may block forever.
	ran := make(chan struct{})
	go func() {
		time.Sleep(20 * time.Millisecond)
		l.CallSoonThreadsafe(func() { close(ran) })
	}()
	start = time.Now()
	for done := false; !done; {
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ran:
			done = true
		default:
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the post did not wake the loop")
		}
	}

	// So does the fd; and a ready fd is served in the iteration that finds it.
	go func() {
		time.Sleep(20 * time.Millisecond)
		unix.Write(sp[1], []byte("x"))
	}()
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
	if readable != 1 {
		t.Fatalf("reader ran %d times after the fd became readable, want 1", readable)
	}

	// With a callback ready the poll does not block but still reports the
	// fd: one iteration runs both.
	unix.Write(sp[1], []byte("y"))
	soon := false
	l.CallSoon(func() { soon = true })
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
	if !soon || readable != 2 {
		t.Fatalf("one iteration with a ready callback and a readable fd: callback %v, reader ran %d times (want 2)", soon, readable)
	}
}
