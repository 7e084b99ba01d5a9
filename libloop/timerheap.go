package libloop

// timerHeap is a binary min-heap of timer handles ordered by deadline, then
// by scheduling order, so equal deadlines run first-scheduled first. Each
// handle keeps its index in pos.
type timerHeap []*Handle

func timerLess(a, b *Handle) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (t *timerHeap) push(h *Handle) {
	h.pos = int32(len(*t))
	h.inHeap = true
	*t = append(*t, h)
	t.up(len(*t) - 1)
}

func (t *timerHeap) pop() *Handle {
	s := *t
	h := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[0].pos = 0
	s[last] = nil
	*t = s[:last]
	if last > 0 {
		t.down(0)
	}
	h.inHeap = false
	h.pos = -1
	return h
}

func (t timerHeap) up(i int) {
	h := t[i]
	for i > 0 {
		p := (i - 1) / 2
		if !timerLess(h, t[p]) {
			break
		}
		t[i] = t[p]
		t[i].pos = int32(i)
		i = p
	}
	t[i] = h
	h.pos = int32(i)
}

func (t timerHeap) down(i int) {
	n := len(t)
	h := t[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && timerLess(t[c+1], t[c]) {
			c++
		}
		if !timerLess(t[c], h) {
			break
		}
		t[i] = t[c]
		t[i].pos = int32(i)
		i = c
	}
	t[i] = h
	h.pos = int32(i)
}

// heapify restores heap order after the slice was rebuilt.
func (t timerHeap) heapify() {
	for i := range t {
		t[i].pos = int32(i)
	}
	for i := len(t)/2 - 1; i >= 0; i-- {
		t.down(i)
	}
}
