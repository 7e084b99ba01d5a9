// SPDX-License-Identifier: MIT

package main

import (
	"math/rand"
	"testing"
)

// The map against a Go map: random puts and deletes of ids crowded onto a
// few home indexes (the low bits), through several growths, every id
// looked up after each step, present or not.
func TestTransportMapMatchesGoMap(t *testing.T) {
	p := _Cfunc_ll__pending_new()
	defer _Cfunc_ll__pending_retire(p)
	slots := make([]_Ctype_ll__proto, 8)
	want := map[uint64]*_Ctype_ll__proto{}
	rng := rand.New(rand.NewSource(1))
	var keys []uint64
	for i := 0; i < 3000; i++ {
		// Low bits from a small set: long probe runs, wrap-around included.
		id := uint64(rng.Intn(40))<<24 | uint64(rng.Intn(6))*64 + uint64(rng.Intn(3)) + 61
		keys = append(keys, id)
		if rng.Intn(3) > 0 {
			s := &slots[rng.Intn(len(slots))]
			if !tmapPut(p, id, s) {
				t.Fatal("put: no memory")
			}
			want[id] = s
		} else {
			tmapDel(p, id)
			delete(want, id)
		}
		if i%7 == 0 {
			for _, k := range keys {
				if got := tmapGet(p, k); got != want[k] {
					t.Fatalf("step %d: id %#x: got %p, want %p", i, k, got, want[k])
				}
			}
			if int(p.tmap_count) != len(want) {
				t.Fatalf("step %d: count %d, want %d", i, p.tmap_count, len(want))
			}
			if p.tmap_count*2 > p.tmap_mask+1 {
				t.Fatalf("more than half full: %d of %d", p.tmap_count, p.tmap_mask+1)
			}
		}
	}
	for k := range want {
		tmapDel(p, k)
	}
	if p.tmap_count != 0 || tmapGet(p, keys[0]) != nil {
		t.Fatal("not empty after deleting everything")
	}
	tmapFree(p)
	if p.tmap != nil || tmapGet(p, keys[0]) != nil {
		t.Fatal("freed map still answers")
	}
}
