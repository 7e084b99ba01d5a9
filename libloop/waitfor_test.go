// SPDX-License-Identifier: MIT

package libloop

import (
	"math"
	"testing"
)

// Timer-less WaitFor futures dropped while their target is pending are cut
// out of its callbacks; the others keep their order and their outcome, and
// the target is disposed once nothing holds it.
func TestWaitForDroppedWaitersAreCutOut(t *testing.T) {
	l := newTestLoop(t)
	f, _ := l.NewFuture()
	var order []int
	kept := map[int]*Future{}
	for i := 0; i < 1000; i++ {
		w, err := l.WaitFor(f, math.Inf(1))
		if err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 { // every hundredth is kept, and records when it is done
			i := i
			kept[i] = w
			w.AddDoneCallback(func(*Future) { order = append(order, i) })
		} else {
			w.Release()
		}
	}
	if n := len(f.callbacks); n > 100 {
		t.Fatalf("%d callbacks left on the target for 10 live waiters", n)
	}
	if f.holds > 100 {
		t.Fatalf("target holds %d", f.holds)
	}
	f.SetResult(9, nil)
	for i := 0; i < 4; i++ {
		l.RunOnce(true)
	}
	if len(order) != 10 {
		t.Fatalf("%d kept waiters finished, want 10", len(order))
	}
	for k, i := range order {
		if i != 100*k {
			t.Fatalf("waiters finished in order %v", order)
		}
		if v, err := kept[i].Result(); err != nil || v != 9 {
			t.Fatalf("waiter %d: %v, %v", i, v, err)
		}
		kept[i].Release()
	}
	if f.holds != 0 || len(l.droppedWaits) != 0 {
		t.Fatalf("after the target finished: holds %d, dropped-wait records %d", f.holds, len(l.droppedWaits))
	}
	live := l.LiveFutures()
	f.Release()
	if l.LiveFutures() != live-1 {
		t.Fatalf("target not disposed once released (live %d -> %d)", live, l.LiveFutures())
	}
}

// A target only the dropped waiters held is disposed when they are cut out.
func TestWaitForTargetHeldOnlyByDroppedWaiters(t *testing.T) {
	l := newTestLoop(t)
	f, _ := l.NewFuture()
	freed := 0
	watchDisposal(l, func(d *Future) {
		if d == f {
			freed++
		}
	})
	var ws []*Future
	for i := 0; i < 200; i++ {
		w, _ := l.WaitFor(f, 1e10)
		ws = append(ws, w)
	}
	f.Release() // the host drops the target; its waiters still hold it
	if freed != 0 {
		t.Fatal("target disposed while waited for")
	}
	for _, w := range ws {
		w.Release()
	}
	l.RunOnce(true)
	if freed != 1 {
		t.Fatalf("target disposed %d times once every waiter was dropped, want 1", freed)
	}
}
