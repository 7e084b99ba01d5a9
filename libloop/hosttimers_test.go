// SPDX-License-Identifier: MIT

package libloop

import (
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"
)

// Timers with and without handles, at a few shared deadlines, run in
// deadline order and, for equal deadlines, in the order they were
// scheduled, whichever heap holds them; cancelled handle timers do not run.
func TestHostTimersMergeWithHandleTimersInOrder(t *testing.T) {
	l := newTestLoop(t)
	d := &recordingHost{}
	l.SetHost(d)
	l.Tag = 77
	base := l.Time() + 0.02
	type sched struct {
		when float64
		arg  uintptr
	}
	var want []sched
	rng := rand.New(rand.NewSource(1))
	for i := 1; i <= 3000; i++ {
		when := base + float64(rng.Intn(5))*0.001 // many equal deadlines
		arg := uintptr(i)
		switch rng.Intn(3) {
		case 0:
			if _, err := l.CallAtHost(atNs(t, l, when), HostCall{Fn: 1, Arg: arg}, false); err != nil {
				t.Fatal(err)
			}
		case 1:
			if _, err := l.CallAtHost(atNs(t, l, when), HostCall{Fn: 1, Arg: arg, ID: 77}, true); err != nil {
				t.Fatal(err)
			}
		default:
			h, err := l.CallAtHost(atNs(t, l, when), HostCall{Fn: 1, Arg: arg, ID: 77}, true)
			if err != nil {
				t.Fatal(err)
			}
			h.Cancel()
			continue
		}
		want = append(want, sched{when, arg})
	}
	slices.SortStableFunc(want, func(a, b sched) int {
		switch {
		case a.when < b.when:
			return -1
		case a.when > b.when:
			return 1
		}
		return 0
	})
	l.CallLater(0.05, func() { l.Stop() })
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if len(d.got) != len(want) {
		t.Fatalf("%d calls ran, want %d", len(d.got), len(want))
	}
	for i, w := range want {
		if d.got[i] != w.arg {
			t.Fatalf("call %d: arg %d, want %d", i, d.got[i], w.arg)
		}
		if d.ids[i] != 77 {
			t.Fatalf("call %d: id %d, want the loop's tag 77", i, d.ids[i])
		}
	}
}

