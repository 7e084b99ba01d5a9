// SPDX-License-Identifier: MIT

package libloop_test

import (
	"fmt"

	"github.com/libloop/libloop/libloop"
)

// A Go program uses the core directly: one Go runtime, no cgo, no purego.
// A loop runs a callback and a timer (asyncio's call_soon and call_later),
// a future resolved by a timer (run_until_complete), then a TCP echo over
// loopback in asyncio's transport/protocol model.
func Example() {
	loop, err := libloop.New()
	if err != nil {
		panic(err)
	}
	defer loop.Close()

	// Callbacks run in the order scheduled, timers at their deadline.
	loop.CallLater(0.010, func() { fmt.Println("call_later: 10 ms later") })
	loop.CallSoon(func() { fmt.Println("call_soon: first iteration") })

	// A future: a timer sets its result; RunUntilComplete runs the loop
	// until it is done. Results are uintptr values (the C ABI's).
	fut, _ := loop.NewFuture()
	loop.CallLater(0.020, func() { fut.SetResult(42, nil) })
	if err := loop.RunUntilComplete(fut); err != nil {
		panic(err)
	}
	v, _ := fut.Result()
	fmt.Println("future result:", v)

	// A TCP echo server on an ephemeral loopback port; each protocol is a
	// func of the transport's events (connection_made, data_received, ...).
	server, err := loop.ListenTCP("127.0.0.1", 0, 0, 0, func(ev *libloop.Event) bool {
		if ev.Kind == libloop.DataReceived {
			ev.T.Write(ev.Data) // Write copies what the kernel does not take at once
		}
		return false // on EOF: close our side too
	})
	if err != nil {
		panic(err)
	}
	defer server.Close()
	port, _ := server.Port()

	closed, _ := loop.NewFuture()
	var echoed []byte
	client := func(ev *libloop.Event) bool {
		switch ev.Kind {
		case libloop.ConnectionMade:
			ev.T.Write([]byte("hello, loop"))
		case libloop.DataReceived:
			echoed = append(echoed, ev.Data...) // Data is only valid during the call
			if len(echoed) == len("hello, loop") {
				ev.T.Close()
			}
		case libloop.ConnectionLost:
			closed.SetResult(uintptr(ev.Code), nil)
		}
		return false
	}
	err = loop.DialTCP("127.0.0.1", port, client, func(t *libloop.Transport, err error) {
		if err != nil {
			closed.SetException(libloop.Code(err), "connect failed", 0, nil)
		}
	})
	if err != nil {
		panic(err)
	}
	if err := loop.RunUntilComplete(closed); err != nil {
		panic(err)
	}
	code, err := closed.Result()
	fmt.Printf("echoed %q, connection lost with code %d (err %v)\n", echoed, code, err)
	// Output:
	// call_soon: first iteration
	// call_later: 10 ms later
	// future result: 42
	// echoed "hello, loop", connection lost with code 0 (err <nil>)
}
