// SPDX-License-Identifier: MIT

//go:build linux

package tests

import (
	"strconv"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal's master and slave (Linux's ioctls).
func openPTY(t *testing.T) (master, slave int) {
	t.Helper()
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal("open /dev/ptmx:", err)
	}
	t.Cleanup(func() { unix.Close(master) })
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal("unlockpt:", err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		t.Fatal("ptsname:", err)
	}
	slave, err = unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal("open slave:", err)
	}
	t.Cleanup(func() { unix.Close(slave) })
	return master, slave
}

// Through the purego binding: a terminal's typed bytes arrive one by one in
// raw mode, its window size is the terminal's, and the modes come back.
func TestTTYFromGo(t *testing.T) {
	l := newLoop(t)
	master, slave := openPTY(t)
	orig, err := unix.IoctlGetTermios(slave, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(master, unix.TIOCSWINSZ, &unix.Winsize{Col: 90, Row: 25}); err != nil {
		t.Fatal(err)
	}
	var got []byte
	tr, err := l.OpenTTY(slave, &ll.ProtocolFuncs{
		Data: func(_ *ll.Transport, d []byte) {
			got = append(got, d...)
			l.Stop()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if c, r, err := tr.WindowSize(); c != 90 || r != 25 || err != nil {
		t.Errorf("WindowSize = %d, %d, %v", c, r, err)
	}
	expectErr(t, "SetTTYMode raw", tr.SetTTYMode(ll.TTYRaw), 0)
	unix.Write(master, []byte("q"))
	runNet(t, l, 10*time.Second)
	if string(got) != "q" {
		t.Fatalf("raw read %q", got)
	}
	expectErr(t, "bad mode", tr.SetTTYMode(9), cEINVAL)
	lib, err := ll.Open()
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, "ResetTTYModes", lib.ResetTTYModes(), 0)
	now, _ := unix.IoctlGetTermios(slave, unix.TCGETS)
	if now.Lflag != orig.Lflag {
		t.Errorf("after reset lflag %#x, want %#x", now.Lflag, orig.Lflag)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if _, err := l.OpenTTY(p[0], &ll.ProtocolFuncs{}); err == nil {
		t.Error("OpenTTY on a pipe succeeded")
	}
}
