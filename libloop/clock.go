// SPDX-License-Identifier: MIT

package libloop

import "time"

// clockBase anchors the loop clock: loop time is monotonic nanoseconds since
// the library was loaded (time.Since reads the monotonic clock via the vDSO).
var clockBase = time.Now()

func monoNow() int64 { return int64(time.Since(clockBase)) }

// Nanotime returns the loop clock in nanoseconds (Time is it in seconds):
// a host that computes deadlines itself (capi's C-side timers) aligns its
// own monotonic clock with it.
func Nanotime() int64 { return monoNow() }

// ClockResolution is the loop clock's resolution in nanoseconds; timers due
// within now+ClockResolution run in the current iteration (asyncio's
// _clock_resolution).
const ClockResolution = 1

// Time returns the loop's monotonic clock in seconds.
func (l *Loop) Time() float64 { return float64(monoNow()) / 1e9 }
