// SPDX-License-Identifier: MIT

package main

import (
	"testing"
	"unsafe"
)

// The read gate's fd map: an entry names the id that put it until that id
// deletes it (a later id on the same fd replaces it, and the old id's
// delete then leaves it); it grows to any fd, keeping what it held, at
// about a quarter over the highest fd once large; bad fds and id 0 change
// nothing.
func TestReadGateFdMap(t *testing.T) {
	p := _Cfunc_ll__pending_new()
	defer _Cfunc_ll__pending_retire(p)
	defer fdmapFree(p)
	entry := func(fd int) uint32 {
		if int64(fd) >= int64(p.fdmap_cap) {
			return 0
		}
		return unsafe.Slice((*uint32)(unsafe.Pointer(p.fdmap)), int(p.fdmap_cap))[fd]
	}
	const a, b = uint64(7)<<24 | 5, uint64(9)<<24 | 6
	fdmapPut(p, 5, a)
	if entry(5) != 5 {
		t.Fatalf("fd 5: %d, want a's slot bits 5", entry(5))
	}
	fdmapDel(p, 5, b)
	if entry(5) != 5 {
		t.Fatal("another id's delete removed the entry")
	}
	fdmapPut(p, 5, b) // the fd reused before a's id ended
	fdmapDel(p, 5, a)
	if entry(5) != 6 {
		t.Fatalf("fd 5: %d, want b's 6", entry(5))
	}
	fdmapDel(p, 5, b)
	if entry(5) != 0 {
		t.Fatal("the entry outlived its id")
	}
	fdmapPut(p, 9, a)
	fdmapPut(p, 20000, b)
	if entry(9) != 5 || entry(20000) != 6 || entry(19999) != 0 {
		t.Fatalf("after growing: fd 9 %d, 20000 %d, 19999 %d", entry(9), entry(20000), entry(19999))
	}
	if c := int64(p.fdmap_cap); c <= 20000 || c > 20001*5/4+4096 {
		t.Fatalf("%d entries for fd 20000", c)
	}
	before := p.fdmap_cap
	fdmapPut(p, -1, a)
	fdmapPut(p, 30, 0)
	fdmapDel(p, -1, a)
	fdmapDel(p, 1<<30, a)
	if p.fdmap_cap != before || entry(30) != 0 {
		t.Fatal("a bad fd or id 0 changed the map")
	}
}
