// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"

	"github.com/libloop/libloop/libloop"
)

// Datagram endpoints (create_datagram_endpoint): a bound receiver and a
// sender connected to it.
func ExampleLoop_OpenUDP() {
	loop, _ := libloop.New()
	defer loop.Close()
	receiver, err := loop.OpenUDP("127.0.0.1", 0, "", 0, 0, func(ev *libloop.Event) bool {
		if ev.Kind == libloop.DatagramReceived {
			fmt.Printf("received %q from port %v\n", ev.Data, libloop.SockaddrPort(ev.Addr) != 0)
			ev.T.Close()
			ev.T.Loop().Stop()
		}
		return false
	})
	if err != nil {
		panic(err)
	}
	name, _ := receiver.SockName()
	sender, err := loop.OpenUDP("", 0, "127.0.0.1", libloop.SockaddrPort(name), 0, func(*libloop.Event) bool { return false })
	if err != nil {
		panic(err)
	}
	defer sender.Close()
	sender.SendTo([]byte("ping"), nil) // nil: the connected address
	loop.RunForever()
	// Output:
	// received "ping" from port true
}
