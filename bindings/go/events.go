// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Event delivery. A transport's events reach Go through two fixed purego
// trampolines, routed by their void *arg like every other callback:
//
//   - the ll_protocol_fn trampoline (ProtocolFnPtr), one crossing per event;
//   - the ll_event_batch_fn trampoline (EventBatchPtr), one crossing per run
//     of consecutive events, whatever transports they concern.
//
// The idiomatic layer uses the batch sink: every transport it makes runs
// with a NULL protocol fn, and the loop's sink (installed once per Loop)
// routes each event by its transport id to the Go Transport and its
// Protocol. A connection made by DialTCP, DialUnix or a Server has no id
// the binding knows before its LL_CONNECTION_MADE, so that one event comes
// through the protocol trampoline (arg: the dial's or the server's key),
// which creates the Transport and moves it to the sink with
// ll_transport_set_protocol(NULL) (effective for the very next event, even
// in the same delivery). Transports of OpenTransport and OpenUDP have their
// id at once and use the sink from the start.
//
// Why: a C->Go crossing through purego costs far more than the Go work of
// routing an event, and the library hands over a whole iteration's events
// at once. BenchmarkEventDelivery (64 socketpairs with one byte each, one
// iteration delivering 64 DataReceived; the time includes the library's 64
// read(2) calls) measured on a 2-core AMD EPYC, go1.26, ~1.38 us/event
// with the batch sink against ~1.80 us/event with one crossing per event:
// about 0.4 us saved per event, a quarter of the whole cost. The price is
// one extra ll_transport_set_protocol call per dialled or accepted
// connection.

// EventKind says what happened to a transport (LL_CONNECTION_MADE ...).
type EventKind int

// The event kinds of include/libloop/transport.h.
const (
	ConnectionMade   EventKind = 1 // LL_CONNECTION_MADE: the transport is ready
	DataReceived     EventKind = 2 // LL_DATA_RECEIVED: Data holds received bytes
	EOFReceived      EventKind = 3 // LL_EOF_RECEIVED: the peer shut down its side
	ConnectionLost   EventKind = 4 // LL_CONNECTION_LOST: the last event, exactly once
	PauseWriting     EventKind = 5 // LL_PAUSE_WRITING: the write buffer rose above the high-water mark
	ResumeWriting    EventKind = 6 // LL_RESUME_WRITING: the write buffer drained to the low-water mark
	DatagramReceived EventKind = 7 // LL_DATAGRAM_RECEIVED: Data holds a datagram, Addr its sender
	ErrorReceived    EventKind = 8 // LL_ERROR_RECEIVED: a datagram send or ICMP error, in Code
	ProcessExited    EventKind = 9 // LL_PROCESS_EXITED: Code holds the return code
)

// The C ll_event's layout on LP64 (checked with offsetof on linux/amd64;
// every field is read back by the purego suite's transport tests):
// int kind, code, fd; ll_transport transport; const void *data; size_t len;
// const void *addr; uint32_t addrlen; int result; void *arg.
const (
	evKind      = 0
	evCode      = 4
	evFD        = 8
	evTransport = 16
	evData      = 24
	evLen       = 32
	evAddr      = 40
	evAddrLen   = 48
	evResult    = 52
	evArg       = 56
	// EventSize is sizeof(ll_event): the stride of a batch's array.
	EventSize = 64
)

// Event is a view of one C ll_event. It and everything read from it through
// Data and RawAddr are valid only during the callback that received it.
type Event struct{ p unsafe.Pointer }

// EventAt views the ll_event at p (C memory).
func EventAt(p unsafe.Pointer) Event { return Event{p} }

// Ptr returns the C address of the event.
func (e Event) Ptr() unsafe.Pointer { return e.p }

// Kind returns the event kind.
func (e Event) Kind() EventKind { return EventKind(*(*int32)(unsafe.Add(e.p, evKind))) }

// Code returns the event's code: 0 or a negative error code for
// ConnectionLost and ErrorReceived, the return code for ProcessExited.
func (e Event) Code() int { return int(*(*int32)(unsafe.Add(e.p, evCode))) }

// FD returns the child's fd (0, 1, 2) for process pipe events, else -1.
func (e Event) FD() int { return int(*(*int32)(unsafe.Add(e.p, evFD))) }

// TransportID returns the ll_transport id the event concerns.
func (e Event) TransportID() uint64 { return *(*uint64)(unsafe.Add(e.p, evTransport)) }

