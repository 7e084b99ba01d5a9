// SPDX-License-Identifier: MIT

// Package packetconn holds the state machine behind the Go-facing
// net.PacketConn of both the core (libloop/) and the purego binding
// (bindings/go/), as internal/streamconn does for net.Conn: the receive
// queue and its flow control, WriteTo's posting and its bound, the send
// errors kept for the next WriteTo, deadlines and Close; and the
// conversions between a raw struct sockaddr and a *net.UDPAddr. Each side
// gives the loop-side operations through streamconn.Loop and the small
// Transport interface, so this package imports neither the core nor cgo.
//
// Threads: the net.PacketConn methods are for goroutines other than the
// loop's; the ones documented "loop thread" are called from the
// transport's events on the loop thread.
package packetconn
