// SPDX-License-Identifier: MIT

package libloop

// readyItem is one entry of the ready queue: a handle, or (h == nil) a host
// callback nobody holds a handle to, kept by value: its function and
// argument, called with the loop's Tag as its id (HostPlain). A million
// ll_call_soon(..., NULL) then cost no Handle record each. An entry with
// neither (fn == 0) is a mark: the next HostBatch, or one of the loop's own
// callbacks (pushMark).
type readyItem struct {
	h   *Handle
	fn  uintptr
	arg uintptr
}

// readyQueue is a FIFO ring of readyItems that grows by doubling and never
// shrinks below its high-water mark, so steady-state pushes do not allocate.
type readyQueue struct {
	buf  []readyItem
	head int
	// The length is view.ReadyLen: the loop's ChainView (chain.go) is kept
	// here, so that the ring counts straight into the word a chain runner
	// reads, at no cost over a field of its own.
	view ChainView
}

func (q *readyQueue) len() int { return int(q.view.ReadyLen) }

func (q *readyQueue) push(h *Handle) {
	n := int(q.view.ReadyLen)
	if n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+n)&(len(q.buf)-1)] = readyItem{h: h}
	q.view.ReadyLen++
}

// pushHost queues a host call with no handle. It leaves the slot's h as it
// is, nil: a free slot's h is nil (pop clears the one it takes, grow's
// slots are new), and not storing the pointer spares a write barrier
// check, and the barrier itself while the GC marks.
func (q *readyQueue) pushHost(fn, arg uintptr) {
	n := int(q.view.ReadyLen)
	if n == len(q.buf) {
		q.grow()
	}
	it := &q.buf[(q.head+n)&(len(q.buf)-1)]
	it.fn, it.arg = fn, arg
	q.view.ReadyLen++
}

// pop takes the head entry. A free slot needs only a nil h (pushHost
// writes fn and arg, push all three): it is cleared only if it holds a
// handle, so a by-value call costs no barrier here either.
func (q *readyQueue) pop() readyItem {
	it := q.buf[q.head]
	if it.h != nil {
		q.buf[q.head].h = nil
	}
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.view.ReadyLen--
	return it
}

// Marks: entries with neither a handle nor a function, whose arg says what
// they stand for.
const (
	markBatch uintptr = iota // the next HostBatch
	markIO                   // the loop's runIO
	markFlush                // the loop's flushEvents
)

// pushBatchMark queues the place of a HostBatch.
func (q *readyQueue) pushBatchMark() { q.pushHost(0, markBatch) }

// pushMark queues a mark (fn 0: no host call has a zero address).
func (q *readyQueue) pushMark(kind uintptr) { q.pushHost(0, kind) }

// isMark reports whether it is a mark rather than a callback.
func (it *readyItem) isMark() bool { return it.h == nil && it.fn == 0 }

// peek returns the head entry without removing it (q.len() > 0).
func (q *readyQueue) peek() *readyItem { return &q.buf[q.head] }

// grow doubles the ring, which is full.
func (q *readyQueue) grow() {
	size := len(q.buf) * 2
	if size == 0 {
		size = 64
	}
	nb := make([]readyItem, size)
	// An element at a time, not two copy() calls: making nb often starts
	// the GC's marking, and then copy's bulk barrier costs more than a
	// barrier a store (callgrind, a million due timers filling the ring:
	// ~9 instructions an entry more in all, though fewer in this loop).
	for i := 0; i < q.len(); i++ {
		nb[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = nb, 0
}
