// SPDX-License-Identifier: MIT

// Package streamconn holds the state machines behind the Go-facing
// net.Conn and net.Listener of both the core (libloop/) and the purego
// binding (bindings/go/): the read buffer and its flow control, Write's
// chunking, deadlines, Close and CloseWrite, and the Listener's accept
// queue. Each side gives the loop-side operations (posting to the loop
// thread, the transport's calls, addresses) through the small Loop and
// Transport interfaces, so this package imports neither the core nor cgo.
//
// Threads: the methods a net.Conn or net.Listener has are for goroutines
// other than the loop's; the ones documented "loop thread" are called
// from the transport's events on the loop thread.
package streamconn
