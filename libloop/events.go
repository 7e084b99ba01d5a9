// SPDX-License-Identifier: MIT

package libloop

// EventKind says what happened to a transport; values match the C ABI's
// LL_CONNECTION_MADE ... LL_PROCESS_EXITED.
type EventKind int32

// Transport events, in asyncio's protocol vocabulary.
const (
	ConnectionMade   EventKind = 1 // first event: the transport is ready
	DataReceived     EventKind = 2 // Data holds the bytes read
	EOFReceived      EventKind = 3 // the peer shut down its side; Result 1 keeps the transport open
	ConnectionLost   EventKind = 4 // last event, exactly once; Code 0 or the error
	PauseWriting     EventKind = 5 // the write buffer rose above the high-water mark
	ResumeWriting    EventKind = 6 // the write buffer fell to the low-water mark
	DatagramReceived EventKind = 7 // Data holds the datagram, Addr the sender's sockaddr
	ErrorReceived    EventKind = 8 // a datagram transport's send or ICMP error, in Code
	ProcessExited    EventKind = 9 // Code holds the return code
)

// Event is one thing that happened to a transport. Data and Addr point into
// the loop's shared read buffer and are valid only while the event is being
// delivered.
type Event struct {
	Kind EventKind
	// withheld: not delivered (withheld.go); its Result means nothing.
	// Beside Kind, in what would be padding: the event stays 96 bytes,
	// and each one is copied into the queue and cleared after delivery.
	withheld bool
	Code     int // ConnectionLost, ErrorReceived: 0 or a negative error code
	FD       int // process pipes: the child's fd; else -1
	T        *Transport
	P        *Process // ProcessExited: the process (T is nil)
	Data     []byte
	Addr     []byte // a raw struct sockaddr (datagrams)
	// Result is the protocol's answer to EOFReceived: non-zero keeps the
	// transport open for writing, zero closes it (asyncio's eof_received).
	Result int
}

// Protocol receives a Go transport's events and returns the answer that
// matters for EOFReceived (true: keep open).
type Protocol func(ev *Event) bool

// EventSink delivers the events of transports without a Go Protocol (a
// host's) in batches: one call, one boundary crossing, for many events.
// A Host that implements it is the loop's sink (SetHost).
type EventSink interface {
	// ReadBuffer returns the memory the loop reads into; Data and Addr of
	// delivered events point into it. It is called once per loop.
	ReadBuffer() []byte
	// Deliver calls the protocols of evs in order and sets each
	// EOFReceived's Result (no other kind's is read).
	// Every event handed over may be delivered when the call starts; a
	// read event whose transport is paused, closed or aborted by an
	// earlier event of the call (a ReadWatcher hears so) must
	// not be, and is marked with Withhold instead.
	Deliver(l *Loop, evs []Event)
}

// readBufferSize is the loop's shared read buffer: one per loop, so an idle
// transport holds none (uvloop's _recv_buffer). A read takes at most
// maxReadChunk of it; the events are delivered when less than that is left.
const (
	readBufferSize = 256 << 10
	maxReadChunk   = 64 << 10
	// sockaddrReserve leaves room after a datagram for its sender's
	// address (at most 112 bytes) and the padding that aligns it.
	sockaddrReserve = 128
)

