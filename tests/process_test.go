// SPDX-License-Identifier: MIT

package tests

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// runLoopUntil runs iterations until done() or the timeout, which fails
// the test (a timer wakes the loop, so it never hangs).
func runLoopUntil(t *testing.T, l *ll.Loop, timeout time.Duration, done func() bool) {
	t.Helper()
	fired := false
	h, err := l.CallLater(timeout, func() { fired = true })
	if err != nil {
		t.Fatal(err)
	}
	defer h.Cancel()
	for !done() && !fired {
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
	}
	if !done() {
		t.Fatalf("timed out after %v", timeout)
	}
}

// childLog records what a child's func received.
type childLog struct {
	out, errOut bytes.Buffer
	lost        map[int]int
	exits, code int
}

func (c *childLog) fn(ev ll.ProcessEvent) bool {
	switch ev.Kind {
	case ll.EventDataReceived:
		if ev.FD == 1 {
			c.out.Write(ev.Data) // a copy: Data is valid for the call only
		} else {
			c.errOut.Write(ev.Data)
		}
	case ll.EventConnectionLost:
		if c.lost == nil {
			c.lost = map[int]int{}
		}
		c.lost[ev.FD]++
	case ll.EventProcessExited:
		c.exits++
		c.code = ev.Code
	}
	return false
}

