// SPDX-License-Identifier: MIT

package timers

// FIFO is a queue of T in chunks of chunkLen: growing never copies, and
// one emptied chunk is kept as a spare, so a FIFO that hovers at a chunk
// boundary does not allocate each time. A Queue's run is one (of entries);
// capi's run of slots is one of segments. The zero FIFO is empty and ready.
//
// The front and back chunks are kept beside the list of chunks, with the
// back's free room counted down, so that Push and Pop are a store or a
// load at a known chunk and a compare: small enough for the compiler to
// inline, with the work at a chunk boundary out of line (grow, advance).
type FIFO[T any] struct {
	front  *block[T] // chunks[0], nil if there are none
	head   int       // index of the front in front (< chunkLen)
	back   *block[T] // the last of chunks
	free   int       // slots after the last element in back: 0 if there is no room
	n      int
	chunks []*block[T]
	spare  *block[T]
}

// Len is how many elements the FIFO holds.
func (r *FIFO[T]) Len() int { return r.n }

// Front returns the first element; the FIFO must not be empty.
func (r *FIFO[T]) Front() *T { return &r.front[r.head&(chunkLen-1)] }

// Back returns the last element; the FIFO must not be empty.
func (r *FIFO[T]) Back() *T { return &r.back[(chunkLen-1-r.free)&(chunkLen-1)] }

// Push appends e.
func (r *FIFO[T]) Push(e T) {
	if r.free == 0 {
		r.grow()
	}
	r.back[(chunkLen-r.free)&(chunkLen-1)] = e
	r.free--
	r.n++
}

// Room returns the free slots after the last element in its chunk, in
// place (none if that chunk is full, or there is none: Push then adds
// one). A caller fills a prefix of them and Commits it: Push for a batch,
// without a call and a copy per element.
func (r *FIFO[T]) Room() []T {
	if r.free == 0 {
		return nil
	}
	return r.back[chunkLen-r.free:]
}

// Commit appends the first k slots of the last Room, which the caller
// filled; the FIFO has not changed since.
func (r *FIFO[T]) Commit(k int) {
	r.free -= k
	r.n += k
}

// grow appends a chunk (the spare if there is one) for Push.
func (r *FIFO[T]) grow() {
	c := r.spare
	r.spare = nil
	if c == nil {
		c = new(block[T])
	}
	r.chunks = append(r.chunks, c)
	if len(r.chunks) == 1 {
		r.front, r.head = c, 0
	}
	r.back, r.free = c, chunkLen
}

// Pop removes and returns the first element; the FIFO must not be empty.
func (r *FIFO[T]) Pop() T {
	f := &r.front[r.head&(chunkLen-1)]
	e := *f
	var zero T
	*f = zero // a T that points somewhere must not stay reachable here
	r.head++
	if r.n--; r.n == 0 || r.head == chunkLen {
		r.advance()
	}
	return e
}

// FrontChunk returns the elements from the first on that share its chunk,
// in place (none if the FIFO is empty): a prefix of the FIFO.
func (r *FIFO[T]) FrontChunk() []T {
	if r.n == 0 {
		return nil
	}
	return r.front[r.head:min(r.head+r.n, chunkLen)]
}

// Discard removes the first n elements, which must lie in the front chunk
// (n at most len(FrontChunk())).
func (r *FIFO[T]) Discard(n int) {
	clear(r.front[r.head : r.head+n]) // a T that points somewhere must not stay reachable here
	r.head += n
	if r.n -= n; r.n == 0 || r.head == chunkLen {
		r.advance()
	}
}

// advance moves past a spent front chunk, or starts over at the front of
// the first chunk, keeping it, once the FIFO is empty.
//
//go:noinline
func (r *FIFO[T]) advance() {
	if r.n == 0 {
		clear(r.chunks[1:])
		r.chunks = r.chunks[:1]
		r.back, r.free = r.front, chunkLen
		r.head = 0
		r.spare = nil
		return
	}
	r.spare = r.front
	r.chunks[0] = nil
	r.chunks = r.chunks[1:]
	r.front, r.head = r.chunks[0], 0
}

// at is the element at position p, counted from the front of chunks[0].
func (r *FIFO[T]) at(p int) *T { return &r.chunks[p>>chunkBits][p&(chunkLen-1)] }

// RemoveIf drops every element for which drop returns true, calling it
// once per element, keeps the order of the rest and frees the chunks left
// empty.
func (r *FIFO[T]) RemoveIf(drop func(*T) bool) {
	var zero T
	n := r.n
	kept := 0
	for i := 0; i < n; i++ {
		e := r.at(r.head + i)
		if drop(e) {
			continue
		}
		*r.at(r.head + kept) = *e
		kept++
	}
	for i := kept; i < n; i++ {
		*r.at(r.head + i) = zero
	}
	r.n = kept
	if kept == 0 {
		r.head = 0
	}
	end := r.head + kept
	used := max((end+chunkLen-1)>>chunkBits, min(len(r.chunks), 1))
	clear(r.chunks[used:])
	r.chunks = r.chunks[:used]
	if used > 0 {
		r.back, r.free = r.chunks[used-1], used*chunkLen-end
	}
}

// Each calls fn for every element, front first, changing nothing.
func (r *FIFO[T]) Each(fn func(*T)) {
	for i := 0; i < r.n; i++ {
		fn(r.at(r.head + i))
	}
}
