// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/libloop/libloop/libloop"
)

// With the loop running on a goroutine of its own, other goroutines use
// its UDP transports as net.PacketConn: here an echo server that answers
// a plain net.UDPConn client.
func ExampleLoop_ListenPacket() {
	loop, _ := libloop.New()
	stopped := make(chan struct{})
	go func() { loop.RunForever(); close(stopped) }()
	defer func() {
		loop.CallSoonThreadsafe(func() { loop.Stop() })
		<-stopped
		loop.Close()
	}()

	pc, err := loop.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		panic(err)
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
		panic(err)
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
