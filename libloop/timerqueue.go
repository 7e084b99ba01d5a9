// SPDX-License-Identifier: MIT

package libloop

// timerQueue holds the timers that have a Handle: as hostTimerQueue, a
// FIFO run takes every timer not due before the last one queued (a delay
// scheduled again and again: an O(1) push and pop in memory order, no
// pointer chase down a heap), the heap takes the rest, and the earlier of
// the two fronts pops, so the order is the heap's alone. Cancelled timers
// stay where they are, flagged, until they reach the front or a purge
// (asyncio's rule).
type timerQueue struct {
	run  handleRun
	heap timerHeap
}

func (q *timerQueue) len() int { return q.run.n + len(q.heap) }

func (q *timerQueue) push(h *Handle) {
	if q.run.n == 0 || !timerLess(h, q.run.back()) {
		h.inHeap = true
		q.run.push(h)
		return
	}
	q.heap.push(h)
}

// peek returns the earliest timer; the queue must not be empty.
func (q *timerQueue) peek() *Handle {
	switch {
	case len(q.heap) == 0:
		return q.run.front()
	case q.run.n == 0:
		return q.heap[0]
	case timerLess(q.run.front(), q.heap[0]):
		return q.run.front()
	}
	return q.heap[0]
}

// pop removes and returns the earliest timer; the queue must not be empty.
func (q *timerQueue) pop() *Handle {
	if len(q.heap) == 0 || q.run.n > 0 && timerLess(q.run.front(), q.heap[0]) {
		h := q.run.pop()
		h.inHeap = false
		return h
	}
	return q.heap.pop()
}

// removeIf drops every timer for which drop is true (a purge), calling
// drop once per timer, and keeps the order of the rest.
func (q *timerQueue) removeIf(drop func(*Handle) bool) {
	kept := q.heap[:0]
	for _, h := range q.heap {
		if !drop(h) {
			kept = append(kept, h)
		}
	}
	clear(q.heap[len(kept):])
	q.heap = kept
	q.heap.heapify()
	q.run.removeIf(drop)
}

// handleRun is a FIFO of timer handles in chunks of htChunkLen, in
// (deadline, seq) order; an emptied chunk is kept as a spare.
type handleRun struct {
	chunks [][]*Handle
	head   int
	n      int
	spare  []*Handle
}

func (r *handleRun) front() *Handle { return r.chunks[0][r.head] }

func (r *handleRun) back() *Handle {
	p := r.head + r.n - 1
	return r.chunks[p>>htChunkBits][p&(htChunkLen-1)]
}

func (r *handleRun) push(h *Handle) {
	p := r.head + r.n
	if p == len(r.chunks)*htChunkLen {
		c := r.spare
		r.spare = nil
		if c == nil {
			c = make([]*Handle, htChunkLen)
		}
		r.chunks = append(r.chunks, c)
	}
	r.chunks[p>>htChunkBits][p&(htChunkLen-1)] = h
	r.n++
}

func (r *handleRun) pop() *Handle {
	h := r.chunks[0][r.head]
	r.chunks[0][r.head] = nil // the record may be recycled: drop the pointer
	r.head++
	r.n--
	switch {
	case r.n == 0: // start over at the front of the first chunk, keeping it
		r.head = 0
		clear(r.chunks[1:])
		r.chunks = r.chunks[:min(len(r.chunks), 1)]
		r.spare = nil
	case r.head == htChunkLen:
		r.spare = r.chunks[0]
		r.chunks[0] = nil
		r.chunks = r.chunks[1:]
		r.head = 0
	}
	return h
}

// removeIf compacts the run in place, keeping the order of what stays.
func (r *handleRun) removeIf(drop func(*Handle) bool) {
	n := r.n
	kept := 0
	for i := 0; i < n; i++ {
		p := r.head + i
		h := r.chunks[p>>htChunkBits][p&(htChunkLen-1)]
		if drop(h) {
			continue
		}
		q := r.head + kept
		r.chunks[q>>htChunkBits][q&(htChunkLen-1)] = h
		kept++
	}
	for i := kept; i < n; i++ {
		p := r.head + i
		r.chunks[p>>htChunkBits][p&(htChunkLen-1)] = nil
	}
	r.n = kept
	if used := (r.head + kept + htChunkLen - 1) >> htChunkBits; used < len(r.chunks) {
		clear(r.chunks[max(used, 1):])
		r.chunks = r.chunks[:max(used, min(len(r.chunks), 1))]
	}
	if kept == 0 {
		r.head = 0
	}
}
