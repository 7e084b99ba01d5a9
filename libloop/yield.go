// SPDX-License-Identifier: MIT

package libloop

import "runtime"

// yieldEvery is how many iterations pass between two looks at the clock
// for yieldIfLong (a clock read every iteration would cost W1 a third).
const yieldEvery = 64

// yieldSlice is the loop time after which the loop yields its thread to
// the Go scheduler: under the runtime's forced-preemption period (10 ms).
const yieldSlice = 5e6 // ns

// yieldIfLong gives the Go scheduler a turn when the loop has run for
// yieldSlice without one. Run from a C host, the loop's goroutine lives
// inside one long cgo callback and is never rescheduled, so the runtime's
// sysmon preempts it every 10 ms: a signal to the thread, its P handed to
// another thread and back, and sysmon polling every 20 µs for the next
// millisecond. A voluntary Gosched before that costs one hand-off and
// keeps sysmon asleep: W8 (500 spawns, 16 at a time) measured 8-10% less
// parent CPU and fewer context switches, W1 unchanged.
func (l *Loop) yieldIfLong() {
	if n := monoNow(); n-l.lastYield > yieldSlice {
		l.lastYield = n
		runtime.Gosched()
	}
}
