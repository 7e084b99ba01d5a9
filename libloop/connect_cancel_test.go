// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// dialRecord is what a connect told its caller and its protocol.
type dialRecord struct {
	calls  int
	t      *Transport
	err    error
	events int
}

func (r *dialRecord) proto(*Event) bool { r.events++; return false }

func (r *dialRecord) done(t *Transport, err error) { r.calls, r.t, r.err = r.calls+1, t, err }

// warmDialFDs makes the Go runtime open what it keeps for good (its
// poller, on a first name lookup) before a test counts fds.
func warmDialFDs(t *testing.T, l *Loop) {
	t.Helper()
	var r dialRecord
	if err := l.DialTCP("localhost", 1, nil, r.done); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return r.calls == 1 })
}

// checkAborted: the connect reported want once, made no transport, its
// protocol heard nothing, no socket was left open, and that stays so while
// the loop runs on.
func checkAborted(t *testing.T, l *Loop, r *dialRecord, want error, fds int) {
	t.Helper()
	runUntil(t, l, 5*time.Second, func() bool { return r.calls > 0 })
	end := time.Now().Add(150 * time.Millisecond)
	runUntil(t, l, time.Second, func() bool { return time.Now().After(end) })
	if r.calls != 1 || r.t != nil || !errors.Is(r.err, want) {
		t.Errorf("done ran %d times with (%v, %v), want once with (nil, %v)", r.calls, r.t, r.err, want)
	}
	if r.events != 0 {
		t.Errorf("the protocol got %d events, want none", r.events)
	}
	if n := openFDs(t); n != fds {
		t.Errorf("%d fds open, want %d: a socket leaked", n, fds)
	}
}

// A connect's future cancelled while the socket waits (the peer's accept
// queue is full): the socket is closed, done gets ECANCELLED after the
// future was cancelled, and no transport is made.
func TestDialForCancelWhileConnecting(t *testing.T) {
	l := newTestLoop(t)
	warmDialFDs(t, l)
	port := blackhole(t)
	fds := openFDs(t)
	f, _ := l.NewFuture()
	var r dialRecord
	var stateAtDone FutureState
	if err := l.DialTCPFor(f, "127.0.0.1", port, DialOptions{}, r.proto, func(tr *Transport, err error) {
		stateAtDone = f.State()
		r.done(tr, err)
	}); err != nil {
		t.Fatal(err)
	}
	l.RunOnce(true)
	l.RunOnce(true)
	if n := openFDs(t); n != fds+1 {
		t.Fatalf("%d fds open while connecting, want %d", n, fds+1)
	}
	if !f.Cancel("stop") {
		t.Fatal("Cancel of a pending connect's future reported false")
	}
	checkAborted(t, l, &r, ECANCELLED, fds)
	if stateAtDone != Cancelled || f.State() != Cancelled {
		t.Errorf("future state %v at done, %v after; want Cancelled", stateAtDone, f.State())
	}
	if _, err := f.Result(); err != ECANCELLED {
		t.Errorf("Result: %v, want ECANCELLED", err)
	}
}

