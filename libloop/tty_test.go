// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"strconv"
	"testing"
	"time"

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

func termios(t *testing.T, fd int) *unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio
}

// A terminal reads as a stream on an open of its own: the caller's fd
// stays blocking; canonical mode delivers whole lines, raw mode each byte;
// TTYNormal and ResetTTYModes bring back the terminal's own settings.
func TestTTYModes(t *testing.T) {
	l := newTestLoop(t)
	master, slave := openPTY(t)
	orig := termios(t, slave)
	var got []byte
	tr, err := l.OpenTTY(slave, func(ev *Event) bool {
		if ev.Kind == DataReceived {
			got = append(got, ev.Data...)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.FD() == slave {
		t.Error("the transport uses the caller's fd, not its own open")
	}
	if fl, _ := unix.FcntlInt(uintptr(slave), unix.F_GETFL, 0); fl&unix.O_NONBLOCK != 0 {
		t.Error("the caller's fd was made non-blocking")
	}
	// Canonical: "ab" waits for its newline.
	unix.Write(master, []byte("ab"))
	deadline := time.Now().Add(50 * time.Millisecond)
	runUntil(t, l, time.Second, func() bool { return time.Now().After(deadline) })
	if len(got) != 0 {
		t.Fatalf("canonical mode delivered %q before the newline", got)
	}
	unix.Write(master, []byte("\n"))
	runUntil(t, l, 5*time.Second, func() bool { return len(got) == 3 })

	if err := tr.SetTTYMode(TTYRaw); err != nil {
		t.Fatal(err)
	}
	raw := termios(t, slave)
	if raw.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 || raw.Iflag&unix.ICRNL != 0 || raw.Cc[unix.VMIN] != 1 {
		t.Errorf("raw mode left lflag %#x iflag %#x vmin %d", raw.Lflag, raw.Iflag, raw.Cc[unix.VMIN])
	}
	got = got[:0]
	unix.Write(master, []byte("x"))
	runUntil(t, l, 5*time.Second, func() bool { return len(got) == 1 })
	if got[0] != 'x' {
		t.Fatalf("raw read %q", got)
	}
	if err := tr.SetTTYMode(TTYRaw); err != nil { // again: the original stays the saved one
		t.Fatal(err)
	}
	if err := tr.SetTTYMode(TTYNormal); err != nil {
		t.Fatal(err)
	}
	if now := termios(t, slave); now.Lflag != orig.Lflag || now.Iflag != orig.Iflag {
		t.Errorf("normal mode: lflag %#x iflag %#x, want %#x %#x", now.Lflag, now.Iflag, orig.Lflag, orig.Iflag)
	}
	// Raw, then the transport closes: ResetTTYModes still restores.
	if err := tr.SetTTYMode(TTYRaw); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	runUntil(t, l, 5*time.Second, func() bool { return tr.FD() == -1 })
	if err := ResetTTYModes(); err != nil {
		t.Fatal(err)
	}
	if now := termios(t, slave); now.Lflag != orig.Lflag {
		t.Errorf("after ResetTTYModes lflag %#x, want %#x", now.Lflag, orig.Lflag)
	}
}

// The window size is the terminal's; bad input gets codes.
func TestTTYWindowSizeAndBadInput(t *testing.T) {
	l := newTestLoop(t)
	master, slave := openPTY(t)
	if err := unix.IoctlSetWinsize(master, unix.TIOCSWINSZ, &unix.Winsize{Col: 132, Row: 43}); err != nil {
		t.Fatal(err)
	}
	tr, err := l.OpenTTY(slave, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if c, r, err := tr.WindowSize(); c != 132 || r != 43 || err != nil {
		t.Errorf("WindowSize = %d, %d, %v", c, r, err)
	}
	if err := tr.SetTTYMode(2); err != EINVAL {
		t.Errorf("mode 2: %v", err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	if _, err := l.OpenTTY(p[1], nil); err != EINVAL {
		t.Errorf("OpenTTY on a pipe: %v, want EINVAL", err)
	}
	if _, err := l.OpenTTY(-1, nil); err != sysEBADF {
		t.Errorf("OpenTTY(-1): %v", err)
	}
	pipe, err := l.OpenTransport(p[0], PipeRead, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if err := pipe.SetTTYMode(TTYRaw); err != EINVAL {
		t.Errorf("SetTTYMode on a pipe: %v", err)
	}
	if _, _, err := pipe.WindowSize(); err != EINVAL {
		t.Errorf("WindowSize of a pipe: %v", err)
	}
	pipe.Close()
	tr.Close()
	if err := tr.SetTTYMode(TTYRaw); err != ECLOSED {
		t.Errorf("SetTTYMode after Close: %v", err)
	}
}
