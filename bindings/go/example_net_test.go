// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"

	libloop "github.com/libloop/libloop/bindings/go"
)

// echo is a server protocol: it writes back what it reads and, once the
// client has shut down its side, closes.
type echo struct{ libloop.BaseProtocol }

func (echo) DataReceived(t *libloop.Transport, data []byte) { t.Write(data) } // data: valid during the call only

// An echo server and a client on the loopback interface.
func ExampleLoop_ListenTCP() {
	loop, err := libloop.NewLoop()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Release()
	srv, err := loop.ListenTCP("127.0.0.1", 0, func() libloop.Protocol { return echo{} })
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Release()
	port, _ := srv.Port()

	var got []byte
	client := &libloop.ProtocolFuncs{
		Made: func(t *libloop.Transport) {
			t.Write([]byte("hello, "))
			t.Write([]byte("world"))
			t.WriteEOF() // the server sees EOF and closes
		},
		Data: func(t *libloop.Transport, data []byte) { got = append(got, data...) }, // copy: data is borrowed
		Lost: func(t *libloop.Transport, err error) {
			fmt.Printf("client got %q, lost: %v\n", got, err)
			loop.Stop()
		},
	}
	dial, err := loop.DialTCP("127.0.0.1", port, client)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dial.Release()
	if err := loop.RunForever(); err != nil {
		fmt.Println(err)
	}
	// Output: client got "hello, world", lost: <nil>
}
