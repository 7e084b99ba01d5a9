// SPDX-License-Identifier: MIT

package libloop

// TimerSource is a host's own queue of timers, kept outside the loop (capi
// keeps C handle timers' records in C memory, so that making, cancelling
// and running one never crosses into Go per timer). The loop merges its
// fronts with its own timers in (deadline, sequence) order, the sequence
// numbers coming from the loop's one counter (NextSeq), so equal deadlines
// run in scheduling order whichever queue holds them. Every method is
// called on the loop's thread.
type TimerSource interface {
	// Peek returns the earliest timer's deadline (loop ns) and sequence,
	// or ok false if there is none. It may drop cancelled timers first.
	Peek() (when int64, seq uint64, ok bool)
	// Pop removes the timer Peek returned and gives the host call that
	// runs it (called with the loop's Tag, as CallSoonHost's); that call
	// itself skips a timer cancelled after it was queued.
	Pop() (fn, arg uintptr)
	// Live is how many timers it holds that are not cancelled (Stats).
	Live() int
	// Tidy runs once per iteration, where the loop purges its own
	// cancelled timers: a source drops its own there.
	Tidy()
	// Drop forgets every timer, including the calls Pop returned that the
	// loop has not run: the loop is closing and drops its ready queue.
	Drop()
}

// SetTimerSource installs a host's timer queue (nil removes it).
func (l *Loop) SetTimerSource(src TimerSource) { l.timerSource = src }

// NextSeq takes the next scheduling sequence number, for a TimerSource's
// timer being queued now.
func (l *Loop) NextSeq() uint64 {
	l.seq++
	return l.seq
}

// earliestTimer returns the earliest front of the loop's timer queues and
// the host's source: which (0 none, 1 handles, 2 handle-less, 3 source)
// and its deadline.
func (l *Loop) earliestTimer() (which int, when int64) {
	var seq uint64
	if l.timers.len() > 0 {
		h := l.timers.peek()
		which, when, seq = 1, h.when, h.seq
	}
	if l.hostTimers.len() > 0 {
		if e := l.hostTimers.peek(); which == 0 || e.when < when || e.when == when && e.seq < seq {
			which, when, seq = 2, e.when, e.seq
		}
	}
	if l.timerSource != nil {
		if w, s, ok := l.timerSource.Peek(); ok && (which == 0 || w < when || w == when && s < seq) {
			which, when = 3, w
		}
	}
	return which, when
}
