// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"
	"net"
	"strings"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

// A net.PacketConn over libloop.so's UDP transport: an echo server that
// answers a plain net.UDPConn client. The loop runs in its own goroutine;
// the PacketConn is used from others.
func ExampleLoop_ListenPacket() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	ran := make(chan struct{})
	go func() { loop.RunForever(); close(ran) }()
	defer func() { loop.CallSoonThreadsafe(func() { loop.Stop() }); <-ran }()

	pc, err := loop.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pc.Close()
	go func() { // the server: each datagram back, upper-cased
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return // net.ErrClosed once pc is closed
			}
			pc.WriteTo([]byte(strings.ToUpper(string(buf[:n]))), from)
		}
	}()

	client, err := net.DialUDP("udp", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	client.Write([]byte("hello over the loop"))
	buf := make([]byte, 1500)
	n, err := client.Read(buf)
	fmt.Printf("%q %v\n", buf[:n], err)
	// Output:
	// "HELLO OVER THE LOOP" <nil>
}
