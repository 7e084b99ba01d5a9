// SPDX-License-Identifier: MIT

package timers

// Queue is a timer queue: a run (a FIFO) takes every timer not before the
// last one it holds, a Heap takes the rest, and the earlier of the two
// fronts pops. The order is exactly a heap's alone: the run's entries are
// in Key order by construction. Timers scheduled with one delay one after
// another (a timeout per request, a retry per peer) all go to the run: a
// push is one store and a pop one load, in memory order, where a heap of a
// million entries pays a sift-down of ten levels and a cache miss or two
// per level. The zero Queue is empty and ready.
type Queue[V any] struct {
	run  FIFO[Entry[V]]
	heap Heap[V]
}

// Len is how many timers the queue holds.
func (q *Queue[V]) Len() int { return q.run.n + q.heap.n }

// Push queues e.
func (q *Queue[V]) Push(e Entry[V]) {
	if q.run.n == 0 || !e.Before(q.run.Back().Key) {
		q.run.Push(e)
		return
	}
	q.heap.Push(e)
}

// Last returns the key of the run's last timer, or ok false if the run is
// empty: a timer not before it may go to the run's Room.
func (q *Queue[V]) Last() (k Key, ok bool) {
	if q.run.n == 0 {
		return k, false
	}
	return q.run.Back().Key, true
}

// Room returns free slots at the back of the run, in place (FIFO.Room):
// a caller may write there timers in Key order, none before Last, and
// Commit them. A batch of in-order timers then costs a store each, where
// a Push each is a call and a copy (~25 instructions a timer more).
func (q *Queue[V]) Room() []Entry[V] { return q.run.Room() }

// Commit queues the first k timers written to the last Room; the queue
// has not changed since.
func (q *Queue[V]) Commit(k int) { q.run.Commit(k) }

// Peek returns the earliest timer, valid until the queue next changes; the
// queue must not be empty.
func (q *Queue[V]) Peek() *Entry[V] {
	switch {
	case q.heap.n == 0:
		return q.run.Front()
	case q.run.n == 0:
		return q.heap.Top()
	}
	if r, h := q.run.Front(), q.heap.Top(); r.Before(h.Key) {
		return r
	}
	return q.heap.Top()
}

// Pop removes and returns the earliest timer; the queue must not be empty.
func (q *Queue[V]) Pop() Entry[V] {
	if q.heap.n == 0 || q.run.n > 0 && q.run.Front().Before(q.heap.Top().Key) {
		return q.run.Pop()
	}
	return q.heap.Pop()
}

// PopBefore removes and returns the earliest timer if it comes before
// bound (ok true), or leaves the queue as it is (ok false): Peek, a test
// and Pop with one comparison of the two fronts, for a caller that drains
// every timer before a bound.
func (q *Queue[V]) PopBefore(bound Key) (e Entry[V], ok bool) {
	inRun := q.heap.n == 0
	switch {
	case inRun:
		if q.run.n == 0 {
			return e, false
		}
	case q.run.n > 0:
		inRun = q.run.Front().Before(q.heap.Top().Key)
	}
	if inRun {
		if !q.run.Front().Before(bound) {
			return e, false
		}
		return q.run.Pop(), true
	}
	if !q.heap.Top().Before(bound) {
		return e, false
	}
	return q.heap.Pop(), true
}

// RunBefore returns the earliest timers, in order, for as long as each
// comes before bound and before the heap's front: a prefix of the run's
// front chunk, in place, found by a binary search (the run is in Key
// order). It is empty if the earliest timer is the heap's or not before
// bound. They stay queued until Discard: a caller that drains the queue
// takes in-order timers a run at a time, not one Pop each.
func (q *Queue[V]) RunBefore(bound Key) []Entry[V] {
	if q.heap.n > 0 && q.heap.Top().Before(bound) {
		bound = q.heap.Top().Key
	}
	s := q.run.FrontChunk()
	lo, hi := 0, len(s) // s[:lo] before bound, s[hi:] not
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].Before(bound) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return s[:lo]
}

// Discard removes the first n timers of the last RunBefore, which the
// queue has not changed since.
func (q *Queue[V]) Discard(n int) { q.run.Discard(n) }

// RemoveIf drops every timer for which drop returns true (a purge),
// calling it once per timer, and keeps the order of the rest.
func (q *Queue[V]) RemoveIf(drop func(*Entry[V]) bool) {
	q.heap.RemoveIf(drop)
	q.run.RemoveIf(drop)
}

// Each calls fn for every timer (the run's, then the heap's), changing
// nothing: for a walk of the queue, not for its order.
func (q *Queue[V]) Each(fn func(*Entry[V])) {
	q.run.Each(fn)
	q.heap.Each(fn)
}
