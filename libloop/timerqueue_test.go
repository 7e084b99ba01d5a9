// SPDX-License-Identifier: MIT

package libloop

import (
	"math/rand"
	"slices"
	"sort"
	"testing"
)

// The handle timer queue pops in (deadline, seq) order for any mix of
// in-order and earlier deadlines interleaved with pops, and a purge
// (removeIf) keeps the order of what stays, in the run and in the heap.
func TestTimerQueueOrderAndPurge(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var q timerQueue
		var ref []*Handle
		var seq uint64
		var last int64
		n := 1 + rng.Intn(3*htChunkLen)
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
				k := sort.Search(len(ref), func(j int) bool { return timerLess(h, ref[j]) })
				ref = slices.Insert(ref, k, h)
			case rng.Intn(50) == 0: // purge every other handle
				odd := func(h *Handle) bool { return h.seq%2 == 1 }
				q.removeIf(odd)
				ref = slices.DeleteFunc(ref, odd)
			default:
				if q.peek() != ref[0] {
					t.Fatalf("seed %d: peek seq %d, want %d", seed, q.peek().seq, ref[0].seq)
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
		if len(q.run.chunks) > 1 || q.run.head != 0 {
			t.Fatalf("seed %d: an empty run keeps %d chunks (head %d)", seed, len(q.run.chunks), q.run.head)
		}
	}
}
