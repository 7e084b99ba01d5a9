// SPDX-License-Identifier: MIT

package tests

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// Transports over fds the host already has: ll_transport_open, and
// sendfile between two of them.

// ll_transport_open adopts one end of a socketpair: bytes flow both ways,
// the peer's close is an EOF, and the fd cannot be adopted twice.
func TestTransportOpenSocketpair(t *testing.T) {
	l := newLoop(t)
	p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	peer := p[1]
	defer func() {
		if peer >= 0 {
			unix.Close(peer)
		}
	}()
	c := &collector{}
	tr, err := l.OpenTransport(p[0], ll.KindStream, c)
	if err != nil {
		unix.Close(p[0])
		t.Fatal(err)
	}
	if fd, err := tr.FD(); fd != p[0] || err != nil {
		t.Errorf("FD() = %d, %v; want %d", fd, err, p[0])
	}
	if len(c.kinds) != 0 {
		t.Error("ConnectionMade ran inside OpenTransport")
	}
	_, err = l.OpenTransport(p[0], ll.KindStream, &collector{})
	if !errors.Is(err, syscall.EBUSY) {
		t.Errorf("OpenTransport of an adopted fd: %v, want EBUSY", err)
	}
	if _, err := unix.Write(peer, []byte("from peer")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20 && len(c.data) < 9; i++ {
		l.RunOnce(false)
	}
	if string(c.data) != "from peer" || c.kinds[0] != ll.ConnectionMade {
		t.Fatalf("got %q, events %v", c.data, c.kinds)
	}
	tr.Write([]byte("to peer"))
	buf := make([]byte, 64)
	n, err := unix.Read(peer, buf)
	if err != nil || string(buf[:n]) != "to peer" {
		t.Fatalf("peer read %q, %v", buf[:max(n, 0)], err)
	}
	unix.Close(peer)
	peer = -1
	for i := 0; i < 20 && !c.lost; i++ {
		l.RunOnce(false)
	}
	if c.eofs != 1 || !c.lost || c.err != nil {
		t.Fatalf("after the peer closed: %d EOFs, lost %v (%v)", c.eofs, c.lost, c.err)
	}
	// The transport closed its fd: it may be reused, but not through the id.
	expectErr(t, "FD after ConnectionLost", func() error { _, err := tr.FD(); return err }(), cEBADHANDLE)
}

// Sendfile sends a file's bytes from an offset after what is buffered;
// its future's value is the count.
func TestTransportSendfile(t *testing.T) {
	l := newLoop(t)
	content, _ := pattern(1<<20 + 777)
	path := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := l.OpenTransport(p[0], ll.KindStream, &collector{})
	if err != nil {
		t.Fatal(err)
	}
	recv := &collector{}
	recv.onLost = func(*ll.Transport) { l.Stop() }
	if _, err := l.OpenTransport(p[1], ll.KindStream, recv); err != nil {
		t.Fatal(err)
	}
	sender.Write([]byte("head:"))
	fut, err := sender.Sendfile(int(f.Fd()), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fut.Release()
	_, err = sender.Sendfile(int(f.Fd()), 0, 1)
	expectErr(t, "a second Sendfile while one runs", err, cESTATE)
	fut.AddDoneCallback(func(*ll.Future) { sender.Close() })
	runNet(t, l, 20*time.Second)
	v, err := fut.Result()
	if err != nil || int(v) != len(content)-10 {
		t.Fatalf("Sendfile result %d, %v; want %d", v, err, len(content)-10)
	}
	want := append([]byte("head:"), content[10:]...)
	if !bytes.Equal(recv.data, want) {
		t.Fatalf("received %d bytes, want %d (head + file from offset 10)", len(recv.data), len(want))
	}
}

// Writes after the peer went away are dropped (nil): the first one's error
// ends the transport with ConnectionLost, as asyncio's write, and none is
// returned; after the host's own Close they are ECLOSED.
func TestTransportWriteAfterPeerGone(t *testing.T) {
	l := newLoop(t)
	p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	tr, err := l.OpenTransport(p[0], ll.KindStream, c)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(p[1])
	for i := 0; i < 5; i++ {
		if err := tr.Write([]byte("x")); err != nil {
			t.Fatalf("write %d after the peer went: %v", i, err)
		}
	}
	for i := 0; i < 50 && !c.lost; i++ {
		l.RunOnce(true)
	}
	if !c.lost || !errors.Is(c.err, syscall.EPIPE) && !errors.Is(c.err, syscall.ECONNRESET) {
		t.Fatalf("lost %v with %v", c.lost, c.err)
	}
	q, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(q[1])
	d := &collector{}
	tr2, err := l.OpenTransport(q[0], ll.KindStream, d)
	if err != nil {
		t.Fatal(err)
	}
	tr2.Close()
	expectErr(t, "write after Close", tr2.Write([]byte("x")), cECLOSED)
	for i := 0; i < 50 && !d.lost; i++ {
		l.RunOnce(true)
	}
}
