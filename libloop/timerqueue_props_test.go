// SPDX-License-Identifier: MIT

package libloop

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

// The timer heap pops in (deadline, sequence) order whatever the order of
// pushes, with cancelled heads popped and heavy cancellation purged.
func FuzzTimerHeapOrder(f *testing.F) {
	f.Add(int64(1), uint16(50), uint8(30))
	f.Add(int64(7), uint16(400), uint8(80))
	f.Add(int64(42), uint16(3), uint8(0))
	f.Fuzz(func(t *testing.T, seed int64, n uint16, cancelPct uint8) {
		l, err := New()
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		r := rand.New(rand.NewSource(seed))
		type want struct {
			when int64
			seq  int
		}
		var ran []want
		var expect []want
		base := monoNow() - 1_000_000_000 // all due already
		for i := 0; i < int(n); i++ {
			w := want{when: base + int64(r.Intn(20)), seq: i}
			h := l.scheduleNs(w.when, func() { ran = append(ran, w) }, HostCall{})
			if r.Intn(100) < int(cancelPct%101) {
				h.Cancel()
			} else {
				expect = append(expect, w)
			}
		}
		sort.SliceStable(expect, func(i, j int) bool {
			if expect[i].when != expect[j].when {
				return expect[i].when < expect[j].when
			}
			return expect[i].seq < expect[j].seq
		})
		if err := l.RunOnce(true); err != nil {
			t.Fatal(err)
		}
		if len(ran) != len(expect) {
			t.Fatalf("ran %d timers, want %d", len(ran), len(expect))
		}
		for i := range ran {
			if ran[i] != expect[i] {
				t.Fatalf("position %d: ran %+v, want %+v", i, ran[i], expect[i])
			}
		}
		if l.timers.len() != 0 || l.timerCancelled != 0 {
			t.Fatalf("heap left %d timers, %d counted cancelled", l.timers.len(), l.timerCancelled)
		}
	})
}

// The ready ring is a FIFO across growth and wrap-around.
func FuzzReadyQueueFIFO(f *testing.F) {
	f.Add([]byte{3, 1, 200, 7, 0, 90})
	f.Add([]byte{255, 255, 255, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var q readyQueue
		var model []readyItem
		for n, op := range ops {
			if op%3 == 0 && len(model) > 0 {
				got := q.pop()
				if got != model[0] {
					t.Fatal("pop out of order")
				}
				model = model[1:]
				continue
			}
			for i := 0; i < int(op%17)+1; i++ {
				if op%2 == 0 { // handles and handle-less host calls share the FIFO
					q.pushHost(uintptr(n+1), uintptr(i))
					model = append(model, readyItem{fn: uintptr(n + 1), arg: uintptr(i)})
					continue
				}
				h := &Handle{}
				q.push(h)
				model = append(model, readyItem{h: h})
			}
		}
		if q.len() != len(model) {
			t.Fatalf("len %d, want %d", q.len(), len(model))
		}
		for _, h := range model {
			if q.pop() != h {
				t.Fatal("drain out of order")
			}
		}
	})
}

// A purge that removes every timer leaves an empty heap that still works.
func TestPurgeOfEveryTimer(t *testing.T) {
	l := newTestLoop(t)
	var hs []*Handle
	for i := 0; i < 200; i++ {
		h, _ := l.CallLater(10, func() {})
		hs = append(hs, h)
	}
	for _, h := range hs {
		h.Cancel()
	}
	l.RunOnce(true)
	if l.timers.len() != 0 {
		t.Fatalf("%d timers left", l.timers.len())
	}
	ran := false
	l.CallLater(0, func() { ran = true })
	l.RunOnce(true)
	l.RunOnce(true)
	if !ran {
		t.Fatal("timer after a full purge did not run")
	}
}

// wait_for with a huge finite timeout is accepted (it never fires) and
// passes the result on, as asyncio's does.
func TestWaitForHugeTimeout(t *testing.T) {
	l := newTestLoop(t)
	f, _ := l.NewFuture()
	out, err := l.WaitFor(f, 1e10)
	if err != nil {
		t.Fatalf("WaitFor(1e10): %v", err)
	}
	f.SetResult(7, nil)
	for i := 0; i < 3 && !out.Done(); i++ {
		l.RunOnce(true)
	}
	if v, err := out.Result(); err != nil || v != 7 {
		t.Fatalf("result %v, %v", v, err)
	}
}

// Deadlines in the distant past keep asyncio's order: -inf before every
// finite one, and call_later(-1e300) ties with call_at(-1e300) (scheduling
// order decides).
func TestDistantPastOrderAsAsyncio(t *testing.T) {
	l := newTestLoop(t)
	var got []string
	l.CallAt(-1e300, func() { got = append(got, "at-1e300") })
	l.CallLater(-1e300, func() { got = append(got, "later-1e300") })
	h, _ := l.CallLater(math.Inf(-1), func() { got = append(got, "later-inf") })
	l.CallAt(-1, func() { got = append(got, "at-1") })
	if !math.IsInf(h.When(), -1) {
		t.Fatalf("When() = %v, want -Inf", h.When())
	}
	l.RunOnce(true)
	want := []string{"later-inf", "at-1e300", "later-1e300", "at-1"}
	if len(got) != len(want) {
		t.Fatalf("ran %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
