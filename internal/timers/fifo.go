// SPDX-License-Identifier: MIT

package timers

// FIFO is a queue of T in chunks of chunkLen: growing never copies, and
// one emptied chunk is kept as a spare, so a FIFO that hovers at a chunk
// boundary does not allocate each time. A Queue's run is one (of entries);
// capi's run of slots is one of segments. The zero FIFO is empty and ready.
type FIFO[T any] struct {
	chunks []*block[T]
	head   int // index of the front in chunks[0]
	n      int
	spare  *block[T]
}

// Len is how many elements the FIFO holds.
func (r *FIFO[T]) Len() int { return r.n }

// Front returns the first element; the FIFO must not be empty.
func (r *FIFO[T]) Front() *T { return &r.chunks[0][r.head] }

// Back returns the last element; the FIFO must not be empty.
func (r *FIFO[T]) Back() *T {
	p := r.head + r.n - 1
	return &r.chunks[p>>chunkBits][p&(chunkLen-1)]
}

// Push appends e.
func (r *FIFO[T]) Push(e T) {
	p := r.head + r.n
	if p == len(r.chunks)*chunkLen {
		c := r.spare
		r.spare = nil
		if c == nil {
			c = new(block[T])
		}
		r.chunks = append(r.chunks, c)
	}
	r.chunks[p>>chunkBits][p&(chunkLen-1)] = e
	r.n++
}

// Pop removes and returns the first element; the FIFO must not be empty.
func (r *FIFO[T]) Pop() T {
	f := &r.chunks[0][r.head]
	e := *f
	var zero T
	*f = zero // a T that points somewhere must not stay reachable here
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

// RemoveIf drops every element for which drop returns true, calling it
// once per element, keeps the order of the rest and frees the chunks left
// empty.
func (r *FIFO[T]) RemoveIf(drop func(*T) bool) {
	var zero T
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
		r.chunks[p>>chunkBits][p&(chunkLen-1)] = zero
	}
	r.n = kept
	if kept == 0 {
		r.head = 0
	}
	used := max((r.head+kept+chunkLen-1)>>chunkBits, min(len(r.chunks), 1))
	clear(r.chunks[used:])
	r.chunks = r.chunks[:used]
}
