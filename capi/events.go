package main

/*
#include <stdlib.h>
#include "hotpath.h"
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
// delivered through, the batch sink, and every live transport/server id
// (swept when the loop is released).
type netState struct {
	events   *C.ll_event
	protos   **C.ll__proto
	rbuf     unsafe.Pointer
	batchFn  uintptr
	batchArg uintptr
	live     map[uint64]*C.ll__proto // transport id -> its protocol slot; servers -> nil
	refs     [eventBatch]*transportRef
}

// transportRef is what a core Transport's Data holds: its id and the C
// slot of its protocol.
type transportRef struct {
	id    uint64
	proto *C.ll__proto
	// Processes only: the host released the id / the exit was delivered.
	released, delivered bool
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
// one crossing per eventBatch, then read back the EOF answers and retire
// the ids of transports whose LL_CONNECTION_LOST has been delivered.
func (s *loopState) Deliver(l *libloop.Loop, evs []libloop.Event) {
	n := s.netInit()
	cevs := unsafe.Slice(n.events, eventBatch)
	protos := unsafe.Slice(n.protos, eventBatch)
	for len(evs) > 0 {
		take := min(len(evs), eventBatch)
		k := 0
		for i := 0; i < take; i++ {
			ref := s.eventRef(&evs[i])
			n.refs[i] = ref
			if ref == nil {
				continue // no id could be given: the transport was refused
			}
			fillEvent(&cevs[k], &evs[i], ref.id)
			protos[k] = ref.proto
			k++
		}
		C.ll__deliver_events(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(n.events))),
			C.uintptr_t(uintptr(unsafe.Pointer(n.protos))), C.int(k),
			C.uintptr_t(uintptr(unsafe.Pointer(s.pending))), C.uintptr_t(n.batchFn), C.uintptr_t(n.batchArg))
		k = 0
		for i := 0; i < take; i++ {
			ref := n.refs[i]
			n.refs[i] = nil
			if ref == nil {
				continue
			}
			evs[i].Result = int(cevs[k].result)
			switch evs[i].Kind {
			case libloop.ConnectionLost:
				s.retireTransport(evs[i].T, ref)
			case libloop.ProcessExited:
				ref.delivered = true
				if ref.released {
					s.freeSlot(ref)
				}
			}
			k++
		}
		clear(protos[:k])
		evs = evs[take:]
		s.flushPending()
	}
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

// eventRef returns the id and protocol slot an event is delivered with.
func (s *loopState) eventRef(ev *libloop.Event) *transportRef {
	if ev.P != nil {
		ref, _ := ev.P.Data.(*transportRef)
		return ref
	}
	return s.transportRefOf(ev.T)
}

// transportRefOf returns t's id and protocol slot, giving it an id on its
// first event (an accepted connection); nil if the id table is full, in
// which case the transport is closed without events.
func (s *loopState) transportRefOf(t *libloop.Transport) *transportRef {
	if ref, ok := t.Data.(*transportRef); ok {
		return ref
	}
	if t.FD() < 0 {
		return nil // refused or closed before the host heard of it
	}
	ref := s.registerTransport(t, 0, 0)
	if ref == nil {
		t.Refuse()
	}
	return ref
}

// registerTransport gives t an id and a protocol slot holding (fn, arg).
func (s *loopState) registerTransport(t *libloop.Transport, fn, arg uintptr) *transportRef {
	slot := (*C.ll__proto)(C.calloc(1, C.sizeof_ll__proto))
	if slot == nil {
		return nil
	}
	id := ids.add(kindTransport, t)
	if id == 0 {
		C.free(unsafe.Pointer(slot))
		return nil
	}
	slot.fn, slot.arg = C.uintptr_t(fn), C.uintptr_t(arg)
	ref := &transportRef{id: id, proto: slot}
	t.Data, t.Tag = ref, id
	s.netInit().live[id] = slot
	return ref
}

// retireTransport ends t's id once its last event has been delivered.
func (s *loopState) retireTransport(t *libloop.Transport, ref *transportRef) {
	ids.remove(ref.id)
	delete(s.net.live, ref.id)
	C.free(unsafe.Pointer(ref.proto))
	t.Data = nil
}

// freeNet runs when the loop is released: the loop is closed, so its
// transports and servers are gone; so are their ids and C memory.
func (s *loopState) freeNet() {
	n := s.net
	if n == nil {
		return
	}
	for id, slot := range n.live {
		ids.remove(id)
		if slot != nil {
			C.free(unsafe.Pointer(slot))
		}
	}
	C.free(unsafe.Pointer(n.events))
	C.free(unsafe.Pointer(n.protos))
	C.free(n.rbuf)
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
