// SPDX-License-Identifier: MIT

package streamconn

import (
	"errors"
	"net"
	"testing"

	"github.com/libloop/libloop/internal/conntest/fake"
)

// Accept takes queued connections in order; Close closes those not
// taken, stops the server once and refuses later ones.
func TestListenerQueueAndClose(t *testing.T) {
	l := fake.NewLoop(t)
	ln := &Listener{}
	ln.Init(l, "tcp")
	stopped := make(chan struct{}, 2)
	ln.Bind(&net.TCPAddr{Port: 80}, func() { stopped <- struct{}{} })
	a, b := &Conn{}, &Conn{}
	for _, c := range []*Conn{a, b} {
		c.Init(l, "tcp", Options{})
		c.Attach(&fakeTransport{}, nil, nil)
		if !ln.Queue(c) {
			t.Fatal("Queue refused a connection before Close")
		}
	}
	if got, err := ln.Accept(); got != a || err != nil {
		t.Fatalf("Accept = %v, %v; want the first connection", got, err)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a queued connection is still open after the listener's Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("an accepted connection was closed by the listener's Close: %v", err)
	}
	<-stopped
	if ln.Queue(&Conn{}) {
		t.Fatal("Queue took a connection after Close")
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
	if err := ln.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if ln.Addr().String() != ":80" {
		t.Fatalf("Addr = %v", ln.Addr())
	}
}
