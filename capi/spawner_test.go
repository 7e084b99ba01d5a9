// SPDX-License-Identifier: MIT

package main

import (
	"testing"

	"github.com/libloop/libloop/libloop"
	"golang.org/x/sys/unix"
)

// waitCode reaps pid and closes its pidfd; the exit status.
func waitCode(t *testing.T, pid, pidfd int) int {
	t.Helper()
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
	return ws.ExitStatus()
}

// The packed request reaches the child whole: path, dir, every argument and
// every variable (an empty environment too), in order.
func TestPosixSpawnPackedRequest(t *testing.T) {
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	script := `test "$PWD" = /tmp && test "$#" = 2 && test "$1" = "a b" && test "$2" = "" && ` +
		`test "$X" = 1 && test "$Y" = "two words" && exit 7; exit 1`
	r := &libloop.SpawnRequest{Path: "/bin/sh", Argv: []string{"sh", "-c", script, "sh", "a b", ""},
		Env: []string{"X=1", "Y=two words"}, Dir: "/tmp", Stdio: [3]int{null, null, null}, SpawnExtra: libloop.NoExtra()}
	pid, pidfd, err := posixSpawn(r)
	if err != nil {
		t.Fatal(err)
	}
	if code := waitCode(t, pid, pidfd); code != 7 {
		t.Fatalf("child exit %d, want 7 (the request did not arrive whole)", code)
	}
	// An empty environment stays empty (but for the PWD sh exports itself).
	r = &libloop.SpawnRequest{Path: "/bin/sh", Argv: []string{"sh", "-c", `test -z "$(env | grep -v ^PWD=)" && exit 4`},
		Env: []string{}, Stdio: [3]int{null, null, null}, SpawnExtra: libloop.NoExtra()}
	if pid, pidfd, err = posixSpawn(r); err != nil {
		t.Fatal(err)
	}
	if code := waitCode(t, pid, pidfd); code != 4 {
		t.Fatalf("child exit %d with an empty environment, want 4", code)
	}
}

// A string with a NUL in it is refused before any child starts: C would
// end it there and read the rest as the next string.
func TestPosixSpawnRefusesNUL(t *testing.T) {
	base := libloop.SpawnRequest{Path: "/bin/true", Argv: []string{"true"}, Stdio: [3]int{0, 1, 2},
		SpawnExtra: libloop.NoExtra()}
	for i, mod := range []func(r *libloop.SpawnRequest){
		func(r *libloop.SpawnRequest) { r.Path = "/bin/true\x00x" },
		func(r *libloop.SpawnRequest) { r.Dir = "/tmp\x00" },
		func(r *libloop.SpawnRequest) { r.Argv = []string{"true", "a\x00b"} },
		func(r *libloop.SpawnRequest) { r.Env = []string{"A=1", "B=\x002"} },
	} {
		r := base
		mod(&r)
		if pid, _, err := posixSpawn(&r); err != libloop.EINVAL {
			t.Fatalf("case %d: pid %d err %v, want EINVAL", i, pid, err)
		}
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil); err != unix.ECHILD {
		t.Fatalf("a child was started: wait4 %v", err)
	}
}
