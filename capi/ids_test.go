// SPDX-License-Identifier: MIT

package main

import (
	"math/rand"
	"testing"
	"unsafe"
)

// Ids stay unique and a removed (stale) or forged id never resolves, across
// any sequence of adds and removes with slot reuse.
func FuzzIDTable(f *testing.F) {
	f.Add(int64(1), uint16(300))
	f.Add(int64(99), uint16(2000))
	f.Fuzz(func(t *testing.T, seed int64, n uint16) {
		var tab idTable
		r := rand.New(rand.NewSource(seed))
		live := map[uint64]int{}
		var dead []uint64
		for i := 0; i < int(n); i++ {
			if len(live) > 0 && r.Intn(3) == 0 {
				for id := range live {
					if !tab.remove(id) {
						t.Fatalf("remove of live id %#x failed", id)
					}
					delete(live, id)
					dead = append(dead, id)
					break
				}
				continue
			}
			k := kind(1 + r.Intn(4))
			id := tab.add(k, i)
			if id == 0 {
				t.Fatal("id 0 issued")
			}
			if _, dup := live[id]; dup {
				t.Fatalf("id %#x issued twice", id)
			}
			live[id] = i
			if got, ok := tab.get(id, k); !ok || got.(int) != i {
				t.Fatalf("fresh id %#x does not resolve", id)
			}
			if _, ok := tab.get(id, k%4+1); ok {
				t.Fatalf("id %#x resolved as another kind", id)
			}
		}
		for _, id := range dead {
			if tab.kindOf(id) != 0 || tab.remove(id) {
				t.Fatalf("stale id %#x still resolves", id)
			}
		}
		for _, forged := range []uint64{0, 1 << 63, uint64(r.Uint32()) << 32} {
			if _, in := live[forged]; !in && tab.kindOf(forged) != 0 {
				t.Fatalf("forged id %#x resolves", forged)
			}
		}
	})
}

// slotOf returns the table slot an id names (live or not).
func slotOf(t *idTable, id uint64) *idSlot { return t.slot(uint32(id&slotMask) - 1) }

// A stale id never names a later object of its slot, even across the wrap of
// the slot's generation counter (fast-forwarded here to just before it).
func TestIDStaleAcrossGenerationWrap(t *testing.T) {
	var tab idTable // reserve 0: the freed slot is handed straight back
	first := tab.add(kindFuture, "first")
	slotOf(&tab, first).set(genMask-2, kindFuture, true)
	old := makeID(uint32(first&slotMask)-1, genMask-2)
	seen := map[uint64]bool{old: true}
	for i := 0; i < 6; i++ { // gens genMask-2 .. 3: through the wrap
		id := old
		if i > 0 {
			id = tab.add(kindFuture, i)
		}
		if id == 0 || id&slotMask != first&slotMask {
			t.Fatalf("round %d: id %#x, want slot %#x reused", i, id, first&slotMask)
		}
		if i > 0 && seen[id] {
			t.Fatalf("round %d: id %#x issued twice", i, id)
		}
		seen[id] = true
		if !tab.remove(id) {
			t.Fatalf("round %d: live id %#x not removed", i, id)
		}
		if _, ok := tab.get(old, kindFuture); ok {
			t.Fatalf("round %d: stale id %#x resolves", i, old)
		}
	}
	if g := slotOf(&tab, old).gen(); g == 0 || g > 4 {
		t.Fatalf("generation after the wrap is %d, want 1..4 (0 skipped)", g)
	}
}

// The reported aliasing: with 32-bit generations, an id came back to life
// after 2^32 reuses of its slot. Now that takes 2^40.
func TestIDStaleAfter2To32Reuses(t *testing.T) {
	var tab idTable
	old := tab.add(kindHandle, "old")
	tab.remove(old)
	s := slotOf(&tab, old)
	s.set(old>>slotBits+1<<32, 0, false) // as if freed 2^32 more times
	fresh := tab.add(kindHandle, "new")
	if fresh&slotMask != old&slotMask {
		t.Fatalf("slot not reused: %#x vs %#x", fresh, old)
	}
	if got, ok := tab.get(old, kindHandle); ok {
		t.Fatalf("stale id %#x names the new object %v", old, got)
	}
	if got, ok := tab.get(fresh, kindHandle); !ok || got != "new" {
		t.Fatalf("fresh id %#x does not resolve", fresh)
	}
}

// A create/release cycle (one object live at a time) spreads over the
// reserve of free slots instead of wearing out one slot's generations.
func TestIDReuseSpreadsOverReserve(t *testing.T) {
	tab := idTable{reserve: defaultReserve}
	uses := map[uint64]int{}
	const cycles = 10 * defaultReserve
	for i := 0; i < cycles; i++ {
		id := tab.add(kindFuture, i)
		uses[id&slotMask]++
		tab.remove(id)
	}
	if len(uses) < defaultReserve {
		t.Fatalf("%d cycles used %d slots, want >= %d", cycles, len(uses), defaultReserve)
	}
	for slot, n := range uses {
		if n > cycles/defaultReserve+1 {
			t.Fatalf("slot %d reused %d times in %d cycles", slot, n, cycles)
		}
	}
}

// Of two goroutines taking one id, exactly one gets the object, every time.
func TestIDTakeRace(t *testing.T) {
	var tab idTable
	for round := 0; round < 2000; round++ {
		id := tab.add(kindHandle, round)
		var wins [2]bool
		done := make(chan struct{})
		for g := 0; g < 2; g++ {
			go func(g int) {
				_, wins[g] = tab.take(id)
				done <- struct{}{}
			}(g)
		}
		<-done
		<-done
		if wins[0] == wins[1] {
			t.Fatalf("round %d: take results %v, want exactly one winner", round, wins)
		}
		if tab.kindOf(id) != kindHandle {
			t.Fatalf("round %d: take removed the id; remove does that", round)
		}
		tab.remove(id)
	}
}

// A slot's generation, kind and host flag share one word: each reads back
// as written at its extremes, and a slot is 24 bytes (a server holds one
// per connection).
func TestIDSlotWord(t *testing.T) {
	var s idSlot
	for _, c := range []struct {
		gen  uint64
		k    kind
		host bool
	}{{genMask, kindReserved, true}, {1, 0, false}, {genMask, 0, true}, {1, kindReserved, false}} {
		s.set(c.gen, c.k, c.host)
		if s.gen() != c.gen || s.kind() != c.k || s.host() != c.host {
			t.Fatalf("set(%#x, %d, %v) reads back (%#x, %d, %v)", c.gen, c.k, c.host, s.gen(), s.kind(), s.host())
		}
	}
	if n := unsafe.Sizeof(idSlot{}); n != 24 {
		t.Fatalf("idSlot is %d bytes, want 24", n)
	}
}
