// SPDX-License-Identifier: MIT

package libloop_test

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/libloop/libloop/libloop"
)

// With the loop running on a goroutine of its own, other goroutines use
// its TCP transports as net.Conn and net.Listener: blocking calls, flow
// control, deadlines.
func ExampleLoop_DialConn() {
	loop, _ := libloop.New()
	stopped := make(chan struct{})
	go func() { loop.RunForever(); close(stopped) }()
	defer func() {
		loop.CallSoonThreadsafe(func() { loop.Stop() })
		<-stopped
		loop.Close()
	}()

	ln, err := loop.ListenConn("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() { // an echo server, one goroutine per connection
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()

	conn, err := loop.DialConn(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprintln(conn, "hello over the loop")
	line, err := bufio.NewReader(conn).ReadString('\n')
	fmt.Printf("%q %v\n", line, err)
	// Output:
	// "hello over the loop\n" <nil>
}
