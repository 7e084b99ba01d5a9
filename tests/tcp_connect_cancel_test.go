// SPDX-License-Identifier: MIT

//go:build linux

package tests

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// openFDCount counts this process's open fds (the library's sockets are
// in it too).
func openFDCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// DialFuture.Wait from another goroutine with a context that ends while
// the connect hangs: ctx.Err() at once, and the connect is aborted (its
// future cancelled): no ConnectionMade, no transport in the walk, no fd
// left, the loop still running. A connect that completes gives its
// transport.
func TestTCPConnectCancelWait(t *testing.T) {
	l, _ := runningLoop(t)
	port := blackholePort(t)
	// The library's Go runtime opens its poller on a first lookup: before
	// the fds are counted.
	var warm *ll.DialFuture
	onLoop(t, l, func() { warm, _ = l.DialTCP("localhost", 1, &ll.BaseProtocol{}) })
	warm.Wait(context.Background())
	onLoop(t, l, func() { warm.Release() })
	fds := openFDCount(t)

	c := &collector{}
	var d *ll.DialFuture
	onLoop(t, l, func() {
		var err error
		if d, err = l.DialTCP("127.0.0.1", port, c); err != nil {
			t.Error(err)
		}
	})
	defer onLoop(t, l, func() { d.Release() })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if tr, err := d.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) || tr != nil {
		t.Fatalf("Wait: %v, %v; want DeadlineExceeded and no transport", tr, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var st ll.FutureState
		onLoop(t, l, func() { st, _ = d.State() })
		if st == ll.Cancelled && openFDCount(t) == fds {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connect future %v, %d fds open (%d before): want cancelled, none left", st, openFDCount(t), fds)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // nothing comes late
	transports := 0
	onLoop(t, l, func() {
		if len(c.kinds) != 0 {
			t.Errorf("the protocol got %v, want nothing", c.kinds)
		}
		l.Walk(func(_ uint64, kind int32) bool {
			if kind == ll.KindTransport {
				transports++
			}
			return true
		})
	})
	if transports != 0 {
		t.Errorf("the walk lists %d transports, want none", transports)
	}
	if n := openFDCount(t); n != fds {
		t.Errorf("%d fds open, want %d", n, fds)
	}

	// The loop goes on: a connect to a listener completes.
	var srv *ll.Server
	var d2 *ll.DialFuture
	c2 := &collector{}
	onLoop(t, l, func() {
		var err error
		if srv, err = l.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return &echoProto{} }); err != nil {
			t.Error(err)
			return
		}
		p, _ := srv.Port()
		d2, _ = l.DialTCP("127.0.0.1", p, c2)
	})
	tr, err := d2.Wait(context.Background())
	if err != nil || tr == nil {
		t.Fatalf("Wait on a connect that completes: %v, %v", tr, err)
	}
	onLoop(t, l, func() {
		if len(c2.kinds) == 0 || c2.kinds[0] != ll.ConnectionMade {
			t.Errorf("events %v: want ConnectionMade first", c2.kinds)
		}
		tr.Close()
		d2.Release()
		srv.Release()
	})
}
