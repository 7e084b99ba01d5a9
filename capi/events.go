// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// Transport and server ids; the values continue ids.go's kinds.
const (
	kindTransport kind = 16
	kindServer    kind = 17
)

// eventBatch is how many events one crossing delivers at most.
const eventBatch = 256

// readBufferSize is the loop's shared read buffer, in C memory so event
// data reaches C without a copy.
const readBufferSize = 256 << 10

// netState is capi's per-loop part of network I/O: the C arrays events are
// delivered through, the batch sink, and the server and process ids (swept
// when the loop is released; transports are found through the id table).
type netState struct {
	events   *C.ll_event
	protos   **C.ll__proto
	rbuf     unsafe.Pointer
	batchFn  uintptr
	batchArg uintptr
	live     map[uint64]*C.ll__proto // server id -> nil; process id -> its protocol slot
	sent     [eventBatch]bool        // which events of a batch went to C
	slots    protoSlab               // every protocol slot of this loop
	udp      *C.ll__udprecv          // the C datagram path's state (udprecv.go), made at first use
	udpOff   bool                    // it could not be made: the core reads
}

// A transport's host state lives in the core Transport itself: Tag is its
// id and Data its protocol slot (a *C.ll__proto, C memory, which C reads
// at call time), so a connection costs capi no record of its own.

// protoOf returns t's protocol slot, or nil if t has no id.
func protoOf(t *libloop.Transport) *C.ll__proto {
	p, _ := t.Data.(*C.ll__proto)
	return p
}

func (s *loopState) netInit() *netState {
	if s.net == nil {
		s.net = &netState{
			events: (*C.ll_event)(C.calloc(eventBatch, C.sizeof_ll_event)),
			protos: (**C.ll__proto)(C.calloc(eventBatch, C.size_t(unsafe.Sizeof(uintptr(0))))),
			live:   make(map[uint64]*C.ll__proto),
		}
	}
	return s.net
}

// ReadBuffer implements libloop.EventSink.
func (s *loopState) ReadBuffer() []byte {
	n := s.netInit()
	if n.rbuf == nil {
		n.rbuf = C.malloc(readBufferSize)
	}
	return unsafe.Slice((*byte)(n.rbuf), readBufferSize)
}

// Deliver implements libloop.EventSink: copy the events into the C array,
// one crossing per eventBatch, then read back (readBack) the EOF answers,
// the events C withheld (kind 0: ll__deliver_events or a sink found the
// transport paused or closed by an earlier event) and retire the ids of
// transports whose LL_CONNECTION_LOST has been delivered; only EOF's Result
// means anything to the core, so no other kind's is read back. The
// protocol array is not cleared after a call: C reads only its first k
// entries, each written for that call (clearing it through Go's typed
// pointers cost a memclrHasPointers, ~50 instructions, per call).
func (s *loopState) Deliver(l *libloop.Loop, evs []libloop.Event) { s.deliver(evs, nil) }

// deliver is Deliver, and with g DeliverGated (readgate.go): the gate is
// opened for the last crossing only.
func (s *loopState) deliver(evs []libloop.Event, g *libloop.ReadGate) {
	n := s.netInit()
	// Array pointers, not unsafe.Slice: no checks to pay per call.
	cevs := (*[eventBatch]C.ll_event)(unsafe.Pointer(n.events))
	protos := (*[eventBatch]*C.ll__proto)(unsafe.Pointer(n.protos))
	all, withheld := evs, false
	for len(evs) > 0 {
		take := min(len(evs), eventBatch)
		k := 0
		var kinds uint32 // a bit per kind sent: is there anything to read back?
		for i := 0; i < take; i++ {
			id, slot := s.eventTarget(&evs[i])
			n.sent[i] = slot != nil
			if slot == nil {
				continue // no id could be given: the transport was refused
			}
			fillEvent(&cevs[k], &evs[i], id)
			protos[k] = slot
			kinds |= 1 << (uint32(evs[i].Kind) & 31)
			k++
		}
		gated := g != nil && take == len(evs) && s.openGate(g, n)
		s.runHost(func() {
			C.ll__deliver_events(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(n.events))),
				C.uintptr_t(uintptr(unsafe.Pointer(n.protos))), C.int(k),
				C.uintptr_t(uintptr(unsafe.Pointer(s.pending))), C.uintptr_t(n.batchFn), C.uintptr_t(n.batchArg))
		})
		held := s.pending.withheld
		if gated {
			s.closeGate(g)
		}
		// Only an EOF's answer, an end (an id to retire) or a withheld
		// event needs reading back; a run of data events has nothing to
		// read (the core ignores other kinds' Result), and skipping the
		// loop is what pays for the withheld check in the common case.
		if kinds&readBackKinds != 0 || held != 0 {
			s.readBack(evs[:take], n, held != 0, &withheld)
		}
		evs = evs[take:]
	}
	if withheld {
		// The withheld events go back to the core, which keeps a paused
		// transport's in order (its held state, from now on): C's mark
		// that one was withheld in this call has done its work.
		for i := range all {
			if t := all[i].T; t != nil {
				if slot := protoOf(t); slot != nil && slot.held&C.LL__HELD_BATCH != 0 {
					slot.held &^= C.LL__HELD_BATCH
				}
			}
		}
	}
}

