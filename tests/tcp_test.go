// SPDX-License-Identifier: MIT

package tests

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// A few MiB through a TCP echo server come back intact, in order, and the
// connection ends cleanly on both sides after a half-close.
func TestTCPEchoChecksum(t *testing.T) {
	l := newLoop(t)
	serverLost := make(chan error, 1)
	_, port := listenEcho(t, l, serverLost)
	payload, sum := pattern(3<<20 + 12345)
	c := &collector{}
	c.onMade = func(tr *ll.Transport) {
		// Several writes of odd sizes, then a half-close.
		for off := 0; off < len(payload); off += 700001 {
			if err := tr.Write(payload[off:min(off+700001, len(payload))]); err != nil {
				t.Errorf("Write: %v", err)
			}
		}
		if err := tr.WriteEOF(); err != nil {
			t.Errorf("WriteEOF: %v", err)
		}
	}
	c.onLost = func(*ll.Transport) { l.Stop() }
	d := dial(t, l, port, c)
	runNet(t, l, 20*time.Second)

	if len(c.data) != len(payload) || sha256.Sum256(c.data) != sum {
		t.Fatalf("echoed %d bytes, want %d with the same SHA-256", len(c.data), len(payload))
	}
	if c.err != nil || c.eofs != 1 {
		t.Errorf("client: lost %v, %d EOFs", c.err, c.eofs)
	}
	want := []ll.EventKind{ll.ConnectionMade, ll.DataReceived, ll.EOFReceived, ll.ConnectionLost}
	if !equalKinds(c.kinds, want) {
		t.Errorf("client events %v, want %v", c.kinds, want)
	}
	select {
	case err := <-serverLost:
		if err != nil {
			t.Errorf("server side lost with %v", err)
		}
	default:
		t.Error("server side never got ConnectionLost")
	}
	tr, err := d.Transport()
	if err != nil || tr == nil || !tr.Lost() {
		t.Fatalf("DialFuture.Transport() = %v, %v", tr, err)
	}
	// The id is retired after ConnectionLost.
	expectErr(t, "Write after ConnectionLost", tr.Write([]byte("x")), cEBADHANDLE)
	expectErr(t, "Close after ConnectionLost", tr.Close(), cEBADHANDLE)
}

func equalKinds(a, b []ll.EventKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The server keeps its side open after the client's EOF, answers, and
// closes; the client may not write after WriteEOF.
func TestTCPHalfClose(t *testing.T) {
	l := newLoop(t)
	var got []byte
	server := &ll.ProtocolFuncs{
		Data: func(_ *ll.Transport, d []byte) { got = append(got, d...) },
		EOF: func(tr *ll.Transport) bool {
			if r, err := tr.IsReading(); r || err != nil {
				t.Errorf("server IsReading after EOF = %v, %v", r, err)
			}
			if err := tr.Write([]byte("pong:" + string(got))); err != nil {
				t.Errorf("server Write after EOF: %v", err)
			}
			tr.Close()
			return true // keep open: the reply still has to go out
		},
	}
	srv, err := l.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return server })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release()
	port, _ := srv.Port()
	c := &collector{}
	c.onMade = func(tr *ll.Transport) {
		if ok, err := tr.CanWriteEOF(); !ok || err != nil {
			t.Errorf("CanWriteEOF = %v, %v", ok, err)
		}
		tr.Write([]byte("ping"))
		if err := tr.WriteEOF(); err != nil {
			t.Errorf("WriteEOF: %v", err)
		}
		expectErr(t, "Write after WriteEOF", tr.Write([]byte("late")), cESTATE)
		if r, _ := tr.IsReading(); !r {
			t.Error("client stopped reading after its own WriteEOF")
		}
	}
	c.onLost = func(*ll.Transport) { l.Stop() }
	dial(t, l, port, c)
	runNet(t, l, 10*time.Second)
	if string(got) != "ping" || string(c.data) != "pong:ping" || c.eofs != 1 || c.err != nil {
		t.Fatalf("server got %q; client got %q, %d EOFs, lost %v", got, c.data, c.eofs, c.err)
	}
}

// A writer whose peer does not read is told to pause once, and to resume
// once when the peer drains the data.
func TestTCPPauseResumeWriting(t *testing.T) {
	l := newLoop(t)
	const total = 24 << 20
	received := 0
	var serverT *ll.Transport
	server := &ll.ProtocolFuncs{
		Made: func(tr *ll.Transport) { serverT = tr; tr.PauseReading() },
		Data: func(_ *ll.Transport, d []byte) { received += len(d) },
		EOF:  func(*ll.Transport) bool { l.Stop(); return false },
	}
	srv, err := l.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return server })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release()
	port, _ := srv.Port()
	pauses, resumes := 0, 0
	var client *ll.Transport
	payload := make([]byte, total)
	cp := &ll.ProtocolFuncs{
		Made: func(tr *ll.Transport) {
			client = tr
			if err := tr.SetWriteBufferLimits(256<<10, 64<<10); err != nil {
				t.Errorf("SetWriteBufferLimits: %v", err)
			}
			expectErr(t, "SetWriteBufferLimits(low > high)", tr.SetWriteBufferLimits(10, 20), cEINVAL)
			tr.Write(payload)
			if n, err := tr.WriteBufferSize(); err != nil || n <= 256<<10 {
				t.Errorf("WriteBufferSize after a %d-byte write to a stalled peer = %d, %v", total, n, err)
			}
		},
		Pause: func(tr *ll.Transport) {
			pauses++
			// Let the peer read once the pause has been seen.
			l.CallLater(10*time.Millisecond, func() { serverT.ResumeReading() })
		},
		Resume: func(tr *ll.Transport) {
			resumes++
			if n, _ := tr.WriteBufferSize(); n > 64<<10 {
				t.Errorf("ResumeWriting with %d bytes buffered, low-water mark 64 KiB", n)
			}
			tr.Close()
		},
	}
	dial(t, l, port, cp)
	runNet(t, l, 20*time.Second)
	if pauses != 1 || resumes != 1 || received != total {
		t.Fatalf("pauses %d resumes %d, server received %d of %d", pauses, resumes, received, total)
	}
	if n, err := client.WriteBufferSize(); err == nil {
		t.Errorf("client still live after Close: buffer %d", n)
	}
}

