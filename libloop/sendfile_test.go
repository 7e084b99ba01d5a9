// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sendfileSetup writes data to a file and opens it, and opens a stream
// transport on one end of a socketpair (sv[1] is the peer's); both close
// when the test ends.
func sendfileSetup(t *testing.T, l *Loop, data []byte) (*os.File, *Transport, [2]int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(sv[1]) })
	tr, err := l.OpenTransport(sv[0], Stream, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	return f, tr, sv
}

// Bytes written while a sendfile runs go out after the file, and a Close
// issued meanwhile still flushes them: the peer reads header, file,
// trailer, in that order, then EOF.
func TestSendfileKeepsWriteOrder(t *testing.T) {
	l := newTestLoop(t)
	file := make([]byte, 3<<20)
	for i := range file {
		file[i] = byte(i*131 ^ i>>9)
	}
	f, tr, sv := sendfileSetup(t, l, file)
	tr.Write([]byte("HDR"))
	var sent int64 = -1
	if err := tr.Sendfile(int(f.Fd()), 0, 0, func(n int64, err error) {
		if err != nil {
			t.Errorf("sendfile: %v", err)
		}
		sent = n
	}); err != nil {
		t.Fatal(err)
	}
	tr.Write([]byte("TRL"))
	tr.Close()
	unix.SetNonblock(sv[1], true)
	var got []byte
	buf := make([]byte, 1<<16)
	eof := false
	runUntil(t, l, 10*time.Second, func() bool {
		for {
			n, err := unix.Read(sv[1], buf)
			if n > 0 {
				got = append(got, buf[:n]...)
				continue
			}
			eof = n == 0 && err == nil
			return eof
		}
	})
	want := append(append([]byte("HDR"), file...), "TRL"...)
	if sent != int64(len(file)) {
		t.Fatalf("sent %d, want %d", sent, len(file))
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("got %d bytes, want %d; first difference at %d", len(got), len(want), i)
	}
}

// A transport that fails while its file goes out (a reset read from the
// peer) fails the sendfile with that error, not ECLOSED: the host reports
// a connection error, as asyncio's sendfile does.
func TestSendfileGetsTheTransportsError(t *testing.T) {
	l := newTestLoop(t)
	f, tr, _ := sendfileSetup(t, l, make([]byte, 8<<20))
	var sent int64 = -1
	var got error
	if err := tr.Sendfile(int(f.Fd()), 0, 0, func(n int64, err error) {
		sent, got = n, err
	}); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return tr.sendfileOp() != nil && tr.sendfileOp().sent > 0 })
	tr.fatal(unix.ECONNRESET) // what a read of the peer's reset does
	runUntil(t, l, 5*time.Second, func() bool { return sent >= 0 })
	if Code(got) != -int(unix.ECONNRESET) {
		t.Fatalf("sendfile failed with %v, want ECONNRESET", got)
	}
	if sent <= 0 {
		t.Fatalf("sent %d before the failure, want > 0", sent)
	}
}
