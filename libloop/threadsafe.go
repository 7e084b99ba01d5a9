// SPDX-License-Identifier: MIT

package libloop

import "sync/atomic"

// CallSoonThreadsafe queues fn from any thread and wakes the loop if it is
// blocked in poll. Wakeups coalesce (one eventfd write while one is pending);
// callbacks never do: each posted callback runs exactly once, in post order.
func (l *Loop) CallSoonThreadsafe(fn func()) error {
	if fn == nil {
		return EINVAL
	}
	return l.post(postedCall{gofn: fn})
}

// CallSoonThreadsafeHost is CallSoonThreadsafe for a host callback (c.ID
// 0: the loop's Tag); it cannot be cancelled.
func (l *Loop) CallSoonThreadsafeHost(c HostCall) error {
	if c.Fn == 0 {
		return EINVAL
	}
	return l.post(postedCall{call: c})
}

func (l *Loop) post(c postedCall) error {
	return l.postOutcome(c, nil)
}

// postOutcome is post for a pool job's outcome: the pool's count of
// outstanding jobs (pending, non-nil) drops under the queue's lock, after
// the outcome is counted in Posted. Alive, on the loop thread, reads the
// pools' counts before Posted, so it sees the job in one place or the
// other; and the loop can take the outcome (takePosted, under the lock)
// only once the count has dropped, so it never delivers an outcome and
// then waits in poll for a job still counted. Dropping the count outside
// the lock (after the post) left that window: a Run(RunDefault) that
// delivered the last outcome blocked forever.
func (l *Loop) postOutcome(c postedCall, pending *atomic.Int64) error {
	q := &l.posted
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		if pending != nil {
			pending.Add(-1)
		}
		return ECLOSED
	}
	q.items = append(q.items, c)
	l.view().Posted.Add(1)
	if pending != nil {
		pending.Add(-1)
	}
	l.wakeLocked()
	return nil
}

// Wake makes a blocked poll return; safe from any thread. Only the first of
// many concurrent wakes writes to the wakeup fd (a CAS on a pending flag, as
// the Go runtime's netpollBreak does).
func (l *Loop) Wake() error {
	q := &l.posted
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ECLOSED
	}
	l.wakeLocked()
	return nil
}

// wakeLocked writes the wakeup fd unless a wakeup is already pending. The
// caller holds posted.mu, which Close also takes before it closes the
// selector, so a wake never writes to a closed (possibly reused) fd.
func (l *Loop) wakeLocked() {
	if l.wakePending.CompareAndSwap(0, 1) {
		l.sel.wake()
	}
}

// takePosted moves callbacks posted from other threads to the ready queue.
func (l *Loop) takePosted() {
	q := &l.posted
	if l.view().Posted.Load() == 0 {
		return
	}
	q.mu.Lock()
	items := q.items
	q.items = q.spare[:0]
	l.view().Posted.Store(0)
	q.mu.Unlock()
	for i := range items {
		if c := &items[i].call; c.Fn != 0 && l.byValue(c.ID, c.Kind) {
			l.ready.pushHost(c.Fn, c.Arg) // no handle: nobody holds one
			items[i] = postedCall{}
			continue
		}
		if f := items[i].done; f != nil && deliverNow(f, items[i].value, items[i].code) {
			items[i] = postedCall{}
			continue
		}
		h := l.newHandle()
		if f := items[i].done; f != nil {
			// The handle carries the future; unref releases it, so it holds
			// one more reference (the job's is dropped by execDelivered).
			stageOutcome(f, items[i].value, items[i].code)
			f.hold()
			h.futfn, h.fut = execDelivered, f
		} else {
			h.gofn = items[i].gofn
			h.call = l.withID(items[i].call)
		}
		l.ready.push(h)
		items[i] = postedCall{}
	}
	q.mu.Lock()
	q.spare = items[:0]
	q.mu.Unlock()
}
