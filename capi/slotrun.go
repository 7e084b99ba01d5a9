// SPDX-License-Identifier: MIT

package main

import "github.com/libloop/libloop/internal/timers"

// slotRun is a FIFO of handle-timer slots (timerslab.go) kept as
// segments of consecutive slots: the slab hands out slots in order (fresh
// chunks, then freed slots oldest first), so timers scheduled one after
// another mostly hold consecutive slots, and a million of them take a few
// segments instead of 4 MB. The segments are a timers.FIFO.
type slotRun struct {
	segs timers.FIFO[slotSeg]
	n    int // slots
}

// slotSeg is the slots first .. first+n-1, in that order.
type slotSeg struct{ first, n uint32 }

func (r *slotRun) front() uint32 { return r.segs.Front().first }

func (r *slotRun) back() uint32 {
	g := r.segs.Back()
	return g.first + g.n - 1
}

func (r *slotRun) push(slot uint32) {
	r.n++
	if r.segs.Len() > 0 {
		if g := r.segs.Back(); g.first+g.n == slot {
			g.n++
			return
		}
	}
	r.segs.Push(slotSeg{slot, 1})
}

func (r *slotRun) pop() uint32 {
	g := r.segs.Front()
	slot := g.first
	r.n--
	if g.n > 1 {
		g.first++
		g.n--
		return slot
	}
	r.segs.Pop()
	return slot
}

// removeIf drops the slots for which drop is true, keeping the order of
// the rest, and frees the chunks left empty.
func (r *slotRun) removeIf(drop func(uint32) bool) {
	old := r.segs
	*r = slotRun{}
	for old.Len() > 0 {
		g := old.Pop()
		for k := uint32(0); k < g.n; k++ {
			if !drop(g.first + k) {
				r.push(g.first + k)
			}
		}
	}
}

// each calls fn for every slot, front first, changing nothing.
func (r *slotRun) each(fn func(uint32)) {
	r.segs.Each(func(g *slotSeg) {
		for k := uint32(0); k < g.n; k++ {
			fn(g.first + k)
		}
	})
}
