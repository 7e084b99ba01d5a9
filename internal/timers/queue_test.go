// SPDX-License-Identifier: MIT

package timers

import (
	"math/rand"
	"slices"
	"sort"
	"testing"
)

func entry(when int64, seq uint64) Entry[uint64] {
	return Entry[uint64]{Key: Key{When: when, Seq: seq}, Val: seq}
}

// pushAll queues es in order as a batch: in-order ones in the run's Room,
// the rest by Push (libloop's CallAtHostMany does the same).
func pushAll(q *Queue[uint64], es []Entry[uint64]) {
	room, k := q.Room(), 0
	last, inRun := q.Last()
	for _, e := range es {
		if k < len(room) && (!inRun || !e.Before(last)) {
			room[k] = e
			k++
			last, inRun = e.Key, true
			continue
		}
		q.Commit(k)
		q.Push(e)
		room, k = q.Room(), 0
		last, inRun = q.Last()
	}
	q.Commit(k)
}

// A queue pops in Key order for any mix of in-order and earlier deadlines,
// equal ones included, interleaved with pops (PopBefore's and RunBefore's
// too) and purges, across chunk boundaries; an emptied run keeps at most
// one chunk and no spare.
func TestQueueOrderAndPurge(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var q Queue[uint64]
		var ref []Entry[uint64] // what is queued, kept in Key order
		var seq uint64
		var last int64
		n := 1 + rng.Intn(3*chunkLen)
		inOrder := rng.Intn(101) // percent of pushes not before the last one
		for i := 0; i < n || len(ref) > 0; i++ {
			switch {
			case i < n && (len(ref) == 0 || rng.Intn(3) != 0):
				when := last + int64(rng.Intn(3))
				if rng.Intn(100) >= inOrder {
					when = int64(rng.Intn(int(last) + 1))
				}
				last = max(last, when)
				seq++
				e := entry(when, seq)
				q.Push(e)
				k := sort.Search(len(ref), func(j int) bool { return e.Before(ref[j].Key) })
				ref = slices.Insert(ref, k, e)
			case rng.Intn(50) == 0:
				odd := func(e *Entry[uint64]) bool { return e.Val%2 == 1 }
				q.RemoveIf(odd)
				ref = slices.DeleteFunc(ref, func(e Entry[uint64]) bool { return odd(&e) })
			case rng.Intn(5) == 0: // a run before a bound among the next few
				bound := ref[rng.Intn(min(len(ref), 3*chunkLen))].Key
				if rng.Intn(2) == 0 {
					bound.Seq++
				}
				run := q.RunBefore(bound)
				k := 0
				for k < len(ref) && ref[k].Before(bound) && k < len(run) {
					if run[k] != ref[k] {
						t.Fatalf("seed %d: RunBefore[%d] = %+v, want %+v", seed, k, run[k], ref[k])
					}
					k++
				}
				if k != len(run) {
					t.Fatalf("seed %d: RunBefore holds %d, %d of them in order before the bound", seed, len(run), k)
				}
				// It stops only at the bound, the heap's front or the chunk's end.
				if k < len(ref) && ref[k].Before(bound) && !(q.heap.n > 0 && *q.heap.Top() == ref[k]) &&
					k != len(q.run.FrontChunk()) {
					t.Fatalf("seed %d: RunBefore stops at %d of %d before %+v", seed, k, len(q.run.FrontChunk()), ref[k])
				}
				n := rng.Intn(len(run) + 1)
				q.Discard(n)
				ref = ref[n:]
			case rng.Intn(4) == 0: // a bound at, before or after the front
				bound := ref[0].Key
				switch rng.Intn(3) {
				case 0:
					bound.Seq++
				case 1:
					bound.When -= int64(rng.Intn(2))
				}
				e, ok := q.PopBefore(bound)
				if want := ref[0].Before(bound); ok != want || ok && e != ref[0] {
					t.Fatalf("seed %d: PopBefore(%+v) = %+v, %v; front %+v", seed, bound, e, ok, ref[0])
				}
				if ok {
					ref = ref[1:]
				}
			default:
				if *q.Peek() != ref[0] {
					t.Fatalf("seed %d: peek %+v, want %+v", seed, *q.Peek(), ref[0])
				}
				if got := q.Pop(); got != ref[0] {
					t.Fatalf("seed %d: pop %+v, want %+v", seed, got, ref[0])
				}
				ref = ref[1:]
			}
			if q.Len() != len(ref) {
				t.Fatalf("seed %d: len %d, want %d", seed, q.Len(), len(ref))
			}
		}
		if _, ok := q.PopBefore(Key{When: last + 1}); ok {
			t.Fatalf("seed %d: PopBefore pops from an empty queue", seed)
		}
		if len(q.run.chunks) > 1 || q.run.spare != nil || q.run.head != 0 {
			t.Fatalf("seed %d: an empty run keeps %d chunks (spare %v, head %d)",
				seed, len(q.run.chunks), q.run.spare != nil, q.run.head)
		}
	}
}

