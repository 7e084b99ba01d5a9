// SPDX-License-Identifier: MIT

package timers

// Key orders timers: by deadline (loop nanoseconds), then by sequence, a
// number the loop takes from one counter as each timer is scheduled, so
// timers with equal deadlines run in the order they were scheduled,
// whichever queue holds them.
type Key struct {
	When int64
	Seq  uint64
}

// Before reports whether a runs before b.
func (a Key) Before(b Key) bool {
	if a.When != b.When {
		return a.When < b.When
	}
	return a.Seq < b.Seq
}

// Entry is one queued timer: its Key by value beside what it carries. The
// queues compare keys in place, so an ordering step reads neighbouring
// entries and never follows a pointer or makes a call through V.
type Entry[V any] struct {
	Key
	Val V
}
