// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runningLoop runs a new loop on a goroutine of its own until the test
// ends, as a Go program that uses Conn or Wait from other goroutines does.
func runningLoop(t *testing.T) *Loop {
	t.Helper()
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	ended := make(chan error, 1)
	l.CallSoon(func() { close(started) })
	go func() { ended <- l.RunForever() }()
	<-started
	t.Cleanup(func() {
		l.CallSoonThreadsafe(func() { l.Stop() })
		if err := <-ended; err != nil {
			t.Errorf("RunForever: %v", err)
		}
		l.Close()
	})
	return l
}

// checkNoGoroutineLeak fails the test if, once it is over, more goroutines
// run than before it (given a moment for ending ones to exit).
func checkNoGoroutineLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines after the test, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
	})
}

func TestErrnoMatchesContextErrors(t *testing.T) {
	if !errors.Is(ECANCELLED, context.Canceled) || !errors.Is(ETIMEDOUT, context.DeadlineExceeded) {
		t.Fatal("ECANCELLED / ETIMEDOUT do not match the context errors")
	}
	if errors.Is(EINVAL, context.Canceled) || errors.Is(ECANCELLED, context.DeadlineExceeded) {
		t.Fatal("a code matches a context error it is not")
	}
}

// A cancelled context cancels the task RunUntilCompleteContext runs; the
// task sees its cancellation (and may clean up) before the call returns.
func TestRunUntilCompleteContextCancelsTask(t *testing.T) {
	checkNoGoroutineLeak(t)
	l := newTestLoop(t)
	sawCancel := false
	task, _ := l.NewTask(func(tk *Task) {
		if tk.MustRaiseCancel() {
			sawCancel = true
			tk.Raise(int(ECANCELLED), "", 0, nil)
			return
		}
		tk.Sleep(3600)
	})
	defer task.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := l.RunUntilCompleteContext(ctx, &task.Future)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if !sawCancel || task.State() != Cancelled {
		t.Fatalf("task not cancelled: saw %v, state %v", sawCancel, task.State())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("returned after %v", d)
	}
	// The loop is usable again and the stale cancel does nothing.
	f, _ := l.NewFuture()
	l.CallSoon(func() { f.SetResult(7, nil) })
	if err := l.RunUntilCompleteContext(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Result(); v != 7 {
		t.Fatalf("result %d", v)
	}
}

// A future that finishes although ctx was cancelled keeps its result.
func TestRunUntilCompleteContextResultWins(t *testing.T) {
	l := newTestLoop(t)
	f, _ := l.NewFuture()
	defer f.Release()
	f.SetResult(3, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.RunUntilCompleteContext(ctx, f); err != nil {
		t.Fatalf("err = %v for a future already finished", err)
	}
}

// Wait from another goroutine: the result crosses; a done context cancels
// the future and returns at once; a closed loop unblocks the waiter.
func TestFutureWaitFromAnotherGoroutine(t *testing.T) {
	checkNoGoroutineLeak(t)
	l := runningLoop(t)
	futs := make(chan *Future, 1)
	l.CallSoonThreadsafe(func() {
		f, _ := l.NewFuture()
		l.CallLaterDuration(10*time.Millisecond, func() { f.SetResult(99, nil) })
		futs <- f
	})
	f := <-futs
	v, err := f.Wait(context.Background())
	if err != nil || v != 99 {
		t.Fatalf("Wait = %d, %v", v, err)
	}

	l.CallSoonThreadsafe(func() { g, _ := l.NewFuture(); futs <- g })
	g := <-futs
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want DeadlineExceeded", err)
	}
	state := make(chan FutureState, 1)
	// The cancel was posted before this call: it has run when this runs.
	l.CallSoonThreadsafe(func() { state <- g.State() })
	if s := <-state; s != Cancelled {
		t.Fatalf("future state %v after the context ended, want cancelled", s)
	}
}

// The goroutine running the loop stops and closes it while another waits
// on one of its futures: the waiter returns ECLOSED.
func TestFutureWaitLoopClosed(t *testing.T) {
	checkNoGoroutineLeak(t)
	l, _ := New()
	f, _ := l.NewFuture()
	started := make(chan struct{})
	l.CallSoon(func() { close(started) })
	go func() {
		l.CallLaterDuration(20*time.Millisecond, func() { l.Stop() })
		l.RunForever()
		l.Close()
	}()
	<-started
	errc := make(chan error, 1)
	go func() { _, err := f.Wait(context.Background()); errc <- err }()
	select {
	case err := <-errc:
		if err != ECLOSED {
			t.Fatalf("Wait = %v, want ECLOSED", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait still blocked after the loop closed")
	}
}

func TestWaitForContext(t *testing.T) {
	l := newTestLoop(t)
	f, _ := l.NewFuture()
	defer f.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	out, err := l.WaitForContext(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	l.RunUntilComplete(out)
	if _, err := out.Result(); err != ETIMEDOUT || f.State() != Cancelled {
		t.Fatalf("out %v, f %v: want ETIMEDOUT and f cancelled", err, f.State())
	}

	g, _ := l.NewFuture()
	defer g.Release()
	ctx2, cancel2 := context.WithCancel(context.Background())
	out2, _ := l.WaitForContext(ctx2, g)
	defer out2.Release()
	l.CallLaterDuration(5*time.Millisecond, cancel2)
	l.RunUntilComplete(out2)
	if out2.State() != Cancelled || g.State() != Cancelled {
		t.Fatalf("out %v, g %v: want both cancelled", out2.State(), g.State())
	}
}

// DialTCPContext gives up a connect that hangs (a listener whose accept
// queue is full drops SYNs) when the context's deadline passes, and closes
// its socket.
func TestDialTCPContextAbortsHangingConnect(t *testing.T) {
	checkNoGoroutineLeak(t)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.CloseOnExec(fd)
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	unix.Listen(fd, 0)
	sa, _ := unix.Getsockname(fd)
	port := sa.(*unix.SockaddrInet4).Port
	var fillers []net.Conn
	defer func() {
		for _, c := range fillers {
			c.Close()
		}
	}()
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", itoa(port)), 100*time.Millisecond)
		if err != nil {
			break // the queue is full: connects hang now
		}
		fillers = append(fillers, c)
		if i > 64 {
			t.Skip("the accept queue never filled up") // not Linux-like
		}
	}
	l := newTestLoop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	f, _ := l.NewFuture()
	defer f.Release()
	var got error
	err = l.DialTCPContext(ctx, "127.0.0.1", port, DialOptions{}, func(*Event) bool { return false }, func(tr *Transport, err error) {
		got = err
		if tr != nil {
			tr.Abort()
		}
		f.SetResult(0, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	l.RunUntilComplete(f)
	if !errors.Is(got, context.DeadlineExceeded) {
		t.Fatalf("dial error %v, want DeadlineExceeded", got)
	}
	if l.nWatched != 0 {
		t.Fatalf("%d fds still watched after the abort", l.nWatched)
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}
