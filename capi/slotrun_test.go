// SPDX-License-Identifier: MIT

package main

import (
	"math/rand"
	"testing"
)

// slotRun against a plain slice: pushes of runs and strays, pops and
// purges in any mix keep exactly the FIFO order, across chunk boundaries.
func TestSlotRunMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var run slotRun
	var want []uint32
	next := uint32(0)
	for step := 0; step < 200000; step++ {
		switch k := r.Intn(10); {
		case k < 5: // consecutive slots mostly, sometimes a jump
			if r.Intn(8) == 0 {
				next = uint32(r.Intn(1 << 20))
			}
			run.push(next)
			want = append(want, next)
			next++
		case k < 9 && run.n > 0:
			got := run.pop()
			if got != want[0] {
				t.Fatalf("step %d: pop %d, want %d", step, got, want[0])
			}
			want = want[1:]
		case k == 9 && r.Intn(50) == 0:
			odd := func(s uint32) bool { return s%3 == 1 }
			run.removeIf(odd)
			kept := want[:0]
			for _, s := range want {
				if !odd(s) {
					kept = append(kept, s)
				}
			}
			want = kept
		}
		if run.n != len(want) || run.n > 0 && (run.front() != want[0] || run.back() != want[len(want)-1]) {
			t.Fatalf("step %d: run holds %d, front/back differ from the slice's %d", step, run.n, len(want))
		}
	}
}