// A refused connection fails the dial's future; the protocol hears nothing
// and the binding keeps no callback entry for it.
func TestTCPConnectionRefused(t *testing.T) {
	l := newLoop(t)
	port := closedPort(t)
	var counts []int
	for range 3 {
		p := &collector{}
		d, err := l.DialTCP("127.0.0.1", port, p)
		if err != nil {
			t.Fatal(err)
		}
		runUntil(t, l, &d.Future, 10*time.Second)
		tr, err := d.Transport()
		if tr != nil || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("Transport() = %v, %v; want ECONNREFUSED", tr, err)
		}
		if len(p.kinds) != 0 {
			t.Errorf("protocol got %v for a refused connection", p.kinds)
		}
		l.RunOnce(true) // the done callback that drops the dial's entry
		d.Release()
		counts = append(counts, ll.LiveCallbacks())
	}
	// The first dial installs the loop's sink; later ones leave nothing.
	if counts[1] != counts[0] || counts[2] != counts[0] {
		t.Errorf("callback table after each refused dial: %v", counts)
	}
}

// A name that does not resolve fails with LL_ENONAME (.invalid never
// resolves, RFC 6761); the loop goes on serving.
func TestTCPNameDoesNotResolve(t *testing.T) {
	l := newLoop(t)
	d, err := l.DialTCP("no-such-host.invalid", 80, &collector{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	runUntil(t, l, &d.Future, 30*time.Second)
	_, err = d.Transport()
	expectErr(t, "dial no-such-host.invalid", err, cENONAME)
	ran := false
	l.CallSoon(func() { ran = true })
	l.RunOnce(true)
	if !ran {
		t.Error("loop did not run a callback after the failed dial")
	}
}

// A peer that resets the connection (SO_LINGER 0, then close) ends the
// server's transport with ECONNRESET.
func TestTCPPeerReset(t *testing.T) {
	l := newLoop(t)
	var serverErr error
	serverLost := false
	server := &ll.ProtocolFuncs{
		Made: func(tr *ll.Transport) { tr.Write([]byte("hi")) },
		Lost: func(_ *ll.Transport, err error) { serverLost, serverErr = true, err; l.Stop() },
	}
	srv, err := l.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return server })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release()
	port, _ := srv.Port()
	c := &collector{}
	c.onMade = func(tr *ll.Transport) {
		fd, err := tr.FD()
		if err != nil {
			t.Errorf("FD: %v", err)
			return
		}
		if err := unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0}); err != nil {
			t.Errorf("SO_LINGER: %v", err)
		}
		tr.Abort()
	}
	dial(t, l, port, c)
	runNet(t, l, 10*time.Second)
	if !serverLost || !errors.Is(serverErr, syscall.ECONNRESET) {
		t.Fatalf("server lost=%v with %v, want ECONNRESET", serverLost, serverErr)
	}
	if !c.lost || c.err != nil {
		t.Errorf("client (aborted) lost=%v with %v, want nil", c.lost, c.err)
	}
}

// An echo over a Unix stream socket; the server has no port, and the
// addresses name the socket's path.
func TestUnixSocketEcho(t *testing.T) {
	l := newLoop(t)
	path := filepath.Join(t.TempDir(), "echo.sock")
	srv, err := l.ListenUnix(path, func() ll.Protocol { return &echoProto{} })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release()
	if port, err := srv.Port(); port != 0 || err != nil {
		t.Errorf("Unix server Port() = %d, %v", port, err)
	}
	if a, err := srv.SockName(0); err != nil || a.Family != syscall.AF_UNIX || a.Path != path {
		t.Errorf("SockName(0) = %+v, %v", a, err)
	}
	payload, sum := pattern(300000)
	c := &collector{}
	c.onMade = func(tr *ll.Transport) {
		if a, err := tr.PeerName(); err != nil || a.Path != path {
			t.Errorf("PeerName = %+v, %v", a, err)
		}
		tr.Write(payload)
		tr.WriteEOF()
	}
	c.onLost = func(*ll.Transport) { l.Stop() }
	d, err := l.DialUnix(path, c)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	runNet(t, l, 10*time.Second)
	if sha256.Sum256(c.data) != sum || c.err != nil {
		t.Fatalf("echoed %d of %d bytes, lost %v", len(c.data), len(payload), c.err)
	}
	// Once the server is closed, its stale socket file is replaced.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv2, err := l.ListenUnix(path, func() ll.Protocol { return &echoProto{} })
	if err != nil {
		t.Fatalf("ListenUnix over a stale socket file: %v", err)
	}
	srv2.Release()
	// A regular file at the path is not removed.
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, []byte("keep"), 0o600)
	_, err = l.ListenUnix(file, func() ll.Protocol { return &echoProto{} })
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("ListenUnix over a regular file: %v, want EADDRINUSE", err)
	}
}
