// SPDX-License-Identifier: MIT

package libloop

import "time"

// HostBatch is a run of host callbacks queued outside Go (capi: the calls
// a host made with ll_call_soon while the loop was idle or during a batch,
// in their C array), handed over whole: it keeps one place in the FIFO and
// runs in one crossing, however many calls it holds, with no per-call
// record on the Go side.
type HostBatch interface {
	// Run calls every entry in order.
	Run()
	// Drop releases the batch unrun (the loop closed first).
	Drop()
	// Len is how many calls the batch holds until it runs (Stats counts
	// them: ready while queued, callbacks once run).
	Len() int
}

// hostBatches is the FIFO of batches whose marks are in the ready queue.
type hostBatches struct {
	q    []HostBatch
	head int
}

// CallSoonHostBatch queues b after everything already scheduled.
func (l *Loop) CallSoonHostBatch(b HostBatch) error {
	if b == nil {
		return EINVAL
	}
	if l.closed.Load() {
		return ECLOSED
	}
	l.batches.q = append(l.batches.q, b)
	l.ready.pushBatchMark()
	return nil
}

func (hb *hostBatches) pop() HostBatch {
	b := hb.q[hb.head]
	hb.q[hb.head] = nil
	hb.head++
	if hb.head == len(hb.q) {
		hb.q, hb.head = hb.q[:0], 0
	}
	return b
}

// runBatch runs the next batch (its mark was just popped); debug mode
// times it as one callback.
func (l *Loop) runBatch() {
	b := l.batches.pop()
	// run counted the batch's mark as one callback; it runs Len.
	l.counters.callbacks += uint64(b.Len()) - 1
	if !l.debug {
		b.Run()
		return
	}
	start := time.Now()
	b.Run()
	l.reportSlow(nil, time.Since(start))
}

// dropBatches releases the batches still queued (Close).
func (l *Loop) dropBatches() {
	for len(l.batches.q) > l.batches.head {
		l.batches.pop().Drop()
	}
}

// PostSource is a host's own queue of callbacks posted from other threads
// (capi: a lock-free C-side queue a poster fills without entering Go,
// waking the loop with Wake only when the loop may be asleep). The loop
// calls BeforeBlock when nothing else keeps it from blocking, and Takes
// everything after each poll, as it takes its own posted callbacks. A Host
// that implements it is the loop's post source (SetHost).
type PostSource interface {
	// Pending reports whether anything was posted since the last Take:
	// cheap, from the loop's thread while other threads post.
	Pending() bool
	// BeforeBlock tells the source the loop may block: from now on a post
	// must wake it (Wake). Then it reports Pending, so that a post made
	// before the call is seen here and one made after it wakes the loop.
	BeforeBlock() bool
	// Take returns everything posted so far as one batch (nil if none).
	Take() HostBatch
}

// HostJobs is a PostSource whose host runs jobs on threads of its own
// and posts their outcomes to it (capi's file pool for ll_fs_read_cb):
// Outstanding reports jobs whose outcome has not run yet, which keep the
// loop alive as the core's own pools' jobs do. A job stops being
// outstanding when the loop runs its outcome, not when a worker posts
// it: otherwise the loop could run the outcome, still see the job out,
// and block with nobody left to wake it.
type HostJobs interface {
	Outstanding() bool
}

// takeHostPosts queues what the host's post source holds.
func (l *Loop) takeHostPosts() {
	if src := l.postSource; src != nil && src.Pending() {
		if b := src.Take(); b != nil {
			l.batches.q = append(l.batches.q, b)
			l.ready.pushBatchMark()
		}
	}
}