// readBackKinds are the kinds whose delivery Deliver must look at
// afterwards: EOFReceived's answer, the ids of ended transports and
// processes.
const readBackKinds = 1<<libloop.EOFReceived | 1<<libloop.ConnectionLost | 1<<libloop.ProcessExited

// readBack applies what C did with a batch: the EOF answers, the events C
// or the sink withheld (kind 0; held: there are some) and the ids of what
// ended. withheld is set if any event came back with kind 0.
func (s *loopState) readBack(evs []libloop.Event, n *netState, held bool, withheld *bool) {
	cevs := (*[eventBatch]C.ll_event)(unsafe.Pointer(n.events))
	k := 0
	for i := range evs {
		if !n.sent[i] {
			continue
		}
		if held && cevs[k].kind == 0 {
			*withheld = true
			if isRead(evs[i].Kind) { // (the contract covers read events only)
				evs[i].Withhold()
				k++
				continue
			}
		}
		evs[i].Result = int(cevs[k].result)
		switch evs[i].Kind {
		case libloop.ConnectionLost:
			s.retireTransport(evs[i].T)
		case libloop.ProcessExited:
			s.exitDelivered(evs[i].P)
		}
		k++
	}
}

// isRead reports the kinds C may withhold (cloop.h, ll__is_read_event).
func isRead(k libloop.EventKind) bool {
	return k == libloop.DataReceived || k == libloop.DatagramReceived || k == libloop.EOFReceived
}

func fillEvent(c *C.ll_event, ev *libloop.Event, id uint64) {
	c.kind = C.int(ev.Kind)
	c.code = C.int(ev.Code)
	c.fd = C.int(ev.FD)
	c.transport = C.uint64_t(id)
	c.data, c.len, c.addr, c.addrlen, c.result = nil, 0, nil, 0, 0
	if len(ev.Data) > 0 {
		c.data = unsafe.Pointer(unsafe.SliceData(ev.Data)) // C memory: the shared read buffer
		c.len = C.size_t(len(ev.Data))
	}
	if len(ev.Addr) > 0 {
		c.addr = unsafe.Pointer(unsafe.SliceData(ev.Addr))
		c.addrlen = C.uint32_t(len(ev.Addr))
	}
}

// eventTarget returns the id and protocol slot an event is delivered with
// (slot nil: not delivered).
func (s *loopState) eventTarget(ev *libloop.Event) (uint64, *C.ll__proto) {
	if ev.P != nil {
		if pr, ok := ev.P.Data.(*procRef); ok {
			return pr.id, pr.proto
		}
		return 0, nil
	}
	t := ev.T
	if slot := protoOf(t); slot != nil {
		return t.Tag, slot
	}
	if t.FD() < 0 {
		return 0, nil // refused or closed before the host heard of it
	}
	slot := s.registerTransport(t, 0, 0) // an accepted connection's first event
	if slot == nil {
		t.Refuse()
	}
	return t.Tag, slot
}

// claim is an id and a protocol slot taken before the transport or process
// they are for exists, so that a constructor refused for want of either has
// done nothing (no fd taken from the host, no child started).
type claim struct {
	id   uint64
	slot *C.ll__proto
}

// claimSlot takes an id and a protocol slot, or reports false.
func (s *loopState) claimSlot() (claim, bool) {
	n := s.netInit()
	slot := n.slots.get()
	if slot == nil {
		return claim{}, false
	}
	id := ids.reserveID()
	if id == 0 {
		n.slots.put(slot)
		return claim{}, false
	}
	return claim{id, slot}, true
}

// unclaim gives back what claimSlot took.
func (s *loopState) unclaim(c claim) {
	ids.remove(c.id)
	s.netInit().slots.put(c.slot)
}

