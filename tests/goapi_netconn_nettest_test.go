// SPDX-License-Identifier: MIT

package tests

import (
	"net"
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
	"github.com/libloop/libloop/internal/conntest"
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
	return conntest.Pair(conntest.Loop{
		Run:     func() { l.RunForever() },
		Stop:    func() { l.CallSoonThreadsafe(func() { l.Stop() }) },
		Release: func() { l.Release() },
		Listen:  conntest.Listener(l.ListenConn),
		Dial:    conntest.Dialer(l.DialConn),
	}, network)
}

func TestGoAPINetConnNettest(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) { return bindingConnPair(network) })
		})
	}
}
