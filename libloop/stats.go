// SPDX-License-Identifier: MIT

package libloop

import "time"

// loopCounters are the loop's running totals. Plain fields, written only by
// the thread running the loop: an add per iteration and per poll, and a
// clock read pair only around a poll that blocks and around a run (never
// around a callback), so they cost nothing measurable on the hot path. The
// iteration count is the loop's own l.iter.
type loopCounters struct {
	events    uint64
	callbacks uint64
	idleNs    int64
	runNs     int64
	runStart  int64 // monoNow() when the timed run in progress began; 0 if none
}

// Stats is a snapshot of a loop's metrics (libuv's uv_metrics_info and
// uv_metrics_idle_time, plus current counts).
type Stats struct {
	// Iterations is the number of iterations run (asyncio's _run_once calls).
	Iterations uint64
	// Events is the number of I/O readiness events the poll reported (one
	// per fd per poll; the loop's own wakeup fd is not counted).
	Events uint64
	// Callbacks is the number of callbacks run from the ready queue:
	// call_soon and timer callbacks, fd watchers, task steps, done
	// callbacks. A callback cancelled while queued is not counted (a host
	// callback cancelled by an earlier one of its own batch still is).
	// Callbacks of a host's own queue (HostQueue) are the host's to count.
	Callbacks uint64
	// Idle is the time spent blocked in poll (a poll that may block, i.e.
	// with a non-zero timeout).
	Idle time.Duration
	// Running is the wall time spent inside RunForever, RunUntilComplete and
	// blocking RunOnce calls, including a run in progress. RunOnce(true)
	// (never blocks) is not timed: two clock reads would double the cost of
	// such an iteration. Idle is always part of Running, so Running - Idle
	// is the time the loop was busy.
	Running time.Duration
	// Ready is the number of callbacks waiting in the ready queue.
	Ready int
	// Timers is the number of scheduled timers not cancelled.
	Timers int
	// FDs is the number of fds the loop watches: readers and writers, and
	// fds owned by transports, servers and child processes.
	FDs int
	// Tasks is the number of tasks not yet done.
	Tasks int
}

// Stats returns the loop's metrics. Call it on the loop's thread (from a
// callback) or while the loop is not running; the counters are not
// synchronised for another thread.
func (l *Loop) Stats() Stats {
	c := &l.counters
	run := c.runNs
	if c.runStart != 0 {
		run += monoNow() - c.runStart
	}
	ready := l.ready.len()
	for _, b := range l.batches.q[l.batches.head:] { // a mark stands for a batch's calls
		ready += b.Len() - 1
	}
	return Stats{
		Iterations: l.iter,
		Events:     c.events,
		Callbacks:  c.callbacks,
		Idle:       time.Duration(c.idleNs),
		Running:    time.Duration(run),
		Ready:      ready,
		Timers:     l.timers.len() - l.timerCancelled + l.hostTimers.Len() + l.sourceTimers(),
		FDs:        l.nWatched,
		Tasks:      len(l.tasks),
	}
}

// Busy is the time the loop spent running but not idle in poll.
func (s Stats) Busy() time.Duration { return s.Running - s.Idle }

// Utilization is the event loop utilization of the interval from prev to s
// (Node's performance.eventLoopUtilization): busy / (busy + idle), in
// [0, 1]; 0 when no time was measured. Pass a zero Stats for the whole
// life of the loop.
func (s Stats) Utilization(prev Stats) float64 {
	run := s.Running - prev.Running
	if run <= 0 {
		return 0
	}
	busy := run - (s.Idle - prev.Idle)
	if busy < 0 {
		busy = 0
	}
	return float64(busy) / float64(run)
}

// startRunClock and stopRunClock time a run for Stats.Running (every run
// but a non-blocking RunOnce).
func (l *Loop) startRunClock() { l.counters.runStart = monoNow() }

func (l *Loop) stopRunClock() {
	c := &l.counters
	c.runNs += monoNow() - c.runStart
	c.runStart = 0
}

// sourceTimers is how many live timers the host's TimerSource holds.
func (l *Loop) sourceTimers() int {
	if l.timerSource == nil {
		return 0
	}
	return l.timerSource.Live()
}
