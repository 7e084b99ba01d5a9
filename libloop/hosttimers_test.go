// SPDX-License-Identifier: MIT

package libloop

import (
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// Timers with and without handles, at a few shared deadlines, run in
// deadline order and, for equal deadlines, in the order they were
// scheduled, whichever heap holds them (handed over one by one or in runs,
// CallAtHostMany); cancelled handle timers do not run.
func TestHostTimersMergeWithHandleTimersInOrder(t *testing.T) {
	l := newTestLoop(t)
	d := &recordingHost{}
	l.SetHost(d)
	l.Tag = 77
	base := l.Time() + 0.02
	type sched struct {
		when float64
		arg  uintptr
	}
	var want []sched
	rng := rand.New(rand.NewSource(1))
	var many []HostTimer // a run not yet handed over: scheduled when it is
	flush := func() {
		if err := l.CallAtHostMany(many); err != nil {
			t.Fatal(err)
		}
		many = many[:0]
	}
	for i := 1; i <= 3000; i++ {
		when := base + float64(rng.Intn(5))*0.001 // many equal deadlines
		arg := uintptr(i)
		k := rng.Intn(4)
		if k == 3 {
			many = append(many, HostTimer{When: atNs(t, l, when), Fn: 1, Arg: arg})
			want = append(want, sched{when, arg})
			continue
		}
		flush()
		switch k {
		case 0:
			if _, err := l.CallAtHost(atNs(t, l, when), HostCall{Fn: 1, Arg: arg}, false); err != nil {
				t.Fatal(err)
			}
		case 1:
			if _, err := l.CallAtHost(atNs(t, l, when), HostCall{Fn: 1, Arg: arg, ID: 77}, true); err != nil {
				t.Fatal(err)
			}
		default:
			h, err := l.CallAtHost(atNs(t, l, when), HostCall{Fn: 1, Arg: arg, ID: 77}, true)
			if err != nil {
				t.Fatal(err)
			}
			h.Cancel()
			continue
		}
		want = append(want, sched{when, arg})
	}
	flush()
	slices.SortStableFunc(want, func(a, b sched) int {
		switch {
		case a.when < b.when:
			return -1
		case a.when > b.when:
			return 1
		}
		return 0
	})
	l.CallLater(0.05, func() { l.Stop() })
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if len(d.got) != len(want) {
		t.Fatalf("%d calls ran, want %d", len(d.got), len(want))
	}
	for i, w := range want {
		if d.got[i] != w.arg {
			t.Fatalf("call %d: arg %d, want %d", i, d.got[i], w.arg)
		}
		if d.ids[i] != 77 {
			t.Fatalf("call %d: id %d, want the loop's tag 77", i, d.ids[i])
		}
	}
}

// atNs is when's deadline in loop nanoseconds, as CallAt takes it.
func atNs(t *testing.T, l *Loop, when float64) int64 {
	t.Helper()
	ns, err := l.Deadline(when, false)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// laterHost schedules a handle-less host timer as ll_call_later(out NULL).
func laterHost(l *Loop, delay float64, fn, arg uintptr) error {
	ns, err := l.Deadline(delay, true)
	if err != nil {
		return err
	}
	_, err = l.CallAtHost(ns, HostCall{Fn: fn, Arg: arg}, false)
	return err
}

// A host timer can be scheduled with asyncio's edge deadlines, is refused
// on a closed loop and without a function (in a run, only that one is),
// and a closed loop drops it.
func TestHostTimerEdges(t *testing.T) {
	l := newTestLoop(t)
	d := &recordingHost{}
	l.SetHost(d)
	if err := laterHost(l, 0, 0, 1); err != EINVAL {
		t.Fatalf("fn 0: %v", err)
	}
	if err := laterHost(l, math.NaN(), 1, 1); err == nil {
		t.Fatal("NaN delay accepted")
	}
	if err := laterHost(l, math.Inf(-1), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CallAtHost(atNs(t, l, -1e300), HostCall{Fn: 1, Arg: 2}, false); err != nil {
		t.Fatal(err)
	}
	now := atNs(t, l, l.Time())
	if err := l.CallAtHostMany([]HostTimer{{now, 1, 5}, {now, 0, 6}, {now, 1, 7}}); err != EINVAL {
		t.Fatalf("a run with fn 0: %v", err)
	}
	l.CallSoon(func() { l.Stop() })
	l.RunForever()
	if !slices.Equal(d.got, []uintptr{1, 2, 5, 7}) {
		t.Fatalf("ran %v, want [1 2 5 7]", d.got)
	}
	laterHost(l, 3600, 1, 3)
	l.Close()
	if err := laterHost(l, 1, 1, 4); err != ECLOSED {
		t.Fatalf("closed loop: %v", err)
	}
	if err := l.CallAtHostMany([]HostTimer{{now, 1, 8}}); err != ECLOSED {
		t.Fatalf("closed loop, a run: %v", err)
	}
	if l.hostTimers.Len() != 0 {
		t.Fatal("a closed loop keeps its timers")
	}
}

// A timer scheduled, in any of the queues, while the only other one is far
// off runs at its own deadline: iterations that found nothing due under the
// far one (and stopped looking until the next new timer) do not delay it.
func TestTimerAfterFarOneRunsOnTime(t *testing.T) {
	l := newTestLoop(t)
	d := &recordingHost{}
	l.SetHost(d)
	far, err := l.CallLater(30, func() { t.Error("the far timer ran") })
	if err != nil {
		t.Fatal(err)
	}
	defer far.Cancel()
	for arg, add := range []func(ns int64) error{
		func(ns int64) error { _, err := l.CallAtHost(ns, HostCall{Fn: 1, Arg: 0}, false); return err },
		func(ns int64) error { _, err := l.CallAtHost(ns, HostCall{Fn: 1, Arg: 1}, true); return err },
		func(ns int64) error { return l.CallAtHostMany([]HostTimer{{When: ns, Fn: 1, Arg: 2}}) },
	} {
		for i := 0; i < 5; i++ {
			l.RunOnce(true) // iterations that find nothing due
		}
		if err := add(atNs(t, l, l.Time()+0.005)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for len(d.got) == arg && time.Since(start) < 2*time.Second {
			l.RunOnce(true)
		}
		if len(d.got) != arg+1 || d.got[arg] != uintptr(arg) {
			t.Fatalf("timer %d: ran %v after %v", arg, d.got, time.Since(start))
		}
	}
	ran := false
	if _, err := l.CallLater(0.005, func() { ran = true }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for !ran && time.Since(start) < 2*time.Second {
		l.RunOnce(true)
	}
	if !ran {
		t.Fatal("a Go timer after the far one did not run")
	}
}
