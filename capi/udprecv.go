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

// ReadDatagrams implements libloop.DatagramReader: a readiness the core
// lets the host serve is served in C (cloop/udprecv.c) when the
// transport's protocol is a C function: recvmmsg and a call per datagram
// in this one crossing. A batch sink's transport (fn 0) is left to the
// core's read, whose events reach the sink in runs.
func (s *loopState) ReadDatagrams(t *libloop.Transport, max int) (bool, syscall.Errno) {
	slot := protoOf(t)
	if slot == nil || slot.fn == 0 || slot.held != 0 {
		return false, 0
	}
	n := s.netInit()
	if n.udp == nil {
		if n.udpOff {
			return false, 0
		}
		if n.udp = C.ll__udprecv_new(); n.udp == nil {
			n.udpOff = true // no memory, or no recvmmsg here: the core reads
			return false, 0
		}
	}
	u := n.udp
	s.runHost(func() {
		C.ll__udp_recv(C.uint64_t(s.id), C.uintptr_t(uintptr(unsafe.Pointer(u))),
			C.uintptr_t(uintptr(unsafe.Pointer(slot))), C.uint64_t(t.Tag), C.int(t.FD()), C.int(t.EventFD()),
			C.int(max), C.uintptr_t(uintptr(unsafe.Pointer(s.pending))))
	})
	for i := range int(u.nrest) {
		d := &u.rest[i]
		t.QueueDatagram(unsafe.Slice((*byte)(d.data), int(d.len)), unsafe.Slice((*byte)(d.addr), int(d.addrlen)))
	}
	return true, syscall.Errno(u.err)
}

// freeUDPRecv drops the loop's C datagram path state (the loop's end).
func (n *netState) freeUDPRecv() {
	C.ll__udprecv_free(n.udp)
	n.udp = nil
}
