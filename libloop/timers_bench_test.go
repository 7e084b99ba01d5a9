// SPDX-License-Identifier: MIT

package libloop

import (
	"math/rand"
	"testing"

	"github.com/libloop/libloop/internal/timers"
)

// holdSize is the standing population of the hold benchmarks: enough that
// the heap does not fit in L1, as a server's timeouts would not.
const holdSize = 100_000

// holdStep is a hold benchmark's next deadline after a popped one: up to a
// millisecond later, so about half the pushes land out of order (the heap)
// and half at the back (the run).
func holdStep(r *rand.Rand, when int64) int64 { return when + r.Int63n(1_000_000) }

// BenchmarkTimerQueueHold measures one pop and one push on the handle
// timers' queue holding holdSize timers (the classic hold model).
func BenchmarkTimerQueueHold(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	var q timerQueue
	var seq uint64
	for i := 0; i < holdSize; i++ {
		seq++
		q.push(&Handle{when: r.Int63n(1_000_000), seq: seq})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := q.pop()
		seq++
		h.when, h.seq = holdStep(r, h.when), seq
		q.push(h)
	}
}

// BenchmarkTimerHostQueueHold is BenchmarkTimerQueueHold for the
// handle-less timers' queue.
func BenchmarkTimerHostQueueHold(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	var q timers.Queue[hostCall]
	var seq uint64
	for i := 0; i < holdSize; i++ {
		seq++
		q.Push(timers.Entry[hostCall]{Key: timers.Key{When: r.Int63n(1_000_000), Seq: seq}, Val: hostCall{fn: 1}})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := q.Pop()
		seq++
		e.When, e.Seq = holdStep(r, e.When), seq
		q.Push(e)
	}
}

// timerBatch is how many timers the loop benchmarks schedule per
// iteration: all due at once, in random order.
const timerBatch = 1024

// BenchmarkTimerCallAtRandomRun measures scheduling a Go timer at a random
// deadline in the past and running it (a heap push, pop and the call).
func BenchmarkTimerCallAtRandomRun(b *testing.B) {
	l, _ := New()
	defer l.Close()
	r := rand.New(rand.NewSource(1))
	fn := func() {}
	b.ReportAllocs()
	for i := 0; i < b.N; i += timerBatch {
		now := l.Time()
		for k := 0; k < timerBatch; k++ {
			l.CallAt(now-r.Float64(), fn)
		}
		l.RunOnce(true)
	}
}

// BenchmarkTimerCallLaterInOrderRun measures timers scheduled with one delay
// one after another (the run's case), each then run.
func BenchmarkTimerCallLaterInOrderRun(b *testing.B) {
	l, _ := New()
	defer l.Close()
	fn := func() {}
	b.ReportAllocs()
	for i := 0; i < b.N; i += timerBatch {
		for k := 0; k < timerBatch; k++ {
			l.CallLater(-1e-3, fn)
		}
		l.RunOnce(true)
	}
}

// BenchmarkTimerCallAtHostRandomRun is BenchmarkTimerCallAtRandomRun for host
// timers with no handle.
func BenchmarkTimerCallAtHostRandomRun(b *testing.B) {
	l, _ := New()
	defer l.Close()
	l.SetHost(&nopHost{})
	r := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	for i := 0; i < b.N; i += timerBatch {
		now := l.Time()
		for k := 0; k < timerBatch; k++ {
			ns, _ := l.Deadline(now-r.Float64(), false)
			l.CallAtHost(ns, HostCall{Fn: 1}, false)
		}
		l.RunOnce(true)
	}
}
