// SPDX-License-Identifier: MIT

package libloop

import (
	"math"

	"github.com/libloop/libloop/internal/timers"
)

// hostCall is what a timer nobody holds a handle to carries (ll_call_later
// with out == NULL): no Handle record, just the call, by value beside its
// key. A million of them are one pointer-free queue (32 MB) that the GC
// never scans. Due, it joins the ready queue by value too (readyItem).
type hostCall struct{ fn, arg uintptr }

// HostTimer is a handle-less host timer as a host hands many over at once
// (CallAtHostMany): a deadline in loop nanoseconds and a plain call with
// the loop's id, HostCall{Fn: Fn, Arg: Arg}. Its layout is capi's C-side
// timer record (ll__later), so capi hands its array over in place.
type HostTimer struct {
	When int64
	Fn   uintptr
	Arg  uintptr
}

// CallAtHostMany is CallAtHost(t.When, HostCall{Fn: t.Fn, Arg: t.Arg},
// false) for each t of ts, in order, in one call: ECLOSED if the loop is
// closed (none is queued), EINVAL if a timer has no Fn (it is skipped, the
// rest are queued). It exists for a host that queues timers itself and
// hands them over in runs (capi takes the timers C made in thousands a
// flush): the loop is checked once, the sequence kept in a register, and
// in-order timers written in place (Queue.Room): ~65 fewer instructions a
// timer than a CallAtHost each (callgrind).
func (l *Loop) CallAtHostMany(ts []HostTimer) error {
	if l.closed.Load() {
		return ECLOSED
	}
	l.changed()
	var err error
	seq := l.seq
	q := &l.hostTimers
	// In-order timers are written straight into the run's room; any other
	// (out of order, or no room left) is Pushed.
	room, k := q.Room(), 0
	last, inRun := q.Last()
	for i := range ts {
		t := &ts[i]
		if t.Fn == 0 {
			err = EINVAL
			continue
		}
		seq++ // the same order as handles: equal deadlines run as scheduled
		e := timers.Entry[hostCall]{Key: timers.Key{When: t.When, Seq: seq}, Val: hostCall{t.Fn, t.Arg}}
		if k < len(room) && (!inRun || !e.Before(last)) {
			room[k] = e
			k++
			last, inRun = e.Key, true
			continue
		}
		q.Commit(k)
		q.Push(e)
		room, k = q.Room(), 0
		last, inRun = q.Last()
	}
	q.Commit(k)
	l.seq = seq
	return err
}

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

// dueFloor is a lower bound of every queued timer's deadline, valid while
// the loop's sequence counter stays at seq: every timer that enters any
// queue (handles, handle-less, a host's TimerSource) takes a new sequence
// number, and leaving a queue (run, cancelled, purged) can only raise the
// earliest deadline. An iteration before it has no timer to move: a loop
// whose only timer is far off (a watchdog, a server's lifetime) skips
// reading the three queues' fronts each iteration, ~130 instructions of
// each I/O iteration (callgrind).
type dueFloor struct {
	when int64
	seq  uint64
}

// queueDueTimers moves every timer due before end to the ready queue, from
// every timer queue merged in (deadline, scheduling order).
func (l *Loop) queueDueTimers(end int64) {
	if l.dueFloor.seq == l.seq && end <= l.dueFloor.when {
		return
	}
	for {
		which, when := l.earliestTimer()
		if which == 0 || when >= end {
			if which == 0 {
				when = math.MaxInt64
			}
			l.dueFloor = dueFloor{when: when, seq: l.seq}
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
			l.queueDueHostTimers(end)
		default: // a run of the source's, up to the next of the loop's own
			own, w, seq := l.earliestOwn()
			l.batches.q = append(l.batches.q, l.timerSource.Take(end, own != 0, w, seq))
			l.ready.pushBatchMark()
		}
	}
}

// queueDueHostTimers moves the handle-less timers due before end to the
// ready queue while they come before the fronts of the other timer queues,
// which it reads once: none of them changes meanwhile. queueDueTimers'
// merge reads every front again for each timer it moves, and a Pop each
// copies the timer out: together ~100 instructions a timer more in a run
// of handle-less timers.
func (l *Loop) queueDueHostTimers(end int64) {
	bound := timers.Key{When: end} // before it: due
	if l.timers.len() > 0 {
		if e := l.timers.peek(); e.Before(bound) {
			bound = e.Key
		}
	}
	if l.sourceQueued { // as earliestTimer
		w, s, ok := l.timerSource.Peek()
		if !ok {
			l.sourceQueued = false // until the next NextSeq
		} else if k := (timers.Key{When: w, Seq: s}); k.Before(bound) {
			bound = k
		}
	}
	q := &l.hostTimers
	for {
		// In-order timers a run at a time, in place; a heap entry by Pop.
		if run := q.RunBefore(bound); len(run) > 0 {
			for i := range run {
				l.ready.pushHost(run[i].Val.fn, run[i].Val.arg)
			}
			q.Discard(len(run))
			continue
		}
		e, ok := q.PopBefore(bound)
		if !ok {
			return
		}
		l.ready.pushHost(e.Val.fn, e.Val.arg)
	}
}
