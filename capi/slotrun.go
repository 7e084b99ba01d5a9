// SPDX-License-Identifier: MIT

package main

// slotRun is a FIFO of handle-timer slots (timerslab.go) in chunks of
// 4,096: growing never copies (a doubled ring would hold the old and the
// new array at a million timers' peak), and one emptied chunk is kept as a
// spare so a run hovering at a boundary does not allocate each time.
type slotRun struct {
	chunks [][]uint32
	head   int // index of the front in chunks[0]
	n      int
	spare  []uint32
}

const (
	runChunkBits = 12
	runChunkLen  = 1 << runChunkBits
)

func (r *slotRun) at(i int) *uint32 {
	p := r.head + i
	return &r.chunks[p>>runChunkBits][p&(runChunkLen-1)]
}

func (r *slotRun) front() uint32 { return r.chunks[0][r.head] }

func (r *slotRun) back() uint32 { return *r.at(r.n - 1) }

func (r *slotRun) push(slot uint32) {
	if r.head+r.n == len(r.chunks)*runChunkLen {
		c := r.spare
		r.spare = nil
		if c == nil {
			c = make([]uint32, runChunkLen)
		}
		r.chunks = append(r.chunks, c)
	}
	*r.at(r.n) = slot
	r.n++
}

func (r *slotRun) pop() uint32 {
	slot := r.chunks[0][r.head]
	r.head++
	r.n--
	switch {
	case r.n == 0: // start over at the front of the first chunk, keeping it
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
	kept := 0
	for i := 0; i < r.n; i++ {
		if s := *r.at(i); !drop(s) {
			*r.at(kept) = s
			kept++
		}
	}
	r.n = kept
	if kept == 0 {
		r.head = 0
	}
	used := max((r.head+kept+runChunkLen-1)>>runChunkBits, min(len(r.chunks), 1))
	clear(r.chunks[used:])
	r.chunks = r.chunks[:used]
}

// slotHeap is a 4-ary min-heap of slots ordered by their records'
// (deadline, sequence), for handle timers scheduled out of deadline order.
type slotHeap []uint32

func (h *slotHeap) push(slot uint32) {
	*h = append(*h, slot)
	h.up(len(*h) - 1)
}

// pop removes the earliest slot; the heap must not be empty.
func (h *slotHeap) pop() uint32 {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	if last > 1 {
		h.down(0)
	}
	return top
}

func (h slotHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !slotBefore(x, h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (h slotHeap) down(i int) {
	n := len(h)
	x := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if slotBefore(h[k], h[m]) {
				m = k
			}
		}
		if !slotBefore(h[m], x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

// heapify restores heap order after the slice was filtered.
func (h slotHeap) heapify() {
	if len(h) < 2 {
		return
	}
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		h.down(i)
	}
}
