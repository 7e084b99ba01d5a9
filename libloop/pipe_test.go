// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openWritePipe adopts fd as a PipeWrite transport and counts its
// ConnectionLost events.
func openWritePipe(t *testing.T, l *Loop, fd int, lost *int) *Transport {
	t.Helper()
	tr, err := l.OpenTransport(fd, PipeWrite, func(ev *Event) bool {
		if ev.Kind == ConnectionLost {
			*lost++
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A write end over a socket ends when the peer closes, as over a FIFO:
// a program handing connect_write_pipe one end of a socketpair waits for
// connection_lost once the other end is gone.
func TestPipeWriteOnSocketEndsWhenPeerCloses(t *testing.T) {
	l := newTestLoop(t)
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	tr := openWritePipe(t, l, sp[0], &lost)
	if err := tr.Write([]byte("1")); err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	if n, _ := unix.Read(sp[1], b[:]); n != 1 {
		t.Fatalf("peer read %d bytes", n)
	}
	unix.Close(sp[1])
	runUntil(t, l, 5*time.Second, func() bool { return lost == 1 })
}

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

// The reader of a FIFO going away still ends its write end.
func TestPipeWriteOnFIFOEndsWhenReaderCloses(t *testing.T) {
	l := newTestLoop(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	wfd, err := unix.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	lost := 0
	openWritePipe(t, l, wfd, &lost)
	r.Close()
	runUntil(t, l, 5*time.Second, func() bool { return lost == 1 })
}
