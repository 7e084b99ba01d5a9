// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"syscall"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// The read gate from capi's side (libloop/readgate.go decides when it may
// run; cloop/readgate.c runs it): the core's terms copied into the loop's
// C record for one delivery call, the outcome copied back, and the fd map
// through which C finds a ready socket's transport.

var _ libloop.ReadGater = (*loopState)(nil)

// DeliverGated implements libloop.ReadGater: Deliver, whose last crossing
// runs the gate's iterations after its events.
func (s *loopState) DeliverGated(l *libloop.Loop, evs []libloop.Event, g *libloop.ReadGate) {
	s.deliver(evs, g)
}

// openGate fills the C record's gate terms for the next delivery call;
// false if there is no read buffer to read into, or the poll asks for more
// events than C's gate keeps (no gate then).
func (s *loopState) openGate(g *libloop.ReadGate, n *netState) bool {
	if n.rbuf == nil || g.ReadMax > readBufferSize || g.Poll.Max > C.LL__GATE_MAX_EVENTS {
		return false
	}
	cg := &s.pending.gate
	cg.on, cg.epfd = 1, C.int32_t(g.Poll.Fd)
	cg.events, cg.max_events = C.uintptr_t(uintptr(g.Poll.Buf)), C.int64_t(g.Poll.Max)
	cg.view = C.uintptr_t(uintptr(unsafe.Pointer(g.View)))
	cg.deadline, cg.max_iterations = C.int64_t(g.Deadline), C.int64_t(g.MaxIterations)
	// While posts flow, BeforeBlock lingers for the next one before the
	// loop sleeps: the gate leaves that to Go's iteration and never blocks.
	cg.block_until, cg.try_first = C.int64_t(g.BlockUntil), 0
	if s.postsFlowing || g.BlockUntil <= 0 {
		cg.block_until = 0
	}
	if g.TryFirst {
		cg.try_first = 1
	}
	cg.rbuf, cg.rbuf_len = C.uintptr_t(uintptr(n.rbuf)), C.int64_t(g.ReadMax)
	return true
}

// closeGate copies the gate's outcome back into g (a failed read's id
// becomes its transport, if it is still this loop's).
func (s *loopState) closeGate(g *libloop.ReadGate) {
	cg := &s.pending.gate
	cg.on = 0 // (C cleared it; a runner that panicked did not)
	cg.events, cg.view = 0, 0
	g.Iterations, g.Events, g.Polled = int(cg.iterations), int(cg.events_out), int(cg.polled)
	g.IdleNs = int64(cg.idle_ns)
	if id := uint64(cg.failed_id); id != 0 {
		cg.failed_id = 0
		if obj, ok := ids.get(id, kindTransport); ok {
			if t := obj.(*libloop.Transport); t.Loop() == s.loop {
				g.Failed, g.Errno = t, syscall.Errno(cg.failed_errno)
			}
		}
	}
}

// fdmapPut records that fd is transport id's (nothing for fd < 0; without
// memory the gate never finds it, and Go reads it).
func fdmapPut(p *C.ll__pending, fd int, id uint64) {
	C.ll__fdmap_put(p, C.int32_t(fd), C.uint64_t(id))
}

// fdmapDel forgets fd if it is still id's.
func fdmapDel(p *C.ll__pending, fd int, id uint64) {
	C.ll__fdmap_del(p, C.int32_t(fd), C.uint64_t(id))
}

// fdmapFree drops the map (the loop's end).
func fdmapFree(p *C.ll__pending) { C.ll__fdmap_free(p) }
