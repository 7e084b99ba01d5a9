// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// Through purego: a pass fd reaches the child at its number with its
// content, under a umask; a pass fd that is not open is EBADF, a bad
// umask EINVAL, and the loop goes on.
func TestSpawnExtraPassFDs(t *testing.T) {
	l := newLoop(t)
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	syscall.Write(p[1], []byte("via purego\n"))
	syscall.Close(p[1])
	x := ll.NoExtra()
	x.PassFDs = []int{p[0]}
	x.Umask = 0o077
	c := &childLog{}
	o := ll.ProcessOptions{Args: []string{"sh", "-c", fmt.Sprintf("cat /dev/fd/%d; umask", p[0])},
		Stdin: ll.StdioDevNull, Stdout: ll.StdioPipe, Stderr: ll.StdioPipe, Extra: &x}
	proc, err := l.Spawn(o, c.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Release()
	runLoopUntil(t, l, 10*time.Second, func() bool { return c.exits == 1 && c.lost[1] == 1 && c.lost[2] == 1 })
	if got := c.out.String(); got != "via purego\n0077\n" || c.code != 0 {
		t.Fatalf("out %q err %q code %d", got, c.errOut.String(), c.code)
	}
	x.PassFDs = []int{1 << 20}
	if _, err := l.Spawn(o, c.fn); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("closed pass fd: %v, want EBADF", err)
	}
	x.PassFDs, x.Umask = nil, 0o1000
	if _, err := l.Spawn(o, c.fn); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("umask 01000: %v, want EINVAL", err)
	}
}