// registerTransport gives t an id and a protocol slot holding (fn, arg);
// nil if memory or ids ran out.
func (s *loopState) registerTransport(t *libloop.Transport, fn, arg uintptr) *C.ll__proto {
	c, ok := s.claimSlot()
	if !ok {
		return nil
	}
	return bindTransport(c, t, fn, arg)
}

// bindTransport gives t a claimed id and slot holding (fn, arg), and puts
// it in the loop's transport map (the write fast path finds the slot by
// id there; without memory for it, t's writes take the Go path).
func bindTransport(c claim, t *libloop.Transport, fn, arg uintptr) *C.ll__proto {
	ids.fill(c.id, kindTransport, t)
	slot := c.slot
	slot.fn, slot.arg = C.uintptr_t(fn), C.uintptr_t(arg)
	slot.fd, slot.direct = C.int32_t(t.FD()), directFlag(t, t.DirectWritable())
	slot.held = heldFlag(t.ReadsDelivered())
	t.Data, t.Tag = slot, c.id
	tmapPut(t.Loop().Data.(*loopState).pending, c.id, slot)
	fdmapPut(t.Loop().Data.(*loopState).pending, t.FD(), c.id)
	return slot
}

// heldFlag is the slot's LL__HELD_STATE bit for ReadsDelivered's answer.
func heldFlag(delivered bool) C.int16_t {
	if delivered {
		return 0
	}
	return C.LL__HELD_STATE
}

// ReadsChanged implements libloop.ReadWatcher: it keeps the slot's
// LL__HELD_STATE bit equal to !ReadsDelivered at every change, so C
// withholds a read event the moment an earlier one's protocol paused,
// closed or aborted the transport. LL__HELD_BATCH is C's and stays.
func (s *loopState) ReadsChanged(t *libloop.Transport, delivered bool) {
	if slot := protoOf(t); slot != nil {
		slot.held = slot.held&C.LL__HELD_BATCH | heldFlag(delivered)
	}
}

// directFlag is the fast path's flag for t's DirectWritable answer: by
// t's kind, which fast path may try (cloop/send.c, cloop/udpsend.c).
func directFlag(t *libloop.Transport, writable bool) C.int16_t {
	switch {
	case !writable:
		return 0
	case t.Kind() == libloop.Datagram:
		return C.LL__DIRECT_DGRAM
	}
	return C.LL__DIRECT_STREAM
}

// DirectChanged implements libloop.DirectWriter (libloop/writegate.go): it
// keeps the slot's flag equal to DirectWritable at every change, before
// the core buffers bytes or closes the fd, so C may make a write's first
// try whenever the flag is 1.
func (s *loopState) DirectChanged(t *libloop.Transport, writable bool) {
	if slot := protoOf(t); slot != nil {
		slot.direct = directFlag(t, writable)
	}
}

// retireTransport ends t's id once its last event has been delivered: out
// of the map first, then the slot may be reused.
func (s *loopState) retireTransport(t *libloop.Transport) {
	if slot := protoOf(t); slot != nil {
		tmapDel(s.pending, t.Tag)
		fdmapDel(s.pending, int(slot.fd), t.Tag)
		slot.direct = 0
		ids.remove(t.Tag)
		s.net.slots.put(slot)
		t.Data, t.Tag = nil, 0
	}
}

// freeNet runs when the loop is released: the loop is closed, so its
// transports and servers are gone; so are their ids and C memory.
func (s *loopState) freeNet() {
	n := s.net
	if n == nil {
		return
	}
	for id := range n.live {
		ids.remove(id)
	}
	mine := func(obj any) bool { return obj.(*libloop.Transport).Loop() == s.loop }
	for _, id := range ids.idsOf(kindTransport, mine) {
		if obj, ok := ids.get(id, kindTransport); ok {
			s.retireTransport(obj.(*libloop.Transport))
		}
	}
	tmapFree(s.pending)
	fdmapFree(s.pending)
	n.slots.release()
	C.free(unsafe.Pointer(n.events))
	C.free(unsafe.Pointer(n.protos))
	C.free(n.rbuf)
	n.freeUDPRecv()
	s.net = nil
}

//export ll_loop_set_event_batch
func ll_loop_set_event_batch(id C.uint64_t, fn C.ll_event_batch_fn, arg unsafe.Pointer) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	n := s.netInit()
	n.batchFn, n.batchArg = uintptr(unsafe.Pointer(fn)), uintptr(arg)
	return 0
}
