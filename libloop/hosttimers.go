// SPDX-License-Identifier: MIT

package libloop

import "github.com/libloop/libloop/internal/timers"

// hostCall is what a timer nobody holds a handle to carries (ll_call_later
// with out == NULL): no Handle record, just the call, by value beside its
// key. A million of them are one pointer-free queue (32 MB) that the GC
// never scans. Due, it joins the ready queue by value too (readyItem).
type hostCall struct{ fn, arg uintptr }

// pushHostTimer queues a handle-less host timer at when (loop ns); the
// caller (CallAtHost) has checked the loop and the call.
func (l *Loop) pushHostTimer(when int64, fn, arg uintptr) {
	l.changed()
	l.seq++ // the same order as handles: equal deadlines run as scheduled
	l.hostTimers.Push(timers.Entry[hostCall]{Key: timers.Key{When: when, Seq: l.seq}, Val: hostCall{fn, arg}})
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
			e := l.hostTimers.Pop()
			l.ready.pushHost(e.Val.fn, e.Val.arg)
		default: // a run of the source's, up to the next of the loop's own
			own, w, seq := l.earliestOwn()
			l.batches.q = append(l.batches.q, l.timerSource.Take(end, own != 0, w, seq))
			l.ready.pushBatchMark()
		}
	}
}
