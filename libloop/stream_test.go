// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runUntil runs the loop until done() or the deadline.
func runUntil(t *testing.T, l *Loop, limit time.Duration, done func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !done() {
		if time.Now().After(end) {
			t.Fatalf("timed out")
		}
		l.CallLater(0.01, func() {})
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
	}
}

// allDone reports whether every future is done (a runUntil condition).
func allDone(futs []*Future) bool {
	for _, f := range futs {
		if !f.Done() {
			return false
		}
	}
	return true
}

// echoProto echoes data back and keeps the transport open after EOF only
// long enough to close it.
func echoProto(ev *Event) bool {
	if ev.Kind == DataReceived {
		ev.T.Write(ev.Data)
	}
	return false
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

func TestTCPEcho64MiBChecksum(t *testing.T) {
	l := newTestLoop(t)
	before := openFDs(t)
	srv, err := l.ListenTCP("127.0.0.1", 0, 0, 0, echoProto)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := srv.Port()
	const total = 64 << 20
	src := make([]byte, 1<<20)
	for i := range src {
		src[i] = byte(i * 7)
	}
	sent, recvd := 0, 0
	hs, hr := sha256.New(), sha256.New()
	var kinds []EventKind
	lost := 0
	var client *Transport
	pump := func(tr *Transport) {
		for sent < total && tr.WriteBufferSize() < 256<<10 {
			n := min(len(src), total-sent)
			tr.Write(src[:n])
			hs.Write(src[:n])
			sent += n
		}
		if sent == total {
			tr.WriteEOF()
		}
	}
	err = l.DialTCP("127.0.0.1", port, func(ev *Event) bool {
		kinds = append(kinds, ev.Kind)
		switch ev.Kind {
		case ConnectionMade:
			pump(ev.T)
		case DataReceived:
			hr.Write(ev.Data)
			recvd += len(ev.Data)
			pump(ev.T)
		case ResumeWriting:
			pump(ev.T)
		case ConnectionLost:
			lost++
		}
		return false
	}, func(tr *Transport, err error) {
		if err != nil {
			t.Errorf("dial: %v", err)
		}
		client = tr
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 60*time.Second, func() bool { return lost == 1 })
	if client == nil || recvd != total || string(hs.Sum(nil)) != string(hr.Sum(nil)) {
		t.Fatalf("received %d of %d bytes (checksum match %v)", recvd, total, string(hs.Sum(nil)) == string(hr.Sum(nil)))
	}
	if kinds[0] != ConnectionMade || kinds[len(kinds)-1] != ConnectionLost {
		t.Fatalf("events %v: want ConnectionMade first, ConnectionLost last", kinds[:3])
	}
	srv.Close()
	// The server's side closes after its EOF answer; let it finish.
	l.RunOnce(true)
	l.RunOnce(true)
	if after := openFDs(t); after != before {
		t.Fatalf("fds before %d, after %d", before, after)
	}
}

// stalledPair connects a client to a server whose end never reads (its
// reading paused from ConnectionMade on), so what the client writes piles
// up in the client's buffer; onClient sees the client's events. It returns
// once both ends exist; the server closes when the test ends.
func stalledPair(t *testing.T, l *Loop, onClient func(ev *Event)) (c, peer *Transport) {
	t.Helper()
	srv, err := l.ListenTCP("127.0.0.1", 0, 0, 0, func(ev *Event) bool {
		if ev.Kind == ConnectionMade {
			peer = ev.T
			peer.PauseReading()
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	port, _ := srv.Port()
	l.DialTCP("127.0.0.1", port, func(ev *Event) bool {
		onClient(ev)
		return true
	}, func(tr *Transport, err error) { c = tr })
	runUntil(t, l, 5*time.Second, func() bool { return c != nil && peer != nil })
	return c, peer
}

func TestFlowControlPauseResumeOnce(t *testing.T) {
	l := newTestLoop(t)
	pauses, resumes := 0, 0
	c, peer := stalledPair(t, l, func(ev *Event) {
		switch ev.Kind {
		case PauseWriting:
			pauses++
		case ResumeWriting:
			resumes++
		}
	})
	chunk := make([]byte, 64<<10)
	for i := 0; i < 200 && pauses == 0; i++ {
		c.Write(chunk)
		l.RunOnce(true)
	}
	if pauses != 1 || c.WriteBufferSize() <= DefaultHighWater {
		t.Fatalf("pauses %d, buffered %d", pauses, c.WriteBufferSize())
	}
	if !c.WritePaused() {
		t.Fatalf("WritePaused false with %d buffered", c.WriteBufferSize())
	}
	peer.ResumeReading()
	runUntil(t, l, 10*time.Second, func() bool { return resumes == 1 })
	runUntil(t, l, 10*time.Second, func() bool { return c.WriteBufferSize() == 0 })
	if pauses != 1 || resumes != 1 || c.WritePaused() {
		t.Fatalf("pauses %d resumes %d paused %v", pauses, resumes, c.WritePaused())
	}
	c.Close()
	peer.Close()
}

// A transport's own water marks hold until set back to the defaults
// (SetWriteBufferLimits(0, 0)), which pause at once a buffer already above
// the default high mark; and the limits read back as set.
func TestWriteBufferLimitsOwnAndDefault(t *testing.T) {
	l := newTestLoop(t)
	pauses := 0
	c, peer := stalledPair(t, l, func(ev *Event) {
		if ev.Kind == PauseWriting {
			pauses++
		}
	})
	if h, lo := c.WriteBufferLimits(); h != DefaultHighWater || lo != DefaultLowWater {
		t.Fatalf("new transport's limits %d, %d", h, lo)
	}
	const high, low = 64 << 20, 1 << 10
	if err := c.SetWriteBufferLimits(high, low); err != nil {
		t.Fatal(err)
	}
	if h, lo := c.WriteBufferLimits(); h != high || lo != low {
		t.Fatalf("limits %d, %d after setting %d, %d", h, lo, high, low)
	}
	chunk := make([]byte, 64<<10)
	for i := 0; i < 200 && c.WriteBufferSize() <= 2*DefaultHighWater; i++ {
		c.Write(chunk)
		l.RunOnce(true)
	}
	if pauses != 0 || c.WritePaused() || c.WriteBufferSize() <= DefaultHighWater {
		t.Fatalf("under its own high mark: pauses %d, buffered %d", pauses, c.WriteBufferSize())
	}
	if err := c.SetWriteBufferLimits(0, 0); err != nil {
		t.Fatal(err)
	}
	if h, lo := c.WriteBufferLimits(); h != DefaultHighWater || lo != DefaultLowWater {
		t.Fatalf("limits %d, %d after setting the defaults", h, lo)
	}
	l.RunOnce(true)
	if pauses != 1 || !c.WritePaused() {
		t.Fatalf("back to the defaults with %d buffered: pauses %d", c.WriteBufferSize(), pauses)
	}
	c.Abort()
	peer.Close()
}

func TestConnectRefusedAndNoName(t *testing.T) {
	l := newTestLoop(t)
	// A port nobody listens on: bind one, note it, close it.
	fd, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	sa, _ := unix.Getsockname(fd)
	unix.Close(fd)
	port := sa.(*unix.SockaddrInet4).Port
	var got []error
	l.DialTCP("127.0.0.1", port, nil, func(tr *Transport, err error) { got = append(got, err) })
	// Not a valid DNS name: fails locally, no name server is asked.
	l.DialTCP("no..such..host", 80, nil, func(tr *Transport, err error) { got = append(got, err) })
	runUntil(t, l, 10*time.Second, func() bool { return len(got) == 2 })
	codes := map[int]bool{Code(got[0]): true, Code(got[1]): true}
	if !codes[-int(unix.ECONNREFUSED)] || !codes[int(ENONAME)] {
		t.Fatalf("errors %v", got)
	}
}

func TestUnixHalfCloseKeepOpen(t *testing.T) {
	l := newTestLoop(t)
	path := filepath.Join(t.TempDir(), "s.sock")
	var order []string
	srv, err := l.ListenUnix(path, 0, func(ev *Event) bool {
		switch ev.Kind {
		case DataReceived:
			order = append(order, "srv-data:"+string(ev.Data))
		case EOFReceived:
			order = append(order, "srv-eof")
			ev.T.Write([]byte("bye"))
			ev.T.Close()
			return true
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	lost := -1
	l.DialUnix(path, func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			ev.T.Write([]byte("hi"))
			ev.T.WriteEOF()
		case DataReceived:
			order = append(order, "cli-data:"+string(ev.Data))
		case EOFReceived:
			order = append(order, "cli-eof")
		case ConnectionLost:
			lost = ev.Code
		}
		return false
	}, func(*Transport, error) {})
	runUntil(t, l, 5*time.Second, func() bool { return lost != -1 })
	want := []string{"srv-data:hi", "srv-eof", "cli-data:bye", "cli-eof"}
	if len(order) != len(want) {
		t.Fatalf("order %v", order)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v", order)
		}
	}
}

func TestUDPEchoAndConnectedRefused(t *testing.T) {
	l := newTestLoop(t)
	srv, err := l.OpenUDP("127.0.0.1", 0, "", 0, 0, func(ev *Event) bool {
		if ev.Kind == DatagramReceived {
			ev.T.SendTo(ev.Data, ev.Addr)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := srv.SockName()
	port := SockaddrPort(raw)
	var got string
	errs := 0
	cli, err := l.OpenUDP("", 0, "127.0.0.1", port, 0, func(ev *Event) bool {
		switch ev.Kind {
		case DatagramReceived:
			got = string(ev.Data)
		case ErrorReceived:
			errs++
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	cli.SendTo([]byte("ping"), nil)
	runUntil(t, l, 5*time.Second, func() bool { return got == "ping" })
	srv.Close()
	runUntil(t, l, 5*time.Second, func() bool { return srv.state == tClosed })
	cli.SendTo([]byte("again"), nil)
	runUntil(t, l, 5*time.Second, func() bool { return errs > 0 })
	cli.Close()
}

// A paused transport that Close drains stays open until its ResumeWriting
// is delivered; what the protocol writes there, and writes made while Close
// flushes, reach the peer before the close (asyncio's order).
func TestCloseWhilePausedDeliversResumeWrites(t *testing.T) {
	l := newTestLoop(t)
	var peer *Transport
	var got []byte
	peerEOF := false
	srv, err := l.ListenTCP("127.0.0.1", 0, 0, 0, func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			peer = ev.T
			peer.PauseReading()
		case DataReceived:
			got = append(got, ev.Data...)
		case EOFReceived:
			peerEOF = true
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	var c *Transport
	var kinds []EventKind
	l.DialTCP("127.0.0.1", port, func(ev *Event) bool {
		kinds = append(kinds, ev.Kind)
		if ev.Kind == ResumeWriting {
			if err := ev.T.Write([]byte("<resume>")); err != nil {
				t.Errorf("write in ResumeWriting of a closing transport: %v", err)
			}
		}
		return true
	}, func(tr *Transport, err error) { c = tr })
	runUntil(t, l, 5*time.Second, func() bool { return c != nil && peer != nil })
	chunk := make([]byte, 64<<10)
	sent := 0
	for i := 0; i < 200 && !c.WritePaused(); i++ {
		c.Write(chunk)
		sent += len(chunk)
	}
	c.Close()
	if err := c.Write([]byte("<closing>")); err != nil {
		t.Fatalf("write while Close flushes: %v", err)
	}
	peer.ResumeReading()
	runUntil(t, l, 10*time.Second, func() bool { return peerEOF })
	want := "<closing><resume>"
	if len(got) != sent+len(want) || string(got[sent:]) != want {
		t.Fatalf("peer got %d bytes ending %q, want %d ending %q", len(got), got[max(0, len(got)-20):], sent+len(want), want)
	}
	if err := c.Write([]byte("x")); err != ECLOSED {
		t.Fatalf("write after the close finished: %v, want ECLOSED", err)
	}
	peer.Close()
}

// Writes to a transport the peer ended are dropped with nil (the first
// one's error ends it with ConnectionLost); after the host's own Close or
// Abort they are ECLOSED.
func TestWriteAfterLossIsDropped(t *testing.T) {
	l := newTestLoop(t)
	lost := map[*Transport]int{}
	open := func() (*Transport, int) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.SetNonblock(fds[0], true)
		tr, err := l.OpenTransport(fds[0], Stream, func(ev *Event) bool {
			if ev.Kind == ConnectionLost {
				lost[ev.T] = ev.Code
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		return tr, fds[1]
	}
	tr, peer := open()
	unix.Close(peer)
	for i := range 5 {
		if err := tr.Write([]byte("x")); err != nil {
			t.Fatalf("write %d after the peer went: %v", i, err)
		}
	}
	if !tr.IsClosing() {
		t.Fatal("not closing after the failed write")
	}
	if err := tr.Writev([][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { _, ok := lost[tr]; return ok })
	if c := lost[tr]; c != -int(unix.EPIPE) && c != -int(unix.ECONNRESET) {
		t.Fatalf("lost with %d", c)
	}
	if err := tr.Write([]byte("x")); err != nil {
		t.Fatalf("after ConnectionLost: %v", err)
	}
	for _, end := range []func(*Transport) error{(*Transport).Close, (*Transport).Abort} {
		tr, peer := open()
		end(tr)
		unix.Close(peer)
		if err := tr.Write([]byte("x")); err != ECLOSED {
			t.Fatalf("after the host's end: %v, want ECLOSED", err)
		}
	}
}

// ListenTCP on every interface is all or nothing: with the port taken on
// 127.0.0.1 the IPv6 wildcard alone would bind, but the call fails with
// EADDRINUSE and leaves no socket open (asyncio's create_server).
func TestListenAllInterfacesAllOrNothing(t *testing.T) {
	l := newTestLoop(t)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	unix.Listen(fd, 1)
	sa, _ := unix.Getsockname(fd)
	port := sa.(*unix.SockaddrInet4).Port
	before := openFDs(t)
	s, err := l.ListenTCP("", port, 0, 0, echoProto)
	if err != unix.EADDRINUSE || s != nil {
		t.Fatalf("ListenTCP: %v, %v; want EADDRINUSE", s, err)
	}
	if n := openFDs(t); n != before {
		t.Fatalf("%d fds open after the failure, %d before", n, before)
	}
}
