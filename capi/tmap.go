// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

// The loop's transport map (cloop/tmap.c) from Go: a transport joins it when it
// gets its id (bindTransport) and leaves when the id ends
// (retireTransport), so C's write fast path finds its protocol slot by id.

// tmapPut adds (or updates) id; false if memory ran out (id's writes then
// take the Go path, which is always correct).
func tmapPut(p *C.ll__pending, id uint64, slot *C.ll__proto) bool {
	return C.ll__tmap_put(p, C.uint64_t(id), slot) == 0
}

// tmapDel removes id (nothing if absent).
func tmapDel(p *C.ll__pending, id uint64) { C.ll__tmap_del(p, C.uint64_t(id)) }

// tmapGet is C's lookup, for checks.
func tmapGet(p *C.ll__pending, id uint64) *C.ll__proto { return C.ll__tmap_get(p, C.uint64_t(id)) }

// tmapFree drops the map (the loop's end).
func tmapFree(p *C.ll__pending) { C.ll__tmap_free(p) }