// ioState is the loop's transport machinery: readiness reported by the
// selector, queued for one ready callback per iteration, and events queued
// for delivery in batches.
type ioState struct {
	sink           EventSink
	direct         DirectWriter              // the host's, or nil (writegate.go)
	reads          ReadWatcher               // the host's, or nil (withheld.go)
	dgrams         DatagramReader            // the host's, or nil (udp_hostread.go)
	held           map[*Transport][]heldRead // withheld reads of paused transports
	rbuf           []byte
	udp            *udpScratch // batched datagram calls' memory (udp_batch_*.go)
	rused          int
	ready          []readyIO
	readySpare     []readyIO
	runQueued      bool
	running        bool // runIO is reading: emit does not schedule a flush
	evq            []Event
	evqSpare       []Event
	flushQueued    bool
	runFn, flushFn func() // debug mode's handles (queueOwn)
	// TLS scratch, shared by the loop's TLS transports: ciphertext read
	// from a socket, and ciphertext encrypted for one (tls.go).
	tlsIn, tlsOut []byte

	// readStops counts the points where some transport's reads may have
	// become undeliverable (syncRead, emit, Withhold); stopsBase is its
	// value when delivery last took the event queue. While the two are
	// equal no queued read event needs its transport looked at.
	readStops, stopsBase uint64
	// gateFlush: the next deliverQueued is the flush ready callback's
	// own, not one made inside a callback; only it may open the read gate.
	gateFlush bool
	// marks holds the water marks of the transports that set their own
	// (Transport.ownMarks), until they are set back or the transport ends.
	marks map[*Transport]waterMarks
}

// ioOwner is an object that owns an fd registered with the selector: a
// transport, a listening socket, a connect in progress.
type ioOwner interface {
	ioReady(mask uint8)
}

type readyIO struct {
	owner ioOwner
	mask  uint8
}

// queueIO records that owner's fd is ready; the reads and writes happen in
// one ready callback, as asyncio runs _read_ready from the ready queue.
func (l *Loop) queueIO(o ioOwner, mask uint8) {
	io := &l.io
	io.ready = append(io.ready, readyIO{o, mask})
	if !io.runQueued {
		io.runQueued = true
		l.queueOwn(markIO)
	}
}

// queueOwn queues one of the loop's own callbacks (markIO: runIO, markFlush:
// flushEvents). Outside debug mode it is a mark in the ready queue, run by
// runSome: no handle to take from the pool and give back, and two frames
// fewer (runGo, the method value) under the read and the protocols' writes,
// frames a system call's return makes costly here (chain.go). Debug mode
// queues a handle, timed and reported as every callback is.
func (l *Loop) queueOwn(kind uintptr) {
	if !l.debug {
		l.ready.pushMark(kind)
		return
	}
	io := &l.io
	if io.runFn == nil {
		io.runFn, io.flushFn = l.runIO, l.flushEvents
	}
	h := l.newHandle()
	if kind == markIO {
		h.gofn = io.runFn
	} else {
		h.gofn = io.flushFn
	}
	l.ready.push(h)
}

// runIO serves every fd reported ready this iteration, then delivers the
// events in as few batches as the read buffer allows.
func (l *Loop) runIO() {
	l.serveIO()
	l.flushEvents()
}

// serveIO is runIO's first half: the reads and writes of the ready fds.
func (l *Loop) serveIO() {
	io := &l.io
	io.runQueued = false
	items := io.ready
	io.ready = io.readySpare[:0]
	io.running = true
	for i := range items {
		if l.closed.Load() {
			break
		}
		items[i].owner.ioReady(items[i].mask)
		items[i] = readyIO{}
	}
	io.running = false
	io.readySpare = items[:0]
}

// readChunk returns where the next read goes, delivering queued events
// first when the shared buffer is nearly full.
func (l *Loop) readChunk() []byte {
	io := &l.io
	if io.rbuf == nil {
		if io.sink != nil {
			io.rbuf = io.sink.ReadBuffer()
		} else {
			io.rbuf = make([]byte, readBufferSize)
		}
	}
	if len(io.rbuf)-io.rused < maxReadChunk+sockaddrReserve {
		l.deliverQueued()
	}
	end := min(io.rused+maxReadChunk, len(io.rbuf))
	return io.rbuf[io.rused:end]
}

// consume marks n bytes of the last readChunk as holding an event's data.
func (l *Loop) consume(n int) []byte {
	io := &l.io
	b := io.rbuf[io.rused : io.rused+n : io.rused+n]
	io.rused += n
	return b
}

