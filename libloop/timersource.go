// SPDX-License-Identifier: MIT

package libloop

import "github.com/libloop/libloop/internal/timers"

// TimerSource is a host's own queue of timers, kept outside the loop (capi
// keeps C handle timers' records in C memory, so that making, cancelling
// and running one never crosses into Go per timer). The loop merges its
// fronts with its own timers in (deadline, sequence) order, the sequence
// numbers coming from the loop's one counter (NextSeq), so equal deadlines
// run in scheduling order whichever queue holds them. A host supplies one
// through TimerHost (host.go). The loop looks at it only while it may hold
// timers: from the NextSeq of a timer being queued until Peek finds none,
// so a loop whose host holds no timers pays nothing per iteration for it.
// Every method is called on the loop's thread.
type TimerSource interface {
	// Peek returns the earliest timer's deadline (loop ns) and sequence,
	// or ok false if there is none. It may drop cancelled timers first.
	Peek() (when int64, seq uint64, ok bool)
	// Take removes the earliest timers, in order, while each is due before
	// end and, if bounded, comes before (when, seq) (the earliest of the
	// loop's own timers), and returns them as one batch that runs them in
	// that place of the ready queue; the batch itself skips a timer
	// cancelled after it was taken. Peek's timer is due: Take takes it.
	Take(end int64, bounded bool, when int64, seq uint64) HostBatch
	// Live is how many timers it holds that are not cancelled (Stats).
	Live() int
	// Tidy runs once per iteration, where the loop purges its own
	// cancelled timers: a source drops its own there.
	Tidy()
	// Drop forgets every timer, including the calls Pop returned that the
	// loop has not run: the loop is closing and drops its ready queue.
	Drop()
}

// NextSeq takes the next scheduling sequence number, for a TimerSource's
// timer being queued now: from then on the loop looks at the source.
func (l *Loop) NextSeq() uint64 {
	l.changed()
	l.sourceQueued = l.timerSource != nil
	l.seq++
	return l.seq
}

// earliestTimer returns the earliest front of the loop's timer queues and
// the host's source: which (0 none, 1 handles, 2 handle-less, 3 source)
// and its deadline.
func (l *Loop) earliestTimer() (which int, when int64) {
	which, when, seq := l.earliestOwn()
	if l.sourceQueued {
		w, s, ok := l.timerSource.Peek()
		if !ok {
			l.sourceQueued = false // until the next NextSeq
		} else if which == 0 || w < when || w == when && s < seq {
			which, when = 3, w
		}
	}
	return which, when
}

// earliestOwn is earliestTimer without the host's source, and with the
// timer's sequence number.
func (l *Loop) earliestOwn() (which int, when int64, seq uint64) {
	if l.timers.len() > 0 {
		e := l.timers.peek()
		which, when, seq = 1, e.When, e.Seq
	}
	if l.hostTimers.Len() > 0 {
		if e := l.hostTimers.Peek(); which == 0 || e.Before(timers.Key{When: when, Seq: seq}) {
			which, when, seq = 2, e.When, e.Seq
		}
	}
	return which, when, seq
}
