package main

import (
	"math/rand"
	"testing"
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