// consumeAddr is consume for a datagram's sender address, placed at the
// next 8-byte boundary so a host may read it as a struct sockaddr_in or
// sockaddr_in6 in place (the read buffer starts aligned; a datagram's length
// is any). sockaddrReserve holds the padding and the largest address.
func (l *Loop) consumeAddr(n int) []byte {
	l.io.rused = (l.io.rused + 7) &^ 7
	return l.consume(n)
}

// emit queues an event. Outside runIO a ready callback delivers it, so a
// protocol hears of a close or a pause after the call that caused it
// returns, as asyncio's call_soon(protocol.connection_lost).
func (l *Loop) emit(ev Event) {
	io := &l.io
	if ev.T != nil && !ev.T.ReadsDelivered() && ev.isRead() {
		// Rare (a read after a replay that was withheld again, or after a
		// delivery made for room in the buffer paused the transport): the
		// stop came before the event, so counting it here is what makes
		// delivery look (readStops).
		io.readStops++
	}
	io.evq = append(io.evq, ev)
	if io.running || io.flushQueued || l.closed.Load() {
		return
	}
	io.flushQueued = true
	l.queueOwn(markFlush)
}

// flushEvents delivers the queued events; events the protocols cause meanwhile
// wait for a later ready callback.
func (l *Loop) flushEvents() {
	l.io.flushQueued = false
	l.io.gateFlush = true
	l.deliverQueued()
	if len(l.io.evq) > 0 && !l.io.flushQueued && !l.closed.Load() {
		l.io.flushQueued = true
		l.queueOwn(markFlush)
	}
}

// deliverQueued hands the queued events to their protocols (runs of host
// events to the sink in one call), applies the answers, and frees the read
// buffer for reuse. A read event is delivered only if its transport may
// hear it at that moment (withheld.go): each is checked just before its
// Go protocol runs or its run goes to the sink, and the sink checks the
// rest of a run as it goes.
//
// The check is skipped while no transport stopped since the first of these
// events could have been queued: stopsBase is readStops as it was when the
// previous delivery took the queue, before any of evs was queued, so an
// unchanged count means that every transport of evs could take its reads
// when they were queued (emit counts those that could not) and still can.
// It is looked at again after every protocol call and sink run.
func (l *Loop) deliverQueued() {
	io := &l.io
	top := io.gateFlush
	io.gateFlush = false
	evs := io.evq
	if len(evs) == 0 {
		io.rused = 0
		return
	}
	io.evq = io.evqSpare[:0]
	base := io.stopsBase
	io.stopsBase = io.readStops
	for i := 0; i < len(evs); {
		check := io.readStops != base
		if check && evs[i].isRead() && !evs[i].T.ReadsDelivered() {
			l.withhold(&evs[i])
			i++
			continue
		}
		if proto := evs[i].protocol(); proto != nil {
			evs[i].Result = boolToInt(proto(&evs[i]))
			i++
			continue
		}
		j := i + 1
		for j < len(evs) && evs[j].protocol() == nil && !(check && evs[j].isRead() && !evs[j].T.ReadsDelivered()) {
			j++
		}
		if io.sink != nil {
			l.deliverSink(evs, i, j, base, top) // the read gate may follow the last run (readgate.go)
			// Withhold counts: unchanged, nothing was withheld.
			if io.readStops != base {
				for k := i; k < j; k++ {
					if evs[k].withheld {
						l.withhold(&evs[k])
					}
				}
			}
		}
		i = j
	}
	for i := range evs {
		if evs[i].withheld {
			evs[i] = Event{}
			continue
		}
		if evs[i].Kind == EOFReceived {
			evs[i].T.eofAnswered(evs[i].Result != 0)
		}
		if evs[i].Kind == ResumeWriting && evs[i].T.closeAfterResume {
			evs[i].T.resumedClosing()
		}
		evs[i] = Event{}
	}
	io.evqSpare = evs[:0]
	io.rused = 0
}

// protocol is the Go protocol the event goes to (nil: the sink's).
func (ev *Event) protocol() Protocol {
	if ev.P != nil {
		return ev.P.proto
	}
	return ev.T.proto
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
