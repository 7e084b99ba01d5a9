// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tty test alone: TIOCSPTLCK and TIOCGPTN are Linux's names for the pty ioctls.

// A write end over a tty is not ended by input arriving on the tty: a
// tty's slave reads ready when its master writes (asyncio's
// test_bidirectional_pty writes both ways through one).
func TestPipeWriteOnTTYSurvivesInput(t *testing.T) {
	l := newTestLoop(t)
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no /dev/ptmx:", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		t.Skip("unlockpt:", err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		t.Skip("ptsname:", err)
	}
	slave, err := unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("open slave:", err)
	}
	lost := 0
	tr := openWritePipe(t, l, slave, &lost)
	unix.Write(master, []byte("input\n"))
	deadline := time.Now().Add(100 * time.Millisecond)
	runUntil(t, l, time.Second, func() bool { return lost > 0 || time.Now().After(deadline) })
	if lost != 0 {
		t.Fatal("input on the tty ended its write transport")
	}
	if err := tr.Write([]byte("out")); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	runUntil(t, l, 5*time.Second, func() bool { return lost == 1 })
}
