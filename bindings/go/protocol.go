// SPDX-License-Identifier: MIT

package libloop

import (
	"sync"
	"unsafe"
)

// Protocol receives a transport's events (asyncio's Protocol and
// DatagramProtocol in one). Methods run on the loop's thread, in the order
// the events happened on that transport; each may call any method of any
// transport. Embed BaseProtocol to implement only some of them.
//
// A data slice (DataReceived, DatagramReceived) views the library's read
// buffer: it is valid only until the method returns. Copy what you keep.
type Protocol interface {
	// ConnectionMade is the first event: the transport is ready.
	ConnectionMade(t *Transport)
	// DataReceived hands over bytes read from a stream.
	DataReceived(t *Transport, data []byte)
	// EOFReceived tells that the peer shut down its side; return true to
	// keep the transport open for writing, false to close it.
	EOFReceived(t *Transport) bool
	// ConnectionLost is the last event, exactly once: err is nil when the
	// transport closed cleanly (Close, Abort, a clean end), else the Error
	// (errors.Is(err, syscall.ECONNRESET) ...).
	ConnectionLost(t *Transport, err error)
	// PauseWriting tells that the write buffer rose above the high-water mark.
	PauseWriting(t *Transport)
	// ResumeWriting tells that the write buffer drained to the low-water mark.
	ResumeWriting(t *Transport)
	// DatagramReceived hands over one datagram and its sender (UDP).
	DatagramReceived(t *Transport, data []byte, from Addr)
	// ErrorReceived reports a failed datagram send or an ICMP error; the
	// transport stays open.
	ErrorReceived(t *Transport, err error)
}

// BaseProtocol implements every Protocol method as a no-op (EOFReceived
// returns false: close on EOF, as asyncio). Embed it in a protocol type.
type BaseProtocol struct{}

// ConnectionMade does nothing.
func (BaseProtocol) ConnectionMade(*Transport) {}

// DataReceived does nothing.
func (BaseProtocol) DataReceived(*Transport, []byte) {}

// EOFReceived returns false: the transport closes.
func (BaseProtocol) EOFReceived(*Transport) bool { return false }

// ConnectionLost does nothing.
func (BaseProtocol) ConnectionLost(*Transport, error) {}

// PauseWriting does nothing.
func (BaseProtocol) PauseWriting(*Transport) {}

// ResumeWriting does nothing.
func (BaseProtocol) ResumeWriting(*Transport) {}

// DatagramReceived does nothing.
func (BaseProtocol) DatagramReceived(*Transport, []byte, Addr) {}

// ErrorReceived does nothing.
func (BaseProtocol) ErrorReceived(*Transport, error) {}

// ProtocolFuncs is a Protocol made of funcs; a nil func does what
// BaseProtocol does. Slices passed to Data and Datagram are valid only
// during the call.
type ProtocolFuncs struct {
	Made     func(t *Transport)
	Data     func(t *Transport, data []byte)
	EOF      func(t *Transport) bool
	Lost     func(t *Transport, err error)
	Pause    func(t *Transport)
	Resume   func(t *Transport)
	Datagram func(t *Transport, data []byte, from Addr)
	Error    func(t *Transport, err error)
}

// ConnectionMade calls Made.
func (p *ProtocolFuncs) ConnectionMade(t *Transport) {
	if p.Made != nil {
		p.Made(t)
	}
}

// DataReceived calls Data.
func (p *ProtocolFuncs) DataReceived(t *Transport, data []byte) {
	if p.Data != nil {
		p.Data(t, data)
	}
}

// EOFReceived calls EOF; false without it.
func (p *ProtocolFuncs) EOFReceived(t *Transport) bool { return p.EOF != nil && p.EOF(t) }

// ConnectionLost calls Lost.
func (p *ProtocolFuncs) ConnectionLost(t *Transport, err error) {
	if p.Lost != nil {
		p.Lost(t, err)
	}
}

// PauseWriting calls Pause.
func (p *ProtocolFuncs) PauseWriting(t *Transport) {
	if p.Pause != nil {
		p.Pause(t)
	}
}

// ResumeWriting calls Resume.
func (p *ProtocolFuncs) ResumeWriting(t *Transport) {
	if p.Resume != nil {
		p.Resume(t)
	}
}

// DatagramReceived calls Datagram.
func (p *ProtocolFuncs) DatagramReceived(t *Transport, data []byte, from Addr) {
	if p.Datagram != nil {
		p.Datagram(t, data, from)
	}
}

// ErrorReceived calls Error.
func (p *ProtocolFuncs) ErrorReceived(t *Transport, err error) {
	if p.Error != nil {
		p.Error(t, err)
	}
}

// perEventDelivery makes the binding keep every transport on the protocol
// trampoline (one crossing per event) instead of the batch sink; only
// BenchmarkEventDelivery sets it, to compare the two.
var perEventDelivery = false

