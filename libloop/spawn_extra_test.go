// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The ForkExec path (a loop without a Spawner) does the extras too: a pass
// fd keeps its number and content while another inheritable fd is closed,
// InheritFDs keeps exactly the inheritable ones, and a pgid is joined.
func TestSpawnExtraForkExec(t *testing.T) {
	l := newTestLoop(t)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	unix.Write(p[1], []byte("passed\n"))
	unix.Close(p[1])
	defer unix.Close(p[0])
	stray, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(stray)
	script := fmt.Sprintf("cat /dev/fd/%d; [ -e /proc/$$/fd/%d ] && echo stray; echo end", p[0], stray)
	x := NoExtra()
	x.PassFDs = []int{p[0]}
	o := &ProcessOptions{File: "sh", Argv: []string{"sh", "-c", script},
		Stdio: [3]int{StdioDevNull, StdioPipe, StdioPipe}, Extra: &x}
	if out, errOut, code := runChild(t, l, o); out != "passed\nend\n" || code != 0 {
		t.Fatalf("pass fds: out %q err %q code %d", out, errOut, code)
	}
	x = NoExtra()
	x.InheritFDs = true
	o.Argv[2] = fmt.Sprintf("[ -e /proc/$$/fd/%d ] && echo pipe; [ -e /proc/$$/fd/%d ] && echo stray; echo end",
		p[0], stray)
	if out, _, _ := runChild(t, l, o); out != "stray\nend\n" {
		t.Fatalf("inherit fds: out %q", out)
	}
	x = NoExtra()
	x.Pgid = 0
	o.Argv = []string{"sleep", "10"}
	o.File = "sleep"
	leader, err := l.Spawn(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer leader.SendSignal(9)
	join := NoExtra()
	join.Pgid = leader.Pid()
	out, _, _ := runChild(t, l, &ProcessOptions{File: "cat", Argv: []string{"cat", "/proc/self/stat"},
		Stdio: [3]int{StdioDevNull, StdioPipe, StdioPipe}, Extra: &join})
	fields := strings.Fields(out[strings.LastIndexByte(out, ')')+1:])
	if len(fields) < 3 || fields[2] != strconv.Itoa(leader.Pid()) {
		t.Fatalf("joined pgid: stat %q, leader %d", out, leader.Pid())
	}
}

// What ForkExec cannot do is ENOTSUP, bad values EINVAL, a pass fd that
// is not open EBADF, and credentials work as root (EPERM otherwise).
func TestSpawnExtraForkExecErrors(t *testing.T) {
	l := newTestLoop(t)
	o := &ProcessOptions{File: "id", Argv: []string{"id", "-u"}, Stdio: [3]int{StdioDevNull, StdioPipe, StdioPipe}}
	for _, c := range []struct {
		name string
		set  func(*SpawnExtra)
		want error
	}{
		{"umask", func(x *SpawnExtra) { x.Umask = 0o22 }, unix.ENOTSUP},
		{"umask too big", func(x *SpawnExtra) { x.Umask = 0o1000 }, EINVAL},
		{"negative fd", func(x *SpawnExtra) { x.PassFDs = []int{-1} }, EINVAL},
		{"closed fd", func(x *SpawnExtra) { x.PassFDs = []int{100000} }, unix.EBADF},
		{"uid -2", func(x *SpawnExtra) { x.UID = -2 }, EINVAL},
		{"groups unset", func(x *SpawnExtra) { x.Groups = []uint32{1} }, EINVAL},
		{"pipe size", func(x *SpawnExtra) { x.PipeSize = -1 }, EINVAL},
	} {
		x := NoExtra()
		c.set(&x)
		o.Extra = &x
		if _, err := l.Spawn(o, nil); err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	x := NoExtra()
	x.UID, x.GID, x.SetGroups, x.Groups = 65534, 65534, true, []uint32{4242}
	o.Argv = []string{"sh", "-c", "id -u; id -G"}
	o.File, o.Extra = "sh", &x
	if os.Geteuid() != 0 {
		if _, err := l.Spawn(o, nil); err != unix.EPERM {
			t.Fatalf("setuid as uid %d: %v, want EPERM", os.Geteuid(), err)
		}
		return
	}
	if out, errOut, code := runChild(t, l, o); out != "65534\n65534 4242\n" || code != 0 {
		t.Fatalf("as 65534: out %q err %q code %d", out, errOut, code)
	}
}