// Batches of any size (Room, Commit) queue what a Push each would: the two
// queues pop the same timers in the same order, across chunk boundaries,
// with pops and purges between the batches.
func TestQueueBatchesMatchPushes(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var one, many Queue[uint64]
		var seq uint64
		var last int64
		inOrder := []int{100, 99, 90, 50}[seed%4]
		for round := 0; round < 20; round++ {
			es := make([]Entry[uint64], rng.Intn(2*chunkLen))
			for i := range es {
				when := last + int64(rng.Intn(3))
				if rng.Intn(100) >= inOrder {
					when = int64(rng.Intn(int(last) + 1))
				}
				last = max(last, when)
				seq++
				es[i] = entry(when, seq)
				one.Push(es[i])
			}
			pushAll(&many, es)
			if round%5 == 4 {
				third := func(e *Entry[uint64]) bool { return e.Val%3 == 0 }
				one.RemoveIf(third)
				many.RemoveIf(third)
			}
			for k := rng.Intn(chunkLen); k > 0 && one.Len() > 0; k-- {
				if a, b := one.Pop(), many.Pop(); a != b {
					t.Fatalf("seed %d round %d: %+v pushed one by one, %+v in batches", seed, round, a, b)
				}
			}
		}
		for one.Len() > 0 {
			if a, b := one.Pop(), many.Pop(); a != b {
				t.Fatalf("seed %d: %+v pushed one by one, %+v in batches", seed, a, b)
			}
		}
		if many.Len() != 0 {
			t.Fatalf("seed %d: batches queued %d more", seed, many.Len())
		}
	}
}

// In-order deadlines (one delay, scheduled one after another) never touch
// the heap; an earlier one does.
func TestQueueInOrderUsesTheRun(t *testing.T) {
	var q Queue[uint64]
	for i := 0; i < 3*chunkLen; i++ {
		q.Push(entry(int64(i/2), uint64(i)))
	}
	if q.heap.Len() != 0 || q.run.Len() != 3*chunkLen {
		t.Fatalf("heap %d, run %d", q.heap.Len(), q.run.Len())
	}
	q.Push(entry(5, 1<<40))
	if q.heap.Len() != 1 {
		t.Fatalf("heap %d after an earlier deadline", q.heap.Len())
	}
}

// The heap alone: 100,000 entries pushed in random order come out in Key
// order across chunk boundaries, a purge keeps heap order, and shrinking
// frees chunks.
func TestHeapOrderPurgeAndChunks(t *testing.T) {
	var h Heap[uint64]
	rng := rand.New(rand.NewSource(2))
	const n = 100_000
	for i := 0; i < n; i++ {
		h.Push(entry(int64(rng.Intn(n/10)), uint64(i)))
	}
	if len(h.chunks) < n/chunkLen {
		t.Fatalf("%d chunks for %d entries", len(h.chunks), n)
	}
	h.RemoveIf(func(e *Entry[uint64]) bool { return e.Val%3 == 0 })
	if h.Len() != n-(n+2)/3 {
		t.Fatalf("%d left after the purge", h.Len())
	}
	prev := Key{When: -1}
	for i := 0; h.Len() > 0; i++ {
		e := h.Pop()
		if e.Before(prev) || e.Val%3 == 0 {
			t.Fatalf("pop %d: %+v after %+v", i, e, prev)
		}
		prev = e.Key
	}
	if len(h.chunks) > 2 {
		t.Fatalf("an empty heap keeps %d chunks", len(h.chunks))
	}
}

// Popped and purged entries are cleared, so a pointer a timer carried is
// not kept alive by the queue.
func TestQueueClearsWhatItDrops(t *testing.T) {
	var q Queue[*int]
	x := new(int)
	for i := 0; i < 10; i++ {
		q.Push(Entry[*int]{Key: Key{When: int64(10 - i%2), Seq: uint64(i)}, Val: x})
	}
	q.Pop()
	q.RemoveIf(func(e *Entry[*int]) bool { return e.Seq%2 == 0 })
	for q.Len() > 0 {
		q.Pop()
	}
	var all []Entry[*int]
	for _, c := range q.run.chunks {
		all = append(all, c[:]...)
	}
	for _, c := range q.heap.chunks {
		all = append(all, c[:]...)
	}
	for _, e := range all {
		if e.Val != nil {
			t.Fatalf("a dropped entry still points at its value")
		}
	}
}
