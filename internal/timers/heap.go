// SPDX-License-Identifier: MIT

package timers

// Heap is a 4-ary min-heap of entries in Key order. A 4-ary heap is half
// as deep as a binary one, and its entries carry their keys, so a pop
// compares four neighbouring entries per level instead of following a
// pointer per child. Against the heap of *Handle it replaced (keys read
// through the pointer), a push and a pop take 0.9 of the time with 1,024
// timers queued and 0.5 with 131,072; the cost is 16 bytes an entry.
//
// Entries live in fixed chunks of chunkLen: growing never copies the heap,
// so the peak memory of a million timers is theirs alone, not that plus a
// doubled array being copied. Entry i lives at position i+offset (libev's
// layout), so the four children of entry i (positions 4(i+1) ..
// 4(i+1)+3) are one aligned group that never straddles a chunk. The zero
// Heap is empty and ready.
type Heap[V any] struct {
	chunks []*block[Entry[V]]
	n      int
}

// block is a chunk of a Heap or a FIFO: a fixed array, so that indexing one
// with a masked position needs no bounds check. With that, and a sift that
// keeps a pointer to its hole instead of looking its chunk up again, a heap
// of 1,024 timers costs what one flat slice does (a slice of slices cost
// 18% more).
type block[T any] [chunkLen]T

const (
	chunkBits = 12
	chunkLen  = 1 << chunkBits
	offset    = 3 // position of entry 0
)

// Len is how many entries the heap holds.
func (h *Heap[V]) Len() int { return h.n }

func (h *Heap[V]) at(i int) *Entry[V] {
	p := i + offset
	return &h.chunks[p>>chunkBits][p&(chunkLen-1)]
}

// Top returns the earliest entry, valid until the heap next changes; the
// heap must not be empty.
func (h *Heap[V]) Top() *Entry[V] { return &h.chunks[0][offset] }

// Push adds e.
func (h *Heap[V]) Push(e Entry[V]) {
	if h.n+offset >= len(h.chunks)*chunkLen {
		h.chunks = append(h.chunks, new(block[Entry[V]]))
	}
	i := h.n
	h.n++
	hole := h.at(i) // moves up with i: one chunk lookup per level, not two
	for i > 0 {
		p := (i - 1) / 4
		pe := h.at(p)
		if !e.Before(pe.Key) {
			break
		}
		*hole = *pe
		hole, i = pe, p
	}
	*hole = e
}

// Pop removes and returns the earliest entry; the heap must not be empty.
func (h *Heap[V]) Pop() Entry[V] {
	top := *h.at(0)
	h.n--
	last := h.at(h.n)
	e := *last
	*last = Entry[V]{} // a V that points somewhere must not stay reachable here
	h.trim()
	if h.n > 0 {
		h.down(0, e)
	}
	return top
}

// down places e at entry i or below it, moving the earlier children up.
func (h *Heap[V]) down(i int, e Entry[V]) {
	n := h.n
	hole := h.at(i) // moves down with i
	for {
		c := 4*i + 1 // first child; its group starts at position 4(i+1)
		if c >= n {
			break
		}
		p := c + offset
		ch := h.chunks[p>>chunkBits]
		var m int
		var g []Entry[V]
		if c+4 <= n {
			// A full group: two pairs, then their winners. The first two
			// comparisons are independent (a push and a pop of 1,024
			// timers: 15% less time than comparing in a row).
			q := (*[4]Entry[V])(ch[p&(chunkLen-1):])
			g = q[:]
			a, b := 0, 2
			if q[1].Before(q[0].Key) {
				a = 1
			}
			if q[3].Before(q[2].Key) {
				b = 3
			}
			m = a
			if q[b].Before(q[a].Key) {
				m = b
			}
		} else {
			g = ch[p&(chunkLen-1) : p&(chunkLen-1)+n-c]
			for j := 1; j < len(g); j++ {
				if g[j].Before(g[m].Key) {
					m = j
				}
			}
		}
		if !g[m].Before(e.Key) {
			break
		}
		*hole = g[m]
		hole, i = &g[m], c+m
	}
	*hole = e
}

// trim frees the last chunk once a whole spare one lies before it, so a
// heap that shrinks gives its memory back without churning at a chunk
// boundary.
func (h *Heap[V]) trim() {
	for len(h.chunks)*chunkLen-(h.n+offset) > 2*chunkLen {
		h.chunks[len(h.chunks)-1] = nil
		h.chunks = h.chunks[:len(h.chunks)-1]
	}
}

// RemoveIf drops every entry for which drop returns true (a purge of
// cancelled timers), calling it once per entry, and restores heap order.
func (h *Heap[V]) RemoveIf(drop func(*Entry[V]) bool) {
	kept := 0
	for i := 0; i < h.n; i++ {
		e := h.at(i)
		if drop(e) {
			continue
		}
		if kept != i {
			*h.at(kept) = *e
		}
		kept++
	}
	for i := kept; i < h.n; i++ {
		*h.at(i) = Entry[V]{}
	}
	h.n = kept
	h.trim()
	if h.n > 1 {
		for i := (h.n - 2) / 4; i >= 0; i-- {
			h.down(i, *h.at(i))
		}
	}
}

// Each calls fn for every entry, in no particular order, changing nothing.
func (h *Heap[V]) Each(fn func(*Entry[V])) {
	for i := 0; i < h.n; i++ {
		fn(h.at(i))
	}
}
