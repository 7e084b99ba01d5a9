// SPDX-License-Identifier: MIT

package timers

import (
	"math"
	"math/rand"
	"testing"
)

// The rules at their edges: NaN and anything past MaxDelay are refused,
// -Inf is before everything, the distant past is clamped, and a finite time
// rounds up to the nanosecond (a timer never runs early).
func TestAbsoluteEdges(t *testing.T) {
	for _, c := range []struct {
		when float64
		ns   int64
		ok   bool
	}{
		{math.NaN(), 0, false},
		{math.Inf(1), 0, false},
		{math.Nextafter(MaxDelay, math.Inf(1)), 0, false},
		{MaxDelay, int64(MaxDelay * 1e9), true},
		{math.Inf(-1), math.MinInt64, true},
		{-1e300, -int64(MaxDelay * 1e9), true},
		{-MaxDelay, -int64(MaxDelay * 1e9), true},
		{0, 0, true},
		{1.5e-9, 2, true},
		{-1.5e-9, -1, true},
		{1, 1e9, true},
	} {
		ns, ok := Absolute(c.when)
		if ns != c.ns || ok != c.ok {
			t.Errorf("Absolute(%g) = %d, %v; want %d, %v", c.when, ns, ok, c.ns, c.ok)
		}
	}
}

// A delay is now plus its deadline, but -Inf and the distant past stay
// absolute (asyncio's now + delay loses "now" there); Refused agrees with
// both conversions.
func TestRelativeAndRefused(t *testing.T) {
	const now = 123_456_789
	if ns, _ := Relative(2, now); ns != now+2e9 {
		t.Fatalf("Relative(2) = %d", ns)
	}
	if ns, _ := Relative(math.Inf(-1), now); ns != math.MinInt64 {
		t.Fatalf("Relative(-Inf) = %d", ns)
	}
	if a, _ := Absolute(-1e300); func() int64 { r, _ := Relative(-1e300, now); return r }() != a {
		t.Fatal("Relative(-1e300) is not the absolute deadline")
	}
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 100_000; i++ {
		v := math.Float64frombits(rng.Uint64()) // every exponent, NaN and Inf too
		if i%2 == 0 {
			v = (rng.Float64() - 0.5) * 4 * MaxDelay
		}
		_, okA := Absolute(v)
		_, okR := Relative(v, now)
		if okA == Refused(v) || okR == Refused(v) {
			t.Fatalf("%g: Refused %v, Absolute ok %v, Relative ok %v", v, Refused(v), okA, okR)
		}
		if ns, ok := Absolute(v); ok && !math.IsInf(v, -1) && v >= -MaxDelay && float64(ns) < v*NsPerSecond {
			t.Fatalf("%g rounds down to %d ns", v, ns)
		}
	}
}

// Seconds takes back what Absolute gives: -Inf stays -Inf, and a deadline
// is within a nanosecond of its time.
func TestSecondsInvertsAbsolute(t *testing.T) {
	for _, when := range []float64{math.Inf(-1), -MaxDelay, -1.25, 0, 1e-9, 123.25, MaxDelay} {
		ns, _ := Absolute(when)
		if got := Seconds(ns); got != when && math.Abs(got-when) > 1e-9*math.Max(1, math.Abs(when)) {
			t.Errorf("Seconds(Absolute(%g)) = %g", when, got)
		}
	}
}

// Due means before now + Resolution.
func TestDueBy(t *testing.T) {
	if DueBy(100) != 100+Resolution {
		t.Fatal(DueBy(100))
	}
}