// netState is a Loop's network part: its live transports by id, the batch
// sink's key, the route key of the per-event mode, and a C scratch buffer
// for writes (Go memory never crosses into the library).
type netState struct {
	transports map[uint64]*Transport
	batchKey   uintptr
	routeKey   uintptr

	scratchMu sync.Mutex
	scratch   unsafe.Pointer
	scratchN  uintptr
}

// netInit returns the loop's netState, installing the batch sink first.
func (l *Loop) netInit() *netState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.net == nil {
		l.net = &netState{transports: make(map[uint64]*Transport)}
	}
	n := l.net
	if n.batchKey == 0 {
		n.batchKey = addEntry(&cbEntry{kind: kindBatch, owner: l.id, batch: l.deliverBatch})
		if l.raw().SetEventBatch(l.id, EventBatchPtr(), n.batchKey) != 0 {
			removeEntry(n.batchKey)
			n.batchKey = 0
		}
		n.routeKey = addEntry(&cbEntry{kind: kindProtocol, owner: l.id,
			proto: func(_ uint64, ev Event) int32 { return l.dispatch(ev, nil) }})
	}
	return n
}

// protoArgs returns the (fn, arg) pair for a transport whose id the call
// returns: NULL (the batch sink), or the route entry in per-event mode.
func (l *Loop) protoArgs(n *netState) (uintptr, uintptr) {
	if perEventDelivery {
		return ProtocolFnPtr(), n.routeKey
	}
	return 0, 0
}

func (l *Loop) lookupTransport(id uint64) *Transport {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.net == nil {
		return nil
	}
	return l.net.transports[id]
}

// addTransport makes and records the Transport of id.
func (l *Loop) addTransport(id uint64, p Protocol) *Transport {
	t := &Transport{loop: l, id: id, proto: p}
	l.mu.Lock()
	if l.net != nil {
		l.net.transports[id] = t
	}
	l.mu.Unlock()
	return t
}

// deliverBatch is the loop's batch sink.
func (l *Loop) deliverBatch(_ uint64, evs EventBatch) {
	l.delivery++
	for i := 0; i < evs.Len(); i++ {
		ev := evs.At(i)
		if r := l.dispatch(ev, nil); ev.Kind() == EOFReceived {
			ev.SetResult(int(r))
		}
	}
}

// dispatch calls the protocol method for ev. A ConnectionMade of an id the
// binding does not know yet is given to made (a dial or a server), which
// creates the Transport. A panic in a method is reported to the loop's
// exception handler and the next event is still delivered.
func (l *Loop) dispatch(ev Event, made func(id uint64) *Transport) int32 {
	id := ev.TransportID()
	t := l.lookupTransport(id)
	if t == nil {
		if made == nil || ev.Kind() != ConnectionMade {
			return 0 // not ours (or already lost): an unanswered EOF closes
		}
		t = made(id)
	}
	kind := ev.Kind()
	if kind.isRead() {
		// Stopped by an earlier event of this delivery, or one of its reads
		// was withheld earlier in it (none may overtake that one, even if
		// ResumeReading came in between).
		if t.stopped || (t.heldIn != 0 && t.heldIn == l.delivery) {
			t.heldIn = l.delivery
			ev.withhold()
			return 0
		}
	}
	var r int32
	if p := t.proto; p != nil {
		guard(l.id, func() {
			switch kind {
			case ConnectionMade:
				p.ConnectionMade(t)
			case DataReceived:
				p.DataReceived(t, ev.Data())
			case EOFReceived:
				if p.EOFReceived(t) {
					r = 1
				}
			case ConnectionLost:
				p.ConnectionLost(t, codeErr(ev.Code()))
			case PauseWriting:
				p.PauseWriting(t)
			case ResumeWriting:
				p.ResumeWriting(t)
			case DatagramReceived:
				if r, ok := p.(rawDatagramReceiver); ok {
					r.rawDatagramReceived(t, ev.Data(), ev.RawAddr())
				} else {
					p.DatagramReceived(t, ev.Data(), ev.Addr())
				}
			case ErrorReceived:
				p.ErrorReceived(t, codeErr(ev.Code()))
			}
		})
	}
	if kind == ConnectionLost {
		l.mu.Lock()
		if l.net != nil && l.net.transports[id] == t {
			delete(l.net.transports, id)
		}
		l.mu.Unlock()
		t.lost = true
	}
	return r
}

// codeErr is nil for 0, else the Error.
func codeErr(code int) error {
	if code == 0 {
		return nil
	}
	return Error(code)
}

// dropNet forgets the transports of a closed loop (they will get no more
// events) and frees the scratch buffer; the callback entries went with the
// loop's other entries.
func (l *Loop) dropNet() {
	l.mu.Lock()
	n := l.net
	l.net = nil
	l.mu.Unlock()
	if n == nil {
		return
	}
	for _, t := range n.transports {
		t.lost = true
	}
	n.scratchMu.Lock()
	if n.scratch != nil {
		libc.free(n.scratch)
		n.scratch = nil
	}
	n.scratchMu.Unlock()
}
