// SPDX-License-Identifier: MIT

package libloop

// hostTimerQueue holds the handle-less timers: a FIFO for the ones
// scheduled in deadline order, a heap for the rest.
//
// Timers scheduled with one delay, one after the other (a timeout per
// request, a retry per peer, a benchmark's i-th timer at i µs), arrive with non-decreasing
// deadlines. Such a timer goes to the back of the run, a chunked FIFO: the
// push is one store and the pop one load, in memory order, where a heap of
// a million entries pays a sift-down of ten levels and a cache miss or two
// per level. Any timer due before the run's last goes to the heap. The
// earliest timer is the smaller of the two fronts by (deadline, scheduling
// order), so the order is exactly the heap's alone: entries of the run are
// in (deadline, seq) order because seq only grows.
type hostTimerQueue struct {
	run  hostTimerRun
	heap hostTimerHeap
}

func (q *hostTimerQueue) len() int { return q.run.n + q.heap.n }

func (q *hostTimerQueue) push(e hostTimer) {
	if q.run.n == 0 || e.when >= q.run.back().when {
		q.run.push(e)
		return
	}
	q.heap.push(e)
}

// peek returns the earliest timer; the queue must not be empty.
func (q *hostTimerQueue) peek() *hostTimer {
	if q.heap.n == 0 {
		return q.run.front()
	}
	if q.run.n == 0 {
		return q.heap.at(0)
	}
	if r, h := q.run.front(), q.heap.at(0); r.before(h) {
		return r
	}
	return q.heap.at(0)
}

// pop removes and returns the earliest timer; the queue must not be empty.
func (q *hostTimerQueue) pop() hostTimer {
	if q.heap.n == 0 || q.run.n > 0 && q.run.front().before(q.heap.at(0)) {
		return q.run.pop()
	}
	return q.heap.pop()
}

// hostTimerRun is a FIFO of hostTimers in chunks of htChunkLen entries:
// growing never copies, and one emptied chunk is kept as a spare so a run
// that hovers at a chunk boundary does not allocate each time.
type hostTimerRun struct {
	chunks [][]hostTimer
	head   int // index of the front in chunks[0]
	n      int
	spare  []hostTimer
}

func (r *hostTimerRun) front() *hostTimer { return &r.chunks[0][r.head] }

func (r *hostTimerRun) back() *hostTimer {
	p := r.head + r.n - 1
	return &r.chunks[p>>htChunkBits][p&(htChunkLen-1)]
}

func (r *hostTimerRun) push(e hostTimer) {
	p := r.head + r.n
	if p == len(r.chunks)*htChunkLen {
		c := r.spare
		r.spare = nil
		if c == nil {
			c = make([]hostTimer, htChunkLen)
		}
		r.chunks = append(r.chunks, c)
	}
	r.chunks[p>>htChunkBits][p&(htChunkLen-1)] = e
	r.n++
}

func (r *hostTimerRun) pop() hostTimer {
	e := r.chunks[0][r.head]
	r.head++
	r.n--
	if r.head == htChunkLen || r.n == 0 {
		// The first chunk is spent (or the run is empty: start over at
		// the front of it, keeping it).
		if r.n == 0 {
			r.head = 0
			for i := 1; i < len(r.chunks); i++ {
				r.chunks[i] = nil
			}
			r.chunks = r.chunks[:min(len(r.chunks), 1)]
			r.spare = nil
			return e
		}
		r.spare = r.chunks[0]
		r.chunks[0] = nil
		r.chunks = r.chunks[1:]
		r.head = 0
	}
	return e
}
