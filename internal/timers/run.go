// SPDX-License-Identifier: MIT

package timers

// Run is a FIFO of entries pushed in Key order (the caller's promise: an
// entry is never before the back one). Timers scheduled with one delay one
// after another (a timeout per request, a retry per peer) arrive so: for
// them a push is one store and a pop one load, in memory order, where a
// heap of a million entries pays a sift-down of ten levels and a cache
// miss or two per level.
//
// Entries live in chunks of chunkLen: growing never copies, and one
// emptied chunk is kept as a spare, so a run that hovers at a chunk
// boundary does not allocate each time. The zero Run is empty and ready.
type Run[V any] struct {
	chunks []*chunk[V]
	head   int // index of the front in chunks[0]
	n      int
	spare  *chunk[V]
}

// Len is how many entries the run holds.
func (r *Run[V]) Len() int { return r.n }

// Front returns the first entry; the run must not be empty.
func (r *Run[V]) Front() *Entry[V] { return &r.chunks[0][r.head] }

// Back returns the last entry; the run must not be empty.
func (r *Run[V]) Back() *Entry[V] {
	p := r.head + r.n - 1
	return &r.chunks[p>>chunkBits][p&(chunkLen-1)]
}

// Push appends e, which must not be before Back.
func (r *Run[V]) Push(e Entry[V]) {
	p := r.head + r.n
	if p == len(r.chunks)*chunkLen {
		c := r.spare
		r.spare = nil
		if c == nil {
			c = new(chunk[V])
		}
		r.chunks = append(r.chunks, c)
	}
	r.chunks[p>>chunkBits][p&(chunkLen-1)] = e
	r.n++
}

// Pop removes and returns the first entry; the run must not be empty.
func (r *Run[V]) Pop() Entry[V] {
	f := &r.chunks[0][r.head]
	e := *f
	*f = Entry[V]{} // a V that points somewhere must not stay reachable here
	r.head++
	r.n--
	switch {
	case r.n == 0: // start over at the front of the first chunk, keeping it
		r.head = 0
		clear(r.chunks[1:])
		r.chunks = r.chunks[:min(len(r.chunks), 1)]
		r.spare = nil
	case r.head == chunkLen:
		r.spare = r.chunks[0]
		r.chunks[0] = nil
		r.chunks = r.chunks[1:]
		r.head = 0
	}
	return e
}

// RemoveIf drops every entry for which drop returns true, calling it once
// per entry, keeps the order of the rest and frees the chunks left empty.
func (r *Run[V]) RemoveIf(drop func(*Entry[V]) bool) {
	n := r.n
	kept := 0
	for i := 0; i < n; i++ {
		p := r.head + i
		e := &r.chunks[p>>chunkBits][p&(chunkLen-1)]
		if drop(e) {
			continue
		}
		q := r.head + kept
		r.chunks[q>>chunkBits][q&(chunkLen-1)] = *e
		kept++
	}
	for i := kept; i < n; i++ {
		p := r.head + i
		r.chunks[p>>chunkBits][p&(chunkLen-1)] = Entry[V]{}
	}
	r.n = kept
	if kept == 0 {
		r.head = 0
	}
	used := max((r.head+kept+chunkLen-1)>>chunkBits, min(len(r.chunks), 1))
	clear(r.chunks[used:])
	r.chunks = r.chunks[:used]
}
