// SPDX-License-Identifier: MIT

package libloop

import (
	"math/rand"
	"testing"
)

// timerQueue adds to timers.Queue (whose order internal/timers tests) the
// inHeap flag and each handle's key: a queued handle is flagged, its entry
// carries its own deadline and sequence, and a popped one is unflagged, in
// (deadline, seq) order; a purge keeps what drop refuses.
func TestTimerQueueFlagsAndKeys(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var q timerQueue
	for seq := uint64(1); seq <= 3000; seq++ {
		h := &Handle{when: rng.Int63n(100), seq: seq}
		q.push(h)
		if !h.inHeap {
			t.Fatalf("handle %d is queued but not flagged", seq)
		}
	}
	q.removeIf(func(h *Handle) bool { return h.seq%3 == 0 })
	var prev *Handle
	for n := 0; q.len() > 0; n++ {
		e := q.peek()
		if e.When != e.Val.when || e.Seq != e.Val.seq {
			t.Fatalf("entry key (%d, %d) is not its handle's (%d, %d)", e.When, e.Seq, e.Val.when, e.Val.seq)
		}
		want := e.Val // e points into the queue: pop clears it
		h := q.pop()
		switch {
		case h != want:
			t.Fatal("pop is not what peek showed")
		case h.inHeap:
			t.Fatalf("handle %d popped but still flagged", h.seq)
		case h.seq%3 == 0:
			t.Fatalf("handle %d survived the purge", h.seq)
		case prev != nil && (h.when < prev.when || h.when == prev.when && h.seq < prev.seq):
			t.Fatalf("pop %d: (%d, %d) after (%d, %d)", n, h.when, h.seq, prev.when, prev.seq)
		}
		prev = h
	}
}
