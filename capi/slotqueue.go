// SPDX-License-Identifier: MIT

package main

// slotQueue is the id table's FIFO of free slot indexes: a growable ring, so
// the slot freed longest ago is reused first and no slot is handed back at
// once (see idTable.reserve for why).
type slotQueue struct {
	buf  []uint32 // len(buf) is 0 or a power of two
	head int      // index of the oldest entry
	n    int      // entries queued
}

// len reports how many slots are queued.
func (q *slotQueue) len() int { return q.n }

// push queues slot i as the newest entry.
func (q *slotQueue) push(i uint32) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = i
	q.n++
}

// pop dequeues the oldest entry; the queue must not be empty.
func (q *slotQueue) pop() uint32 {
	i := q.buf[q.head]
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return i
}

// grow doubles the ring, unrolling it so the oldest entry comes first.
func (q *slotQueue) grow() {
	size := 2 * len(q.buf)
	if size == 0 {
		size = 64
	}
	buf := make([]uint32, size)
	for k := 0; k < q.n; k++ {
		buf[k] = q.buf[(q.head+k)&(len(q.buf)-1)]
	}
	q.buf, q.head = buf, 0
}
