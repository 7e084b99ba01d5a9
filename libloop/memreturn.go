// SPDX-License-Identifier: MIT

package libloop

import (
	"runtime/debug"
	"sync/atomic"
)

// Returning memory after a burst of futures.
//
// A future's record is about 250 bytes of Go heap. The Go runtime lets its
// heap grow to twice what was live at the last collection (GOGC=100) and
// gives freed pages back to the OS only slowly (its background scavenger,
// after a collection has lowered that goal; an idle process collects once
// every two minutes). So a host that made a million futures and released
// them saw RSS stay at the peak (~2.3x the live records) for minutes.
//
// The loop counts its live futures. Once that count has fallen by
// returnAfterFutures (~32 MiB of records) from its peak, the next iteration
// (or Close) asks the runtime, on a goroutine of its own, to collect and
// return every free page (debug.FreeOSMemory); one such request runs at a
// time in the process. A steady create/release cycle never comes near the
// threshold, so it costs two integer updates per future.
const returnAfterFutures = 1 << 17

// returning is set while a FreeOSMemory goroutine runs.
var returning atomic.Bool

// futureLinked and futureUnlinked keep the live count and its peak.
func (l *Loop) futureLinked() {
	l.nlive++
	if l.nlive > l.peakLive {
		l.peakLive = l.nlive
	}
}

func (l *Loop) futureUnlinked() {
	l.nlive--
	if l.peakLive-l.nlive >= returnAfterFutures {
		l.peakLive = l.nlive
		l.memShrunk = true
	}
}

// maybeReturnMemory starts a FreeOSMemory if the live futures shrank a lot.
func (l *Loop) maybeReturnMemory() {
	if !l.memShrunk {
		return
	}
	l.memShrunk = false
	if returning.CompareAndSwap(false, true) {
		go func() {
			defer returning.Store(false)
			debug.FreeOSMemory()
		}()
	}
}

// LiveFutures returns how many futures of the loop are not yet disposed.
func (l *Loop) LiveFutures() int { return l.nlive }
