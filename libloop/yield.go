// SPDX-License-Identifier: MIT

package libloop

import "runtime"

// yieldEvery is how much work passes between two looks at the clock for
// yieldIfLong, counted per iteration as 1, plus 1 per ready callback
// (I/O marks, Go handles, host batches) and yieldHostRun per run of the
// host's own queue: a clock read every iteration would cost a callback chain with an fd watched ~15%,
// but counting iterations alone let iterations that each deliver many
// events or run a host queue of Python callbacks (aiohttp under wrk: ~15 requests,
// ~0.4 ms an iteration) go 25 ms between looks, past sysmon's 10 ms: its
// forced preemption then woke sysmon to poll every 20 µs for a
// millisecond, ~2,400 wake-ups a second under that load (0.06 a request), which
// cost the server 2-5% of its CPU (echo servers, aiohttp).
const yieldEvery = 64

// yieldHostRun is a host-queue run's weight in yieldWork: two runs between
// looks. A run is a crossing into the host (a ctypes callback for Python:
// a microsecond or more), so a 20 ns clock read after two is noise.
const yieldHostRun = yieldEvery / 2

// yieldSlice is the loop time after which the loop yields its thread to
// the Go scheduler: under the runtime's forced-preemption period (10 ms).
const yieldSlice = 5e6 // ns

// yieldIfLong gives the Go scheduler a turn when the loop has run for
// yieldSlice without one. Run from a C host, the loop's goroutine lives
// inside one long cgo callback and is never rescheduled, so the runtime's
// sysmon preempts it every 10 ms: a signal to the thread, its P handed to
// another thread and back, and sysmon polling every 20 µs for the next
// millisecond. A voluntary Gosched before that costs one hand-off and
// keeps sysmon asleep: 500 spawns, 16 at a time, measured 8-10% less
// parent CPU and fewer context switches, a callback chain unchanged.
func (l *Loop) yieldIfLong() { l.yieldBeforeBlock(monoNow()) }

// yieldBeforeBlock is yieldIfLong for an iteration about to block in the
// poll, with the clock already read. Iterations that block (a loop waiting
// on children, a server between requests) can each take long enough that
// the every-yieldEvery check comes after sysmon's 10 ms: its forced
// preemption then takes the P from the blocked loop thread, the P goes
// idle, sysmon sleeps deeply, and the loop's next blocking call wakes it
// to poll every 20 µs for a millisecond — ~1.2 sysmon wakeups per spawn
// while spawning (perf sched:sched_switch).
func (l *Loop) yieldBeforeBlock(now int64) {
	if now-l.lastYield > yieldSlice {
		l.lastYield = now
		l.yields++
		runtime.Gosched()
	}
}
