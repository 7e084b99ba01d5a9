// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"fmt"
	"io"

	libloop "github.com/libloop/libloop/bindings/go"
)

// A net.Conn over libloop.so's transports: an echo server written with
// io.Copy and a client that writes, half-closes and reads to io.EOF. The
// loop runs in its own goroutine; the Conns are used from others.
func ExampleLoop_DialConn() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	ran := make(chan struct{})
	go func() { loop.RunForever(); close(ran) }()
	defer func() { loop.CallSoonThreadsafe(func() { loop.Stop() }); <-ran }()

	ln, err := loop.ListenConn("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(c, c) // echo until the client's EOF
		c.Close()
	}()

	c, err := loop.DialConn(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	io.WriteString(c, "hello, net.Conn")
	c.CloseWrite()
	got, err := io.ReadAll(c)
	fmt.Printf("%q %v\n", got, err)
	// Output: "hello, net.Conn" <nil>
}
