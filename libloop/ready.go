// SPDX-License-Identifier: MIT

package libloop

// readyQueue is a FIFO ring of handles that grows by doubling and never
// shrinks below its high-water mark, so steady-state pushes do not allocate.
type readyQueue struct {
	buf  []*Handle
	head int
	n    int
}

func (q *readyQueue) len() int { return q.n }

func (q *readyQueue) push(h *Handle) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = h
	q.n++
}

func (q *readyQueue) pop() *Handle {
	h := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return h
}

func (q *readyQueue) grow() {
	size := len(q.buf) * 2
	if size == 0 {
		size = 64
	}
	nb := make([]*Handle, size)
	for i := 0; i < q.n; i++ {
		nb[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = nb, 0
}
