// SPDX-License-Identifier: MIT

package libloop

import (
	_ "unsafe" // for go:linkname

	"github.com/libloop/libloop/internal/timers"
)

// runtimeNanotime is the Go runtime's monotonic clock: CLOCK_MONOTONIC on
// Linux and FreeBSD, mach_absolute_time (CLOCK_UPTIME_RAW) on darwin, in
// nanoseconds. The runtime keeps it reachable by linkname for programs
// that read it (its "hall of shame", go.dev/issue/67401); time.Since reads
// the same clock.
//
//go:linkname runtimeNanotime runtime.nanotime
func runtimeNanotime() int64

// clockBase anchors the loop clock: loop time is the runtime's monotonic
// clock minus its reading when the library was loaded.
var clockBase = runtimeNanotime()

func monoNow() int64 { return runtimeNanotime() - clockBase }

// Nanotime returns the loop clock in nanoseconds (Time is it in seconds).
func Nanotime() int64 { return monoNow() }

// ClockBase is the raw monotonic reading (the clock runtimeNanotime names)
// that loop time 0 stands for: a host reading that clock itself (capi's
// C-side timers) gets the loop clock exactly as raw - ClockBase(), with no
// offset from calibrating two reads against each other (that gap was the
// whole cost of a cgo call, and under valgrind tens of microseconds, by
// which every deadline computed in C was late).
func ClockBase() int64 { return clockBase }

// ClockResolution is the loop clock's resolution in nanoseconds; timers due
// within now+ClockResolution run in the current iteration (asyncio's
// _clock_resolution; the rule is timers.DueBy).
const ClockResolution = timers.Resolution

// Time returns the loop's monotonic clock in seconds.
func (l *Loop) Time() float64 { return float64(monoNow()) / 1e9 }
