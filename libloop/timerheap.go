package libloop

// timerHeap is a 4-ary min-heap of timers ordered by deadline, then by
// scheduling order, so equal deadlines run first-scheduled first. Entries
// are values that carry the keys: sifting compares neighbouring memory and
// never follows a handle pointer (with a million timers, following them
// was most of the time), and a 4-ary heap is half as deep as a binary one.
// Cancelled timers stay in the heap, flagged on their handle, until they
// reach the top or a purge (asyncio's rule), so no position is tracked.
type timerHeap []timerEntry

type timerEntry struct {
	when int64
	seq  uint64
	h    *Handle
}

func (a *timerEntry) less(b *timerEntry) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (t *timerHeap) push(h *Handle) {
	h.inHeap = true
	*t = append(*t, timerEntry{when: h.when, seq: h.seq, h: h})
	t.up(len(*t) - 1)
}

// pop removes and returns the earliest timer's handle.
func (t *timerHeap) pop() *Handle {
	s := *t
	h := s[0].h
	last := len(s) - 1
	s[0] = s[last]
	s[last] = timerEntry{}
	*t = s[:last]
	if last > 1 {
		t.down(0)
	}
	h.inHeap = false
	return h
}

func (t timerHeap) up(i int) {
	e := t[i]
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(&t[p]) {
			break
		}
		t[i] = t[p]
		i = p
	}
	t[i] = e
}

func (t timerHeap) down(i int) {
	n := len(t)
	e := t[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c // the earliest of up to four children
		for k := c + 1; k < c+4 && k < n; k++ {
			if t[k].less(&t[m]) {
				m = k
			}
		}
		if !t[m].less(&e) {
			break
		}
		t[i] = t[m]
		i = m
	}
	t[i] = e
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
