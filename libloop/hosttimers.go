// SPDX-License-Identifier: MIT

package libloop

// hostTimer is a timer for a host callback that nobody holds a handle to
// (ll_call_later with out == NULL): no Handle record, just the deadline, the
// scheduling order and the call, by value. A million of them are one
// pointer-free array (32 MB) that the GC never scans, and a pop compares
// neighbouring entries instead of following a pointer per child. Due, it
// joins the ready queue by value too (readyItem).
type hostTimer struct {
	when int64
	seq  uint64
	fn   uintptr
	arg  uintptr
}

// hostTimerHeap is a 4-ary min-heap of hostTimers, ordered as timerHeap
// (deadline, then scheduling order), stored in fixed chunks of 4,096
// entries: growing never copies the heap, so the peak memory of a million
// timers is their 32 MB, not that plus a doubled array being copied.
// Entry i lives at position i+3 (libev's layout), so the four children of
// any entry (positions 4(i+1) .. 4(i+1)+3) are one aligned group of 128
// bytes that never straddles a chunk: a pop reads one group per level.
type hostTimerHeap struct {
	chunks [][]hostTimer
	n      int
}

const (
	htChunkBits = 12
	htChunkLen  = 1 << htChunkBits
	htOffset    = 3 // position of entry 0
)

func (t *hostTimerHeap) len() int { return t.n }

func (t *hostTimerHeap) at(i int) *hostTimer {
	p := i + htOffset
	return &t.chunks[p>>htChunkBits][p&(htChunkLen-1)]
}

func (a *hostTimer) before(b *hostTimer) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

func (t *hostTimerHeap) push(e hostTimer) {
	if t.n+htOffset >= len(t.chunks)*htChunkLen {
		t.chunks = append(t.chunks, make([]hostTimer, htChunkLen))
	}
	i := t.n
	t.n++
	for i > 0 {
		p := (i - 1) / 4
		pe := t.at(p)
		if !e.before(pe) {
			break
		}
		*t.at(i) = *pe
		i = p
	}
	*t.at(i) = e
}

// pop removes and returns the earliest entry. A chunk emptied by pops is
// freed once a whole spare one is behind it (no churn at a boundary).
func (t *hostTimerHeap) pop() hostTimer {
	top := *t.at(0)
	t.n--
	last := t.n
	e := *t.at(last)
	if len(t.chunks)*htChunkLen-(last+htOffset) > 2*htChunkLen {
		t.chunks[len(t.chunks)-1] = nil
		t.chunks = t.chunks[:len(t.chunks)-1]
	}
	if last == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1 // first child; the group starts at position 4(i+1)
		if c >= last {
			break
		}
		p := c + htOffset
		g := t.chunks[p>>htChunkBits][p&(htChunkLen-1):]
		k := min(4, last-c)
		g = g[:k:k]
		m := 0
		for j := 1; j < len(g); j++ {
			if g[j].before(&g[m]) {
				m = j
			}
		}
		if !g[m].before(&e) {
			break
		}
		*t.at(i) = g[m]
		i = c + m
	}
	*t.at(i) = e
	return top
}

// pushHostTimer queues a handle-less host timer at when (loop ns).
func (l *Loop) pushHostTimer(when int64, fn, arg uintptr) {
	l.changed()
	l.seq++ // the same order as handles: equal deadlines run as scheduled
	l.hostTimers.push(hostTimer{when: when, seq: l.seq, fn: fn, arg: arg})
}

// nextDeadline returns the earliest deadline of every timer queue.
func (l *Loop) nextDeadline() (int64, bool) {
	which, when := l.earliestTimer()
	return when, which != 0
}

// queueDueTimers moves every timer due before end to the ready queue, from
// every timer queue merged in (deadline, scheduling order).
func (l *Loop) queueDueTimers(end int64) {
	for {
		which, when := l.earliestTimer()
		if which == 0 || when >= end {
			return
		}
		switch which {
		case 1:
			h := l.timers.pop()
			if h.cancelled {
				l.timerCancelled--
			}
			l.ready.push(h)
		case 2:
			e := l.hostTimers.pop()
			l.ready.pushHost(e.fn, e.arg)
		default: // a run of the source's, up to the next of the loop's own
			own, w, seq := l.earliestOwn()
			l.batches.q = append(l.batches.q, l.timerSource.Take(end, own != 0, w, seq))
			l.ready.pushBatchMark()
		}
	}
}
