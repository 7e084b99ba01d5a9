// SPDX-License-Identifier: MIT

package libloop

import (
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/libloop/libloop/internal/timers"
)

// The handle timer queue pops in (deadline, seq) order for any mix of
// in-order and earlier deadlines interleaved with pops, flags exactly the
// queued handles, and a purge (removeIf) keeps the order of what stays.
func TestTimerQueueOrderAndPurge(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var q timerQueue
		var ref []*Handle
		var seq uint64
		var last int64
		n := 1 + rng.Intn(3*4096)
		inOrder := rng.Intn(101)
		for i := 0; i < n || len(ref) > 0; i++ {
			switch {
			case i < n && (len(ref) == 0 || rng.Intn(3) != 0):
				when := last + int64(rng.Intn(3))
				if rng.Intn(100) >= inOrder {
					when = int64(rng.Intn(int(last) + 1))
				}
				last = max(last, when)
				seq++
				h := &Handle{when: when, seq: seq}
				q.push(h)
				if !h.inHeap {
					t.Fatalf("seed %d: a queued timer is not marked queued", seed)
				}
				k := sort.Search(len(ref), func(j int) bool { return h.when < ref[j].when || h.when == ref[j].when && h.seq < ref[j].seq })
				ref = slices.Insert(ref, k, h)
			case rng.Intn(50) == 0: // purge every other handle
				odd := func(h *Handle) bool { return h.seq%2 == 1 }
				q.removeIf(odd)
				ref = slices.DeleteFunc(ref, odd)
			default:
				if e := q.peek(); e.Val != ref[0] || e.Key != (timers.Key{When: ref[0].when, Seq: ref[0].seq}) {
					t.Fatalf("seed %d: peek seq %d, want %d", seed, e.Seq, ref[0].seq)
				}
				if h := q.pop(); h != ref[0] || h.inHeap {
					t.Fatalf("seed %d: pop seq %d (queued %v), want %d", seed, h.seq, h.inHeap, ref[0].seq)
				}
				ref = ref[1:]
			}
			if q.len() != len(ref) {
				t.Fatalf("seed %d: len %d, want %d", seed, q.len(), len(ref))
			}
		}
	}
}
