// SPDX-License-Identifier: MIT

package tests

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/net/nettest"
)

// The binding's Conn against golang.org/x/net/nettest.TestConn, the net
// package's own conformance checks for a net.Conn (basic I/O, ping-pong,
// racing reads and writes, deadlines, Close, concurrent method calls),
// both ends Conns of one loop: a DialConn'd one and ListenConn's Accept.

// bindingConnPair makes a connected pair on a loop of its own, run on a
// goroutine; stop closes both and the loop.
func bindingConnPair(network string) (c1, c2 net.Conn, stop func(), err error) {
	l, err := ll.NewLoop()
	if err != nil {
		return nil, nil, nil, err
	}
	ended := make(chan struct{})
	go func() { l.RunForever(); close(ended) }()
	stop = func() {
		if c1 != nil {
			c1.Close()
		}
		if c2 != nil {
			c2.Close()
		}
		l.CallSoonThreadsafe(func() { l.Stop() })
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
	ln, err := l.ListenConn(network, address)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	defer ln.Close()
	dialed := make(chan error, 1)
	go func() {
		var derr error
		c1, derr = l.DialConn(context.Background(), network, ln.Addr().String())
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

func TestGoAPINetConnNettest(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) { return bindingConnPair(network) })
		})
	}
}