func TestProcessPipesAndReturnCode(t *testing.T) {
	l := newLoop(t)
	c := &childLog{}
	p, err := l.Spawn(ll.ProcessOptions{Args: []string{"sh", "-c", "read x; echo out $x; echo err >&2; exit 6"},
		Stdin: ll.StdioPipe, Stdout: ll.StdioPipe, Stderr: ll.StdioPipe}, c.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if p.Pid() <= 0 || p.ID() == 0 {
		t.Fatalf("pid %d id %#x", p.Pid(), p.ID())
	}
	if _, exited, err := p.ReturnCode(); exited || err != nil {
		t.Fatalf("ReturnCode while running: exited %v err %v", exited, err)
	}
	if err := p.WriteStdin([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	w, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release()
	runLoopUntil(t, l, 10*time.Second, func() bool { return w.Done() && c.lost[1] == 1 && c.lost[2] == 1 })
	if c.out.String() != "out hello\n" || c.errOut.String() != "err\n" {
		t.Errorf("stdout %q stderr %q", c.out.String(), c.errOut.String())
	}
	if code, err := ll.WaitResult(w); code != 6 || err != nil {
		t.Errorf("Wait: %d, %v; want 6", code, err)
	}
	if code, exited, err := p.ReturnCode(); code != 6 || !exited || err != nil {
		t.Errorf("ReturnCode: %d %v %v", code, exited, err)
	}
	if c.exits != 1 || c.code != 6 {
		t.Errorf("exit events %d, code %d", c.exits, c.code)
	}
	if _, err := p.Pipe(1); !errors.Is(err, ll.ECLOSED) {
		t.Errorf("Pipe(1) after its loss: %v, want ECLOSED", err)
	}
	if _, err := p.Pipe(5); !errors.Is(err, ll.EINVAL) {
		t.Errorf("Pipe(5): %v, want EINVAL", err)
	}
}

func TestProcessKilledAndESRCHAfterExit(t *testing.T) {
	l := newLoop(t)
	c := &childLog{}
	p, err := l.Spawn(ll.ProcessOptions{Args: []string{"sleep", "10"},
		Stdin: ll.StdioDevNull, Stdout: ll.StdioDevNull, Stderr: ll.StdioInherit}, c.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if err := p.Signal(0); err != nil {
		t.Fatalf("Signal(0) while running: %v", err)
	}
	if err := p.Terminate(); err != nil {
		t.Fatal(err)
	}
	runLoopUntil(t, l, 10*time.Second, func() bool { return c.exits == 1 })
	if c.code != -int(syscall.SIGTERM) {
		t.Errorf("code %d, want %d", c.code, -int(syscall.SIGTERM))
	}
	for what, err := range map[string]error{"Signal": p.Signal(syscall.SIGUSR1), "Terminate": p.Terminate(), "Kill": p.Kill()} {
		if !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s after exit: %v, want ESRCH", what, err)
		}
	}
	// A wait made after the exit finishes too.
	w, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release()
	runLoopUntil(t, l, time.Second, w.Done)
	if code, _ := ll.WaitResult(w); code != -int(syscall.SIGTERM) {
		t.Errorf("late Wait: %d", code)
	}
}

func TestProcessCannotRun(t *testing.T) {
	l := newLoop(t)
	for _, tc := range []struct {
		o    ll.ProcessOptions
		want error
	}{
		{ll.ProcessOptions{Args: []string{"/no/such/program"}}, syscall.ENOENT},
		{ll.ProcessOptions{Args: []string{"no-such-program-in-path-xyz"}}, syscall.ENOENT},
		{ll.ProcessOptions{Args: []string{"/etc/passwd"}}, syscall.EACCES},
		{ll.ProcessOptions{Args: []string{"true"}, Dir: "/no/such/dir"}, syscall.ENOENT},
		{ll.ProcessOptions{Args: nil, File: "true"}, ll.EINVAL},
		{ll.ProcessOptions{Args: []string{"true"}, Stdin: -7}, ll.EINVAL},
		{ll.ProcessOptions{Args: []string{"true"}, Flags: 8}, ll.EINVAL},
	} {
		before := ll.LiveProcessCallbacks()
		p, err := l.Spawn(tc.o, nil)
		if !errors.Is(err, tc.want) || p != nil {
			t.Errorf("%+v: %v, want %v", tc.o, err, tc.want)
		}
		if ll.LiveProcessCallbacks() != before {
			t.Errorf("%+v: a failed Spawn kept its func", tc.o)
		}
	}
}

// Env and Dir reach the child; the Spawn func is dropped once the child is
// done and released.
func TestProcessEnvDirAndFuncFreed(t *testing.T) {
	l := newLoop(t)
	before := ll.LiveProcessCallbacks()
	c := &childLog{}
	p, err := l.Spawn(ll.ProcessOptions{Args: []string{"sh", "-c", "echo $GREETING; pwd"},
		Env: []string{"GREETING=hi"}, Dir: "/",
		Stdin: ll.StdioDevNull, Stdout: ll.StdioPipe, Stderr: ll.StdioStdout}, c.fn)
	if err != nil {
		t.Fatal(err)
	}
	runLoopUntil(t, l, 10*time.Second, func() bool { return c.exits == 1 && c.lost[1] == 1 })
	if c.out.String() != "hi\n/\n" {
		t.Errorf("output %q", c.out.String())
	}
	if err := p.Release(); err != nil {
		t.Fatal(err)
	}
	if n := ll.LiveProcessCallbacks(); n != before {
		t.Errorf("process funcs: %d after release, %d before", n, before)
	}
}

func TestSignalHandlerBinding(t *testing.T) {
	l := newLoop(t)
	calls := 0
	if err := l.AddSignalHandler(syscall.SIGUSR1, func() { calls++ }); err != nil {
		t.Fatal(err)
	}
	// Replaced: the second func gets the delivery.
	replaced := 0
	if err := l.AddSignalHandler(syscall.SIGUSR1, func() { replaced++ }); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	runLoopUntil(t, l, 5*time.Second, func() bool { return replaced == 1 })
	if calls != 0 {
		t.Errorf("the replaced func ran %d times", calls)
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGSEGV, syscall.SIGPIPE, 0, 65} {
		if err := l.AddSignalHandler(sig, func() {}); !errors.Is(err, ll.EINVAL) {
			t.Errorf("AddSignalHandler(%d): %v, want EINVAL", sig, err)
		}
	}
	if ok, err := l.RemoveSignalHandler(syscall.SIGUSR1); !ok || err != nil {
		t.Errorf("remove: %v %v", ok, err)
	}
	if ok, err := l.RemoveSignalHandler(syscall.SIGUSR1); ok || err != nil {
		t.Errorf("second remove: %v %v", ok, err)
	}
}
