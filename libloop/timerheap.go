// SPDX-License-Identifier: MIT

package libloop

// timerHeap is a 4-ary min-heap of timer handles ordered by deadline, then
// by scheduling order, so equal deadlines run first-scheduled first. A
// 4-ary heap is half as deep as a binary one, so a pop follows half as many
// handle pointers (with a million timers those cache misses were most of
// the time). Cancelled timers stay in the heap, flagged on their handle,
// until they reach the top or a purge (asyncio's rule), so no position is
// tracked. (Entries carrying the deadline by value were measured too: the
// same CPU for a million timers, 20 MiB more RSS.)
type timerHeap []*Handle

func timerLess(a, b *Handle) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (t *timerHeap) push(h *Handle) {
	h.inHeap = true
	*t = append(*t, h)
	t.up(len(*t) - 1)
}

// pop removes and returns the earliest timer's handle.
func (t *timerHeap) pop() *Handle {
	s := *t
	h := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = nil
	*t = s[:last]
	if last > 1 {
		t.down(0)
	}
	h.inHeap = false
	return h
}

func (t timerHeap) up(i int) {
	h := t[i]
	for i > 0 {
		p := (i - 1) / 4
		if !timerLess(h, t[p]) {
			break
		}
		t[i] = t[p]
		i = p
	}
	t[i] = h
}

func (t timerHeap) down(i int) {
	n := len(t)
	h := t[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c // the earliest of up to four children
		for k := c + 1; k < c+4 && k < n; k++ {
			if timerLess(t[k], t[m]) {
				m = k
			}
		}
		if !timerLess(t[m], h) {
			break
		}
		t[i] = t[m]
		i = m
	}
	t[i] = h
}

// heapify restores heap order after the slice was rebuilt.
func (t timerHeap) heapify() {
	if len(t) < 2 {
		return
	}
	for i := (len(t) - 2) / 4; i >= 0; i-- {
		t.down(i)
	}
}
