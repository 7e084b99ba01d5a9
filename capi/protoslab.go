// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import "unsafe"

// protoSlab hands out protocol slots (ll__proto, 16 bytes of C memory that
// C reads at call time) from chunks, so a connection's slot costs 16 bytes
// instead of a malloc of its own; freed slots are reused. The chunks are
// freed with the loop.
type protoSlab struct {
	chunks []unsafe.Pointer
	free   []*C.ll__proto
}

const protoChunk = 256

// get returns a zeroed slot, or nil if C memory ran out.
func (p *protoSlab) get() *C.ll__proto {
	if len(p.free) == 0 {
		chunk := C.calloc(protoChunk, C.sizeof_ll__proto)
		if chunk == nil {
			return nil
		}
		p.chunks = append(p.chunks, chunk)
		slots := unsafe.Slice((*C.ll__proto)(chunk), protoChunk)
		for i := protoChunk - 1; i >= 0; i-- {
			p.free = append(p.free, &slots[i])
		}
	}
	s := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	*s = C.ll__proto{}
	return s
}

// put returns a slot for reuse.
func (p *protoSlab) put(s *C.ll__proto) { p.free = append(p.free, s) }

// release frees every chunk; no slot may be used afterwards.
func (p *protoSlab) release() {
	for _, c := range p.chunks {
		C.free(c)
	}
	p.chunks, p.free = nil, nil
}
