// SPDX-License-Identifier: MIT

package libloop

import (
	"time"
	"unsafe"
)

// Stats is a loop's metrics (struct ll_loop_stats): totals since the loop
// was created, and current counts. See include/libloop.h for each field.
type Stats struct {
	Iterations uint64        // iterations run
	Events     uint64        // I/O readiness events the poll reported
	Callbacks  uint64        // callbacks run from the loop's ready queue
	Idle       time.Duration // time blocked in poll
	Running    time.Duration // time inside blocking runs (Idle included)
	Ready      uint64        // callbacks ready now
	Timers     uint64        // timers scheduled, not cancelled
	FDs        uint64        // fds watched
	Tasks      uint64        // tasks not done
}

// statsV1Size is sizeof(struct ll_loop_stats) as this binding knows it;
// tests/c/test_abi_layout.c pins the layout.
const statsV1Size = 80 // LL_LOOP_STATS_V1_SIZE

// Stats reads the loop's metrics (ll_loop_stats). Call it from a callback
// of the loop or while the loop is not running: from another goroutine
// while it runs it fails with EWRONGTHREAD.
func (l *Loop) Stats() (Stats, error) {
	if err := loadLibc(); err != nil {
		return Stats{}, err
	}
	p := libc.malloc(statsV1Size) // C memory: the library writes into it
	if p == nil {
		return Stats{}, ENOMEM
	}
	defer libc.free(p)
	f := unsafe.Slice((*uint64)(p), statsV1Size/8)
	f[0] = statsV1Size
	if err := check(l.raw().LoopStats(l.id, p)); err != nil {
		return Stats{}, err
	}
	return Stats{
		Iterations: f[1], Events: f[2], Callbacks: f[3],
		Idle: time.Duration(f[4]), Running: time.Duration(f[5]),
		Ready: f[6], Timers: f[7], FDs: f[8], Tasks: f[9],
	}, nil
}

// Busy is the time the loop ran but was not idle in poll.
func (s Stats) Busy() time.Duration { return s.Running - s.Idle }

// Utilization is the event loop utilization from prev to s, as Node's
// performance.eventLoopUtilization: busy / (busy + idle), 0 when no time
// passed. A zero prev gives it over the loop's whole life.
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