// Cancelled before the loop ran, against a peer that accepts at once (by
// address and by name, whose lookup's outcome comes after the cancel; and
// a Unix socket, which connects inside its first callback): nothing
// connects at all.
func TestDialForCancelBeforeItRan(t *testing.T) {
	l := newTestLoop(t)
	warmDialFDs(t, l)
	accepted := 0
	srv, err := l.ListenTCP("127.0.0.1", 0, 16, 0, func(ev *Event) bool {
		if ev.Kind == ConnectionMade {
			accepted++
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	path := "@libloop-dialfor-" + t.Name()
	usrv, err := l.ListenUnix(path, 16, func(ev *Event) bool {
		if ev.Kind == ConnectionMade {
			accepted++
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer usrv.Close()
	fds := openFDs(t)
	dials := map[string]func(f *Future, r *dialRecord) error{
		"address": func(f *Future, r *dialRecord) error {
			return l.DialTCPFor(f, "127.0.0.1", port, DialOptions{}, r.proto, r.done)
		},
		"name": func(f *Future, r *dialRecord) error {
			return l.DialTCPFor(f, "localhost", port, DialOptions{}, r.proto, r.done)
		},
		"unix": func(f *Future, r *dialRecord) error { return l.DialUnixFor(f, path, r.proto, r.done) },
	}
	for name, dial := range dials {
		f, _ := l.NewFuture()
		var r dialRecord
		if err := dial(f, &r); err != nil {
			t.Fatal(name, err)
		}
		f.Cancel("")
		checkAborted(t, l, &r, ECANCELLED, fds)
		f.Release()
	}
	if accepted != 0 {
		t.Errorf("the servers accepted %d connections, want none", accepted)
	}
}

// A future settled by its owner (not cancelled) before the connect
// completes: the connect closes its socket unused.
func TestDialForSettledElsewhere(t *testing.T) {
	l := newTestLoop(t)
	warmDialFDs(t, l)
	srv, err := l.ListenTCP("127.0.0.1", 0, 16, 0, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	l.RunOnce(true)
	fds := openFDs(t)
	f, _ := l.NewFuture()
	var r dialRecord
	if err := l.DialTCPFor(f, "127.0.0.1", port, DialOptions{}, r.proto, r.done); err != nil {
		t.Fatal(err)
	}
	f.SetException(int(EINVAL), "owner gave up", 0, nil)
	f.Exception()
	runUntil(t, l, 5*time.Second, func() bool { return r.calls > 0 })
	// The server's side of the connection sees it closed, then goes.
	end := time.Now().Add(150 * time.Millisecond)
	runUntil(t, l, time.Second, func() bool { return time.Now().After(end) })
	checkAborted(t, l, &r, ECANCELLED, fds)
}

// A completed connect's future cancelled later: nothing happens to the
// transport.
func TestDialForCancelAfterCompletion(t *testing.T) {
	l := newTestLoop(t)
	srv, err := l.ListenTCP("127.0.0.1", 0, 16, 0, func(*Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	f, _ := l.NewFuture()
	var r dialRecord
	if err := l.DialTCPFor(f, "127.0.0.1", port, DialOptions{}, r.proto, func(tr *Transport, err error) {
		r.done(tr, err)
		if err == nil {
			f.SetResult(1, nil)
		}
	}); err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 5*time.Second, func() bool { return r.calls > 0 && r.events > 0 })
	if f.Cancel("") {
		t.Error("Cancel of a settled connect's future reported true")
	}
	if r.err != nil || r.t == nil || r.t.IsClosing() {
		t.Fatalf("connect: (%v, %v); want an open transport", r.t, r.err)
	}
	r.t.Close()
}

// DialTCPFor and DialUnixFor refuse a future they cannot own.
func TestDialForBadFuture(t *testing.T) {
	l := newTestLoop(t)
	other := newTestLoop(t)
	var r dialRecord
	done, _ := l.NewFuture()
	done.SetResult(0, nil)
	foreign, _ := other.NewFuture()
	task, _ := l.NewTask(func(*Task) {})
	cases := []struct {
		name string
		f    *Future
		want error
	}{
		{"nil", nil, EINVAL},
		{"done", done, ESTATE},
		{"another loop's", foreign, EINVAL},
		{"a task's", &task.Future, EINVAL},
	}
	for _, c := range cases {
		if err := l.DialTCPFor(c.f, "127.0.0.1", 1, DialOptions{}, nil, r.done); err != c.want {
			t.Errorf("DialTCPFor with %s future: %v, want %v", c.name, err, c.want)
		}
		if err := l.DialUnixFor(c.f, "/nonexistent", nil, r.done); err != c.want {
			t.Errorf("DialUnixFor with %s future: %v, want %v", c.name, err, c.want)
		}
	}
	f, _ := l.NewFuture()
	if err := l.DialTCPFor(f, "127.0.0.1", 70000, DialOptions{}, nil, r.done); err != EINVAL {
		t.Errorf("bad port: %v, want EINVAL", err)
	}
	if f.role != nil {
		t.Error("a refused connect left its role on the future")
	}
	runUntil(t, l, time.Second, func() bool { return true })
	if r.calls != 0 {
		t.Errorf("done ran %d times for refused connects", r.calls)
	}
}

// silentTCPPeer accepts one connection, reads until the client goes and
// never answers (a TLS server that never sends its ServerHello). got
// closes when the first bytes arrived, gone when the client closed.
func silentTCPPeer(t *testing.T) (port int, got, gone chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got, gone = make(chan struct{}), make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer close(gone)
		defer c.Close()
		buf := make([]byte, 4096)
		first := true
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if first {
				close(got)
				first = false
			}
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, got, gone
}

// waitChan runs the loop until ch closes.
func waitChan(t *testing.T, l *Loop, ch chan struct{}) {
	t.Helper()
	runUntil(t, l, 5*time.Second, func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	})
}

// A TLS connect cancelled mid-handshake, through its future and through
// its context: the connected socket is closed (the peer sees it go), the
// protocol hears nothing, done gets ECANCELLED / the context's error.
func TestDialCancelDuringTLSHandshake(t *testing.T) {
	for _, via := range []string{"future", "context"} {
		t.Run(via, func(t *testing.T) {
			l := newTestLoop(t)
			warmDialFDs(t, l)
			cfg := NewTLSConfig()
			port, got, gone := silentTCPPeer(t)
			fds := openFDs(t)
			var r dialRecord
			opts := DialOptions{TLS: cfg, ServerName: "localhost"}
			var cancel func()
			want := error(ECANCELLED)
			if via == "future" {
				f, _ := l.NewFuture()
				if err := l.DialTCPFor(f, "127.0.0.1", port, opts, r.proto, r.done); err != nil {
					t.Fatal(err)
				}
				cancel = func() { f.Cancel("") }
			} else {
				ctx, stop := context.WithCancel(context.Background())
				defer stop()
				if err := l.DialTCPContext(ctx, "127.0.0.1", port, opts, r.proto, r.done); err != nil {
					t.Fatal(err)
				}
				cancel, want = stop, context.Canceled
			}
			waitChan(t, l, got) // the ClientHello arrived: the handshake runs
			if r.calls != 0 {
				t.Fatalf("the connect ended before the cancel: %v", r.err)
			}
			cancel()
			waitChan(t, l, gone)
			checkAborted(t, l, &r, want, fds)
		})
	}
}

// DialTCPContext cancelled while connecting: the context's error, no transport, no fd. DialUnixContext with
// a context already done refuses at once.
func TestDialContextCancel(t *testing.T) {
	l := newTestLoop(t)
	warmDialFDs(t, l)
	port := blackhole(t)
	fds := openFDs(t)

	ctx, stop := context.WithCancel(context.Background())
	var r dialRecord
	if err := l.DialTCPContext(ctx, "127.0.0.1", port, DialOptions{}, r.proto, r.done); err != nil {
		t.Fatal(err)
	}
	l.RunOnce(true)
	stop()
	checkAborted(t, l, &r, context.Canceled, fds)

	// A Unix connect cannot hang (a full backlog is EAGAIN at once): only
	// a context done before the call is certain to stop it.
	var u dialRecord
	if err := l.DialUnixContext(ctx, "@libloop-dialctx", u.proto, u.done); err != context.Canceled {
		t.Errorf("DialUnixContext with a done context: %v, want context.Canceled", err)
	}
}
