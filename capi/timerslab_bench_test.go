// SPDX-License-Identifier: MIT

package main

import (
	"math/rand"
	"testing"
)

// BenchmarkTimerSlabHold measures one take and one push on a loop's handle
// timers' queue (records in C) holding 100,000 timers: each taken record
// is queued again up to a millisecond later, so about half the pushes land
// out of order (the heap) and half at the back (the run).
func BenchmarkTimerSlabHold(b *testing.B) {
	var loop cid
	if rc := ll__loop_new(&loop); rc != 0 {
		b.Fatal(rc)
	}
	defer ll__release_go(loop, 1)
	obj, _ := ids.get(uint64(loop), kindLoop)
	s := obj.(*loopState)
	r := rand.New(rand.NewSource(1))
	hs := make([]cid, 100_000)
	for i := range hs {
		if rc := ll__call_at_go(0, loop, _Ctype_double(3600+r.Float64()*1e-3), callbackAddr, nil, &hs[i]); rc != 0 {
			b.Fatal(rc)
		}
	}
	q := s.slab
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slot := q.take()
		rc := rec(slot)
		rc.when += _Ctype_int64_t(r.Int63n(1_000_000))
		q.push(slot)
	}
	b.StopTimer()
	for _, h := range hs {
		ll__release_go(h, 1)
	}
}
