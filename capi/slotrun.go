// SPDX-License-Identifier: MIT

package main

// slotRun is a FIFO of handle-timer slots (timerslab.go) kept as
// segments of consecutive slots: the slab hands out slots in order (fresh
// chunks, then freed slots oldest first), so timers scheduled one after
// another mostly hold consecutive slots, and a million of them take a few
// segments instead of 4 MB. Segments live in chunks of 4,096: growing
// never copies, and one emptied chunk is kept as a spare.
type slotRun struct {
	chunks [][]slotSeg
	head   int // index of the front segment in chunks[0]
	nseg   int
	n      int // slots
	spare  []slotSeg
}

// slotSeg is the slots first .. first+n-1, in that order.
type slotSeg struct{ first, n uint32 }

const (
	runChunkBits = 12
	runChunkLen  = 1 << runChunkBits
)

func (r *slotRun) seg(i int) *slotSeg {
	p := r.head + i
	return &r.chunks[p>>runChunkBits][p&(runChunkLen-1)]
}

func (r *slotRun) front() uint32 { return r.chunks[0][r.head].first }

func (r *slotRun) back() uint32 {
	g := r.seg(r.nseg - 1)
	return g.first + g.n - 1
}

func (r *slotRun) push(slot uint32) {
	r.n++
	if r.nseg > 0 {
		if g := r.seg(r.nseg - 1); g.first+g.n == slot {
			g.n++
			return
		}
	}
	if r.head+r.nseg == len(r.chunks)*runChunkLen {
		c := r.spare
		r.spare = nil
		if c == nil {
			c = make([]slotSeg, runChunkLen)
		}
		r.chunks = append(r.chunks, c)
	}
	*r.seg(r.nseg) = slotSeg{slot, 1}
	r.nseg++
}

func (r *slotRun) pop() uint32 {
	g := &r.chunks[0][r.head]
	slot := g.first
	r.n--
	if g.n > 1 {
		g.first++
		g.n--
		return slot
	}
	r.head++
	r.nseg--
	switch {
	case r.nseg == 0: // start over at the front of the first chunk, keeping it
		r.head = 0
		clear(r.chunks[1:])
		r.chunks = r.chunks[:min(len(r.chunks), 1)]
	case r.head == runChunkLen:
		r.spare = r.chunks[0]
		r.chunks[0] = nil
		r.chunks = r.chunks[1:]
		r.head = 0
	}
	return slot
}

// removeIf drops the slots for which drop is true, keeping the order of
// the rest, and frees the chunks left empty.
func (r *slotRun) removeIf(drop func(uint32) bool) {
	var kept slotRun
	kept.spare = r.spare
	for i := 0; i < r.nseg; i++ {
		g := *r.seg(i)
		for k := uint32(0); k < g.n; k++ {
			if !drop(g.first + k) {
				kept.push(g.first + k)
			}
		}
	}
	*r = kept
}
