// SPDX-License-Identifier: MIT

package libloop

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runChild spawns argv with stdout and stderr piped and returns what each
// printed and the return code.
func runChild(t *testing.T, l *Loop, o *ProcessOptions) (out, errOut string, code int) {
	t.Helper()
	exited, lost := false, 0
	p, err := l.Spawn(o, func(ev *Event) bool {
		switch ev.Kind {
		case DataReceived:
			if ev.FD == 1 {
				out += string(ev.Data)
			} else {
				errOut += string(ev.Data)
			}
		case ConnectionLost:
			lost++
		case ProcessExited:
			exited, code = true, ev.Code
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	pipes := 0
	for i := 0; i < 3; i++ {
		if p.Pipe(i) != nil {
			pipes++
		}
	}
	runUntil(t, l, 10*time.Second, func() bool { return exited && lost == pipes })
	return out, errOut, code
}

func TestSpawnPipesAndReturnCode(t *testing.T) {
	l := newTestLoop(t)
	out, errOut, code := runChild(t, l, &ProcessOptions{File: "sh",
		Argv:  []string{"sh", "-c", "echo hi; echo oops >&2; exit 3"},
		Stdio: [3]int{StdioDevNull, StdioPipe, StdioPipe}})
	if out != "hi\n" || errOut != "oops\n" || code != 3 {
		t.Fatalf("out %q err %q code %d", out, errOut, code)
	}
}

func TestSpawnCannotRunIsAnError(t *testing.T) {
	l := newTestLoop(t)
	for file, want := range map[string]error{"/no/such/program": unix.ENOENT, "no-such-program-xyz": unix.ENOENT, "/etc/passwd": unix.EACCES} {
		_, err := l.Spawn(&ProcessOptions{File: file, Argv: []string{file}, Stdio: [3]int{-1, -1, -1}}, nil)
		if err != want {
			t.Errorf("%s: %v, want %v", file, err, want)
		}
	}
}

func TestSpawnClosesHostFDsAndKillReportsSignal(t *testing.T) {
	l := newTestLoop(t)
	var leak [2]int
	if err := unix.Pipe(leak[:]); err != nil { // no CLOEXEC, as a careless host would
		t.Fatal(err)
	}
	defer unix.Close(leak[0])
	defer unix.Close(leak[1])
	out, _, _ := runChild(t, l, &ProcessOptions{File: "sh", Argv: []string{"sh", "-c", "ls /proc/$$/fd"},
		Stdio: [3]int{StdioDevNull, StdioPipe, StdioStdout}})
	for _, f := range strings.Fields(out) {
		if f == strconv.Itoa(leak[0]) || f == strconv.Itoa(leak[1]) {
			t.Fatalf("child inherited the host's fd %s: %q", f, out)
		}
	}
	exited := -1000
	p, err := l.Spawn(&ProcessOptions{File: "sleep", Argv: []string{"sleep", "10"}, Stdio: [3]int{-3, -3, -3}},
		func(ev *Event) bool {
			if ev.Kind == ProcessExited {
				exited = ev.Code
			}
			return false
		})
	if err != nil {
		t.Fatal(err)
	}
	p.SendSignal(int(unix.SIGKILL))
	runUntil(t, l, 5*time.Second, func() bool { return exited != -1000 })
	if exited != -int(unix.SIGKILL) {
		t.Fatalf("code %d", exited)
	}
	if err := p.SendSignal(int(unix.SIGTERM)); err != unix.ESRCH {
		t.Fatalf("signal after exit: %v", err)
	}
}

// An env that sets no PATH still finds a program in the parent's PATH
// (the header's "the env's PATH when env sets one"); one that sets PATH is
// searched alone.
func TestSpawnPathFromEnvOnlyWhenSet(t *testing.T) {
	l := newTestLoop(t)
	out, _, code := runChild(t, l, &ProcessOptions{File: "sh", Argv: []string{"sh", "-c", "echo $FOO"},
		Env: []string{"FOO=bar"}, Stdio: [3]int{StdioDevNull, StdioPipe, StdioInherit}})
	if out != "bar\n" || code != 0 {
		t.Fatalf("out %q code %d", out, code)
	}
	_, err := l.Spawn(&ProcessOptions{File: "sh", Argv: []string{"sh"}, Env: []string{"PATH=/nonexistent"},
		Stdio: [3]int{StdioDevNull, StdioDevNull, StdioDevNull}}, nil)
	if err != unix.ENOENT {
		t.Fatalf("sh outside the env's PATH: %v, want ENOENT", err)
	}
}

// Writing more than a pipe holds to a child that does not read buffers
// the rest and returns: the parent's pipe ends are non-blocking.
func TestSpawnStdinWriteNeverBlocks(t *testing.T) {
	l := newTestLoop(t)
	p, err := l.Spawn(&ProcessOptions{File: "sleep", Argv: []string{"sleep", "10"},
		Stdio: [3]int{StdioPipe, StdioDevNull, StdioDevNull}}, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	defer p.SendSignal(int(unix.SIGKILL))
	done := make(chan error, 1)
	go func() { done <- p.Pipe(0).Write(make([]byte, 1<<20)) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Write to a full stdin pipe blocked")
	}
	if n := p.Pipe(0).WriteBufferSize(); n == 0 {
		t.Fatalf("nothing buffered: %d", n)
	}
}

// A child's stdin pipe is written without blocking the loop: 4 MiB through
// cat come back whole, with pause/resume on the way (the parent's end of
// each pipe is non-blocking; it was not, and a write larger than the pipe
// buffer blocked the loop thread until the child read it).
func TestSpawnStdinDoesNotBlockTheLoop(t *testing.T) {
	l := newTestLoop(t)
	const size = 4 << 20
	got, paused, exited, lost := 0, 0, false, 0
	p, err := l.Spawn(&ProcessOptions{File: "cat", Argv: []string{"cat"},
		Stdio: [3]int{StdioPipe, StdioPipe, StdioDevNull}}, func(ev *Event) bool {
		switch ev.Kind {
		case DataReceived:
			got += len(ev.Data)
		case PauseWriting:
			paused++
		case ConnectionLost:
			lost++
		case ProcessExited:
			exited = true
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	in := p.Pipe(0)
	if fl, err := unix.FcntlInt(uintptr(in.fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK == 0 {
		t.Fatalf("stdin pipe flags %#x, %v: want O_NONBLOCK", fl, err)
	}
	start := time.Now()
	if err := in.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Write blocked for %v", d)
	}
	in.Close()
	runUntil(t, l, 20*time.Second, func() bool { return exited && lost == 2 })
	if got != size || paused == 0 {
		t.Fatalf("got %d bytes of %d, paused %d times", got, size, paused)
	}
}
