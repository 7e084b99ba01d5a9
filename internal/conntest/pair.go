// SPDX-License-Identifier: MIT

// Package conntest makes connected net.Conn pairs for the tests of a
// loop's Conn and Listener (the core's and the purego binding's), in the
// shape golang.org/x/net/nettest.TestConn asks for: both ends on one loop
// that runs on a goroutine of its own, one end dialled and one accepted.
package conntest

import (
	"context"
	"net"
	"os"
	"path/filepath"
)

// Loop is what a pair needs of a loop, as functions so that the core's
// and the binding's loops (whose calls return their own concrete types)
// both fit.
type Loop struct {
	Run     func()                                                               // runs the loop until it stops
	Stop    func()                                                               // asks the running loop to stop, from another goroutine
	Release func()                                                               // frees the loop once it has stopped
	Listen  func(network, address string) (net.Listener, error)                  // the loop's ListenConn
	Dial    func(ctx context.Context, network, address string) (net.Conn, error) // the loop's DialConn
}

// Pair starts l on a goroutine and connects a dialled Conn (c1) to an
// accepted one (c2) over network ("tcp" on 127.0.0.1, or "unix" in a
// temporary directory). stop closes both ends, stops the loop, waits for
// it and releases it. On an error everything made so far is undone.
func Pair(l Loop, network string) (c1, c2 net.Conn, stop func(), err error) {
	ended := make(chan struct{})
	go func() { l.Run(); close(ended) }()
	stop = func() {
		if c1 != nil {
			c1.Close()
		}
		if c2 != nil {
			c2.Close()
		}
		l.Stop()
		<-ended
		l.Release()
	}
	address := "127.0.0.1:0"
	if network == "unix" {
		dir, derr := os.MkdirTemp("", "llconn")
		if derr != nil {
			stop()
			return nil, nil, nil, derr
		}
		defer os.RemoveAll(dir) // the bound socket stays usable once unlinked
		address = filepath.Join(dir, "s")
	}
	ln, err := l.Listen(network, address)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	defer ln.Close()
	dialed := make(chan error, 1)
	go func() {
		var derr error
		c1, derr = l.Dial(context.Background(), network, ln.Addr().String())
		dialed <- derr
	}()
	c2, err = ln.Accept()
	if derr := <-dialed; err == nil {
		err = derr
	}
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return c1, c2, stop, nil
}

// Listener adapts a loop's ListenConn, which returns the loop's own
// listener type, to Loop.Listen (an error gives a nil interface, not a
// typed nil).
func Listener[L net.Listener](listen func(network, address string) (L, error)) func(network, address string) (net.Listener, error) {
	return func(network, address string) (net.Listener, error) {
		ln, err := listen(network, address)
		if err != nil {
			return nil, err
		}
		return ln, nil
	}
}

// Dialer adapts a loop's DialConn to Loop.Dial, as Listener does ListenConn.
func Dialer[C net.Conn](dial func(ctx context.Context, network, address string) (C, error)) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}
