// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import "testing"

// Only one connection's answer lets the gate's polls block
// (gateBlockEvents): a delivery of one event is offered the gate with a
// BlockUntil whether tries run or rest; a delivery of two events (two
// connections in one poll, a loaded server's shape) is offered it with
// BlockUntil 0 (its polls hand back at the first that finds nothing, as
// before the gate could block), whether tries run or rest.
func TestReadGateBlocksForOneConnection(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rest, two     bool
		offer, blocks bool
	}{
		{"one event, tries run", false, false, true, true},
		{"one event, tries rest", true, false, true, true},
		{"two events, tries run", false, true, true, false},
		{"two events, tries rest", true, true, true, false},
	} {
		r := newGateRig(t)
		if tc.rest {
			r.l.plan.tries, r.l.plan.rest = triesRest, maxRest // past this run's blocking poll
		} else {
			r.l.plan.tries = triesOn
		}
		r.send(t, 0)
		if tc.two {
			r.send(t, 1)
		}
		if err := r.l.RunForever(); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 2}[tc.two]; len(r.got) != want {
			t.Fatalf("%s: %d events delivered (%v), want %d in one delivery", tc.name, len(r.got), r.got, want)
		}
		if (len(r.s.offers) == 1) != tc.offer || len(r.s.offers) > 1 {
			t.Fatalf("%s: %d offers, want offered %v", tc.name, len(r.s.offers), tc.offer)
		}
		if !tc.offer {
			continue
		}
		g := r.s.offers[0]
		if want := r.l.lastYield + yieldSlice; tc.blocks && g.BlockUntil != want || !tc.blocks && g.BlockUntil != 0 {
			t.Fatalf("%s: BlockUntil %d, want blocking %v (%d)", tc.name, g.BlockUntil, tc.blocks, want)
		}
		if g.TryFirst == tc.rest {
			t.Fatalf("%s: TryFirst %v with tries resting %v", tc.name, g.TryFirst, tc.rest)
		}
	}
}