// atNs is when's deadline in loop nanoseconds, as CallAt takes it.
func atNs(t *testing.T, l *Loop, when float64) int64 {
	t.Helper()
	ns, err := l.Deadline(when, false)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// laterHost schedules a handle-less host timer as ll_call_later(out NULL).
func laterHost(l *Loop, delay float64, fn, arg uintptr) error {
	ns, err := l.Deadline(delay, true)
	if err != nil {
		return err
	}
	_, err = l.CallAtHost(ns, HostCall{Fn: fn, Arg: arg}, false)
	return err
}

// The heap itself: a million entries pushed in random order come out
// sorted by (deadline, seq), across chunk boundaries, and shrinking frees
// chunks.
func TestHostTimerHeapOrderAndChunks(t *testing.T) {
	var h hostTimerHeap
	rng := rand.New(rand.NewSource(2))
	const n = 100000
	for i := 0; i < n; i++ {
		h.push(hostTimer{when: int64(rng.Intn(n / 10)), seq: uint64(i), arg: uintptr(i)})
	}
	if len(h.chunks) < n/htChunkLen {
		t.Fatalf("%d chunks for %d entries", len(h.chunks), n)
	}
	prev := hostTimer{when: math.MinInt64}
	for i := 0; i < n; i++ {
		e := h.pop()
		if e.when < prev.when || e.when == prev.when && e.seq < prev.seq {
			t.Fatalf("pop %d out of order: %+v after %+v", i, e, prev)
		}
		prev = e
	}
	if h.len() != 0 || len(h.chunks) > 2 {
		t.Fatalf("empty heap keeps %d entries, %d chunks", h.len(), len(h.chunks))
	}
}

// A host timer can be scheduled with asyncio's edge deadlines, is refused
// on a closed loop and without a function, and a closed loop drops it.
func TestHostTimerEdges(t *testing.T) {
	l := newTestLoop(t)
	d := &recordingHost{}
	l.SetHost(d)
	if err := laterHost(l, 0, 0, 1); err != EINVAL {
		t.Fatalf("fn 0: %v", err)
	}
	if err := laterHost(l, math.NaN(), 1, 1); err == nil {
		t.Fatal("NaN delay accepted")
	}
	if err := laterHost(l, math.Inf(-1), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CallAtHost(atNs(t, l, -1e300), HostCall{Fn: 1, Arg: 2}, false); err != nil {
		t.Fatal(err)
	}
	l.CallSoon(func() { l.Stop() })
	l.RunForever()
	if !slices.Equal(d.got, []uintptr{1, 2}) {
		t.Fatalf("ran %v, want [1 2]", d.got)
	}
	laterHost(l, 3600, 1, 3)
	l.Close()
	if err := laterHost(l, 1, 1, 4); err != ECLOSED {
		t.Fatalf("closed loop: %v", err)
	}
	if l.hostTimers.len() != 0 {
		t.Fatal("a closed loop keeps its timers")
	}
}

// The queue (a FIFO run for in-order deadlines beside the heap) pops in
// (deadline, seq) order for any mix of in-order and earlier deadlines,
// equal ones included, interleaved with pops, across chunk boundaries.
func TestHostTimerQueueOrder(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var q hostTimerQueue
		var ref []hostTimer // what is queued, kept sorted by (when, seq)
		var seq uint64
		var last int64
		n := 1 + rng.Intn(3*htChunkLen)
		inOrder := rng.Intn(101) // percent of pushes with a deadline >= the last one
		for i := 0; i < n || len(ref) > 0; i++ {
			if i < n && (len(ref) == 0 || rng.Intn(3) != 0) {
				when := last + int64(rng.Intn(3))
				if rng.Intn(100) >= inOrder {
					when = int64(rng.Intn(int(last) + 1))
				}
				last = max(last, when)
				seq++
				e := hostTimer{when: when, seq: seq, arg: uintptr(seq)}
				q.push(e)
				k := sort.Search(len(ref), func(j int) bool { return e.before(&ref[j]) })
				ref = slices.Insert(ref, k, e)
			} else {
				if *q.peek() != ref[0] {
					t.Fatalf("seed %d: peek %+v, want %+v", seed, *q.peek(), ref[0])
				}
				if got := q.pop(); got != ref[0] {
					t.Fatalf("seed %d: pop %+v, want %+v", seed, got, ref[0])
				}
				ref = ref[1:]
			}
			if q.len() != len(ref) {
				t.Fatalf("seed %d: len %d, want %d", seed, q.len(), len(ref))
			}
		}
		if len(q.run.chunks) > 1 || q.run.spare != nil || q.run.head != 0 {
			t.Fatalf("seed %d: an empty run keeps %d chunks (spare %v, head %d)",
				seed, len(q.run.chunks), q.run.spare != nil, q.run.head)
		}
	}
}

// In-order deadlines (one delay, scheduled one after another) never touch
// the heap.
func TestHostTimerQueueInOrderUsesRun(t *testing.T) {
	var q hostTimerQueue
	for i := 0; i < 3*htChunkLen; i++ {
		q.push(hostTimer{when: int64(i / 2), seq: uint64(i)})
	}
	if q.heap.len() != 0 || q.run.n != 3*htChunkLen {
		t.Fatalf("heap %d, run %d", q.heap.len(), q.run.n)
	}
	q.push(hostTimer{when: 5, seq: 1 << 40}) // earlier than the run's last: the heap
	if q.heap.len() != 1 {
		t.Fatalf("heap %d after an earlier deadline", q.heap.len())
	}
}