// Data views the received bytes (C memory) without copying: valid only
// during the callback; copy what you keep.
func (e Event) Data() []byte {
	p := *(*unsafe.Pointer)(unsafe.Add(e.p, evData))
	n := *(*uintptr)(unsafe.Add(e.p, evLen))
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// RawAddr views a datagram sender's struct sockaddr (C memory), valid only
// during the callback; nil for other events.
func (e Event) RawAddr() []byte {
	p := *(*unsafe.Pointer)(unsafe.Add(e.p, evAddr))
	n := *(*uint32)(unsafe.Add(e.p, evAddrLen))
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// Addr decodes a datagram sender's address (the zero Addr if none).
func (e Event) Addr() Addr { return ParseSockaddr(e.RawAddr()) }

// Arg returns the protocol arg of the event's transport (the key a server
// or connect was made with).
func (e Event) Arg() uintptr { return *(*uintptr)(unsafe.Add(e.p, evArg)) }

// Result returns the answer written with SetResult.
func (e Event) Result() int { return int(*(*int32)(unsafe.Add(e.p, evResult))) }

// isRead reports whether k carries what a read found (the kinds the
// library withholds from a transport paused, closed or aborted after the
// read).
func (k EventKind) isRead() bool {
	return k == DataReceived || k == DatagramReceived || k == EOFReceived
}

// withhold hands a read event back to the library undelivered (kind 0,
// ll_loop_set_event_batch's contract): a paused transport gets it after
// ResumeReading.
func (e Event) withhold() { *(*int32)(unsafe.Add(e.p, evKind)) = 0 }

// SetResult writes a batch sink's answer to LL_EOF_RECEIVED (1: keep the
// transport open for writing, 0: close it).
func (e Event) SetResult(r int) { *(*int32)(unsafe.Add(e.p, evResult)) = int32(r) }

// EventBatch is a view of the C array a batch sink receives; valid only
// during the call.
type EventBatch struct {
	p unsafe.Pointer
	n int
}

// Len returns the number of events.
func (b EventBatch) Len() int { return b.n }

// At returns event i (0 <= i < Len).
func (b EventBatch) At(i int) Event { return Event{unsafe.Add(b.p, i*EventSize)} }

var netTramps struct {
	once         sync.Once
	proto, batch uintptr
}

func netTrampolines() {
	netTramps.once.Do(func() {
		netTramps.proto = purego.NewCallback(protocolTrampoline)
		netTramps.batch = purego.NewCallback(batchTrampoline)
	})
}

// ProtocolFnPtr returns the C address of the binding's ll_protocol_fn
// trampoline; pass a key from RegisterProtocolFn as its arg.
func ProtocolFnPtr() uintptr { netTrampolines(); return netTramps.proto }

// EventBatchPtr returns the C address of the binding's ll_event_batch_fn
// trampoline; pass a key from RegisterEventBatch as its arg.
func EventBatchPtr() uintptr { netTrampolines(); return netTramps.batch }

// RegisterProtocolFn stores fn for the ProtocolFnPtr trampoline and returns
// the key to pass as arg; fn's result is the C return value (it matters for
// EOFReceived only). Free it with Unregister.
func RegisterProtocolFn(fn func(loop uint64, ev Event) int) uintptr {
	return addEntry(&cbEntry{kind: kindProtocol,
		proto: func(loop uint64, ev Event) int32 { return int32(fn(loop, ev)) }})
}

// RegisterEventBatch stores fn for the EventBatchPtr trampoline and returns
// the key to pass as arg. Free it with Unregister.
func RegisterEventBatch(fn func(loop uint64, evs EventBatch)) uintptr {
	return addEntry(&cbEntry{kind: kindBatch, batch: fn})
}

func protocolTrampoline(loop uint64, ev unsafe.Pointer, arg uintptr) int32 {
	e := takeEntry(arg, kindProtocol)
	if e == nil || ev == nil {
		return 0
	}
	var r int32
	guard(e.reportTo(loop), func() { r = e.proto(loop, Event{ev}) })
	return r
}

func batchTrampoline(loop uint64, evs unsafe.Pointer, n uintptr, arg uintptr) {
	e := takeEntry(arg, kindBatch)
	if e == nil || evs == nil {
		return
	}
	guard(e.reportTo(loop), func() { e.batch(loop, EventBatch{evs, int(n)}) })
}
