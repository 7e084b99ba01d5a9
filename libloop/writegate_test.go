// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// directWatch is a host's DirectWriter: it records what it was told per
// transport, and fails when it is told a change after the fd was closed,
// the same value twice, or "writable" for a transport whose inputs say it
// is not.
type directWatch struct {
	nopHost
	t    *testing.T
	last map[*Transport]bool
	fds  map[*Transport]int
}

func watchDirect(t *testing.T, l *Loop) *directWatch {
	w := &directWatch{t: t, last: map[*Transport]bool{}, fds: map[*Transport]int{}}
	l.SetHost(w)
	return w
}

func (w *directWatch) DirectChanged(tr *Transport, on bool) {
	t := w.t
	if on != tr.directWritable() || on != tr.DirectWritable() {
		t.Errorf("told %v, the gate's inputs say %v", on, !on)
	}
	if last, ok := w.last[tr]; ok && last == on {
		t.Errorf("told %v twice", on)
	}
	if fd, ok := w.fds[tr]; ok && w.last[tr] {
		// The change away from writable comes while the fd is open.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			t.Errorf("told %v after fd %d was closed", on, fd)
		}
	}
	w.last[tr] = on
}

// adopt starts following tr as a host does: read the value once.
func (w *directWatch) adopt(tr *Transport) {
	w.last[tr] = tr.DirectWritable()
	w.fds[tr] = tr.FD()
}

// check fails unless every followed transport's value is its present one.
func (w *directWatch) check(what string) {
	w.t.Helper()
	for tr, on := range w.last {
		if on != tr.DirectWritable() || on != tr.directWritable() {
			w.t.Fatalf("%s: the host's last word %v, the gate %v, its inputs %v", what, on,
				tr.DirectWritable(), tr.directWritable())
		}
	}
}

func directPair(t *testing.T, l *Loop, w *directWatch) (*Transport, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := l.OpenTransport(fds[0], Stream, func(*Event) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	w.adopt(tr)
	t.Cleanup(func() { unix.Close(fds[1]) })
	return tr, fds[1]
}

// Every change of DirectWritable reaches the DirectWriter: buffering, draining,
// write_eof, close with and without a buffer, abort, a peer reset, sendfile.
func TestDirectHookFollowsEveryChange(t *testing.T) {
	l := newTestLoop(t)
	w := watchDirect(t, l)
	spin := func() {
		for i := 0; i < 5; i++ {
			l.CallLater(0.001, func() {})
			if err := l.RunOnce(false); err != nil {
				t.Fatal(err)
			}
		}
	}
	drain := func(fd int) {
		buf := make([]byte, 1<<20)
		unix.SetNonblock(fd, true)
		for {
			if n, _ := unix.Read(fd, buf); n <= 0 {
				return
			}
		}
	}

	a, pa := directPair(t, l, w)
	if !w.last[a] {
		t.Fatal("a fresh open socket is not direct-writable")
	}
	a.Write([]byte("small"))
	w.check("a small write the kernel took")
	big := make([]byte, 8<<20)
	a.Write(big)
	w.check("a big write")
	if w.last[a] {
		t.Fatal("buffered bytes, still direct")
	}
	for a.WriteBufferSize() > 0 {
		drain(pa)
		spin()
	}
	w.check("drained")
	if !w.last[a] {
		t.Fatal("the buffer drained, not direct again")
	}
	a.WriteEOF()
	w.check("write_eof")

	b, pb := directPair(t, l, w)
	b.Write(big)
	b.Close() // closing with a buffer: the fd stays open while it flushes
	w.check("close with a buffer")
	for b.FD() >= 0 {
		drain(pb)
		spin()
	}
	w.check("closed after flushing")

	c, _ := directPair(t, l, w)
	c.Abort()
	w.check("abort")

	d, pd := directPair(t, l, w)
	unix.SetsockoptLinger(pd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	unix.Close(pd)
	for i := 0; i < 20 && d.FD() >= 0; i++ {
		d.Write([]byte("into a closed peer"))
		spin()
	}
	w.check("peer gone")
	if d.FD() >= 0 {
		t.Fatal("writes to a closed peer did not end the transport")
	}

	e, pe := directPair(t, l, w)
	f, err := os.CreateTemp(t.TempDir(), "sf")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 4<<20))
	done := false
	if err := e.Sendfile(int(f.Fd()), 0, 0, func(int64, error) { done = true }); err != nil {
		t.Fatal(err)
	}
	w.check("sendfile started")
	if w.last[e] {
		t.Fatal("direct during a sendfile")
	}
	end := time.Now().Add(10 * time.Second)
	for !done && time.Now().Before(end) {
		drain(pe)
		spin()
	}
	w.check("sendfile done")
	if !done || !w.last[e] {
		t.Fatalf("sendfile done %v, direct %v", done, w.last[e])
	}
	f.Close()
	l.Close()
	w.check("loop closed")
}
