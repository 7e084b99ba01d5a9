// SPDX-License-Identifier: MIT

// Package libloop is libloop's core: an asyncio-style event loop in pure Go
// (no cgo). It is what build/libloop.so runs behind the C ABI, and it is the
// package a Go program should import:
//
//	import "github.com/libloop/libloop/libloop"
//
// A Go program that imports the core has one Go runtime and calls the loop
// directly, with Go funcs as callbacks. The purego binding
// (github.com/libloop/libloop/bindings/go) loads libloop.so instead, which
// puts a second Go runtime in the process and makes every call cross a C
// boundary; it exists to test the shared library from Go and for programs
// that must share one loop with C code.
//
// The model is CPython asyncio's (asyncio's name in parentheses):
//
//   - Loop (the event loop): New, RunForever, RunOnce, Stop, Close, Time;
//     a loop runs on one goroutine at a time, locked to its OS thread while
//     it runs. Callbacks: CallSoon, CallLater, CallAt (call_soon,
//     call_later, call_at), each returning a Handle to cancel;
//     CallSoonThreadsafe from any goroutine. File descriptors: AddReader,
//     AddWriter.
//   - Future and Task (asyncio.Future, asyncio.Task): NewFuture, NewTask
//     with a step func, RunUntilComplete, Sleep, Gather, WaitFor; results
//     are uintptr values, as in the C ABI. Executor: RunInExecutor.
//   - Transports and protocols: ListenTCP, DialTCP, ListenUnix, DialUnix,
//     OpenUDP, OpenTransport (create_server, create_connection, ...). A
//     Protocol is a func receiving the transport's Events (ConnectionMade,
//     DataReceived, EOFReceived, ConnectionLost, ...); Transport.Write never
//     blocks. Processes: Spawn (subprocess_exec); signals: AddSignalHandler.
//   - Errors are Errno values (EINVAL, ECLOSED, ..., or a negative errno);
//     Code gives any error's C ABI code.
//
// The Example shows a loop with a callback, a timer, a future and a TCP echo
// over loopback. The methods named *Host, the Host interface (SetHost) and
// the Spawner hook serve the C ABI (capi/), whose callbacks are C function
// addresses (HostCall); a Go program does not need them.
package libloop
