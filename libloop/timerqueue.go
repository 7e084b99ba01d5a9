// SPDX-License-Identifier: MIT

package libloop

import "github.com/libloop/libloop/internal/timers"

// timerQueue holds the timers that have a Handle (Go callbacks, tasks'
// sleeps; C hosts' handle timers only when capi's slab has no slot left),
// in timers.Queue order. A queued handle is flagged inHeap; a cancelled
// one stays where it is, flagged, until it reaches the front or a purge
// (asyncio's rule), so no position is tracked.
type timerQueue struct{ q timers.Queue[*Handle] }

func (t *timerQueue) len() int { return t.q.Len() }

func (t *timerQueue) push(h *Handle) {
	h.inHeap = true
	t.q.Push(timers.Entry[*Handle]{Key: timers.Key{When: h.when, Seq: h.seq}, Val: h})
}

// peek returns the earliest timer's entry (its key and handle); the queue
// must not be empty.
func (t *timerQueue) peek() *timers.Entry[*Handle] { return t.q.Peek() }

// pop removes and returns the earliest timer; the queue must not be empty.
func (t *timerQueue) pop() *Handle {
	h := t.q.Pop().Val
	h.inHeap = false
	return h
}

// removeIf drops every timer for which drop is true (a purge), calling
// drop once per timer, and keeps the order of the rest.
func (t *timerQueue) removeIf(drop func(*Handle) bool) {
	t.q.RemoveIf(func(e *timers.Entry[*Handle]) bool { return drop(e.Val) })
}
