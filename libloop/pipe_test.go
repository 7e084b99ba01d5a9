// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
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
