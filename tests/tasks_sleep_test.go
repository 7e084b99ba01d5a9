// SPDX-License-Identifier: MIT

package tests

import (
	"fmt"
	"math"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// ll_task_sleep (a step suspends for a delay in one call; delay <= 0 is a
// bare yield answered in C without entering Go) and ll_future_get_loop.

// A sleep(0) schedules the next step where it is called, in order with the
// step's own call_soon calls (C fast path and through Go), and any second
// outcome in the same step is refused.
func TestTaskSleepZeroKeepsCallSoonOrder(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		for _, delay := range []float64{0, -1, math.Inf(-1)} {
			var got []int
			steps := 0
			other := newFut(t, loop)
			task := rawTask(t, loop, func(task uint64) {
				steps++
				if steps == 1 {
					soon(t, loop, func() { got = append(got, 10) })
					expect(t, fmt.Sprintf("ll_task_sleep(%g)", delay), raw.TaskSleep(task, delay), 0)
					soon(t, loop, func() { got = append(got, 11) })
					expect(t, "ll_task_yield after sleep(0)", raw.TaskYield(task), cESTATE)
					expect(t, "ll_task_sleep(0) after sleep(0)", raw.TaskSleep(task, 0), cESTATE)
					expect(t, "ll_task_sleep(0.01) after sleep(0)", raw.TaskSleep(task, 0.01), cESTATE)
					expect(t, "ll_task_await after sleep(0)", raw.TaskAwait(task, other), cESTATE)
					expect(t, "ll_task_return after sleep(0)", raw.TaskReturn(task, 1, 0), cESTATE)
					expect(t, "ll_task_raise after sleep(0)", raw.TaskRaise(task, -5, nil, 0, 0), cESTATE)
					return
				}
				got = append(got, 2)
				out := newOut(t)
				out.Set(0xdead)
				expect(t, "ll_task_awaited after sleep(0)", raw.TaskAwaited(task, out.Ptr()), 0)
				if out.Value() != 0 {
					t.Errorf("woken by future %#x after a bare yield", out.Value())
				}
				expect(t, "ll_task_must_raise_cancel", raw.TaskMustRaiseCancel(task), 0)
				expect(t, "ll_task_return", raw.TaskReturn(task, 7, 0), 0)
			})
			expect(t, "ll_loop_run_until_complete", raw.RunUntilComplete(loop, task), 0)
			if fmt.Sprint(got) != "[10 2 11]" || steps != 2 {
				t.Fatalf("sleep(%g): order %v after %d steps, want [10 2 11] after 2", delay, got, steps)
			}
			if rc, v := result(t, task); rc != 0 || v != 7 {
				t.Fatalf("sleep(%g): result %s, %d", delay, codeString(rc), v)
			}
			expect(t, "the other future is untouched", raw.FutureState(other), cPending)
		}
		assertAlive(t, loop)
	})
}

// The same through the binding: Task.Sleep(0) with CallSoon handles (which
// go through Go, not the C fast path).
func TestTaskSleepZeroOrderBinding(t *testing.T) {
	l := newLoop(t)
	var got []string
	steps := 0
	task := newTask(t, l, func(tk *ll.Task) {
		steps++
		if steps == 1 {
			l.CallSoon(func() { got = append(got, "a") })
			if err := tk.Sleep(0); err != nil {
				t.Errorf("Sleep(0): %v", err)
			}
			l.CallSoon(func() { got = append(got, "b") })
			expectErr(t, "Yield after Sleep(0)", tk.Yield(), cESTATE)
			expectErr(t, "Sleep after Sleep(0)", tk.Sleep(time.Millisecond), cESTATE)
			return
		}
		got = append(got, "step")
		if w, err := tk.Awaited(); w != nil || err != nil {
			t.Errorf("Awaited after Sleep(0) = %v, %v", w, err)
		}
		tk.Return(3, nil)
	})
	runUntil(t, l, &task.Future, 5*time.Second)
	if fmt.Sprint(got) != "[a step b]" {
		t.Fatalf("order %v, want [a step b]", got)
	}
	if v, err := task.Result(); v != 3 || err != nil {
		t.Fatalf("result %d, %v", v, err)
	}
}

// An outcome chosen through Go (await, a real sleep, return, a failed await
// of itself) makes a later ll_task_sleep(0) — answered in C — fail too.
func TestTaskSleepAfterAnotherOutcome(t *testing.T) {
	loop := newRawLoop(t)
	cases := []struct {
		name  string
		first func(task uint64) int32
		want  int // what first returns
		final int // the task's state at the end
	}{
		{"ll_task_await", func(task uint64) int32 {
			f := newFut(t, loop)
			raw.FutureSetResult(f, 0, 0)
			return raw.TaskAwait(task, f)
		}, 0, cFinished},
		{"ll_task_sleep(0.001)", func(task uint64) int32 { return raw.TaskSleep(task, 0.001) }, 0, cFinished},
		{"ll_task_yield", func(task uint64) int32 { return raw.TaskYield(task) }, 0, cFinished},
		{"ll_task_return", func(task uint64) int32 { return raw.TaskReturn(task, 0, 0) }, 0, cFinished},
		{"ll_task_raise", func(task uint64) int32 { return raw.TaskRaise(task, -7, nil, 0, 0) }, 0, cFinished},
		// Awaiting itself fails the task (ESTATE): its outcome is chosen.
		{"ll_task_await(itself)", func(task uint64) int32 { return raw.TaskAwait(task, task) }, cESTATE, cFinished},
	}
	for _, c := range cases {
		steps := 0
		task := rawTask(t, loop, func(task uint64) {
			steps++
			if steps == 1 {
				expect(t, c.name, c.first(task), c.want)
				expect(t, "ll_task_sleep(0) after "+c.name, raw.TaskSleep(task, 0), cESTATE)
				expect(t, "ll_task_sleep(-1) after "+c.name, raw.TaskSleep(task, -1), cESTATE)
				expect(t, "ll_task_yield after "+c.name, raw.TaskYield(task), cESTATE)
				expect(t, "ll_task_sleep(0.01) after "+c.name, raw.TaskSleep(task, 0.01), cESTATE)
				return
			}
			raw.TaskReturn(task, 0, 0)
		})
		expect(t, "ll_loop_run_until_complete", raw.RunUntilComplete(loop, task), 0)
		expect(t, c.name+": final state", raw.FutureState(task), c.final)
		if raw.FutureState(task) == cFinished {
			raw.FutureException(task, nil, nil, nil) // retrieved: nothing to report
		}
		if steps > 2 {
			t.Errorf("%s: the task stepped %d times", c.name, steps)
		}
		assertAlive(t, loop)
	}
}

// A real sleep never wakes early, and sleepers wake in deadline order.
func TestTaskSleepNeverEarly(t *testing.T) {
	l := newLoop(t)
	type sleeper struct {
		d          time.Duration
		loopT      float64
		wall       time.Time
		loopWoke   float64
		wallWoke   time.Time
		steps      int
		wokenOrder int
	}
	woke := 0
	sleepers := []*sleeper{{d: 30 * time.Millisecond}, {d: 20 * time.Millisecond}, {d: 10 * time.Millisecond}, {d: 20 * time.Millisecond}}
	var futs []*ll.Future
	for _, s := range sleepers {
		task := newTask(t, l, func(tk *ll.Task) {
			s.steps++
			if s.steps == 1 {
				s.loopT, s.wall = l.Time(), time.Now()
				if err := tk.Sleep(s.d); err != nil {
					t.Errorf("Sleep(%v): %v", s.d, err)
				}
				return
			}
			s.loopWoke, s.wallWoke = l.Time(), time.Now()
			woke++
			s.wokenOrder = woke
			if w, err := tk.Awaited(); w != nil || err != nil {
				t.Errorf("Awaited after a sleep = %v, %v (want nil: the host never held the sleep)", w, err)
			}
			if tk.MustRaiseCancel() {
				t.Error("MustRaiseCancel after an uncancelled sleep")
			}
			tk.Return(0, nil)
		})
		futs = append(futs, &task.Future)
	}
	g, err := l.Gather(futs, false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	runUntil(t, l, g, 5*time.Second)
	for i, s := range sleepers {
		if s.steps != 2 {
			t.Fatalf("sleeper %d stepped %d times", i, s.steps)
		}
		if got := s.loopWoke - s.loopT; got < s.d.Seconds() || got > 2 {
			t.Errorf("sleeper %d (%v) woke after %.4fs of loop time", i, s.d, got)
		}
		if got := s.wallWoke.Sub(s.wall); got < s.d {
			t.Errorf("sleeper %d (%v) woke after %v of wall time", i, s.d, got)
		}
	}
	// 10 ms first, the two 20 ms in creation order, 30 ms last.
	if o := [4]int{sleepers[0].wokenOrder, sleepers[1].wokenOrder, sleepers[2].wokenOrder, sleepers[3].wokenOrder}; o != [4]int{4, 2, 1, 3} {
		t.Errorf("wake order %v, want [4 2 1 3]", o)
	}
	assertAlive(t, l.ID())
}

// Cancelling a task asleep in ll_task_sleep wakes it early, and its next
// step must raise cancellation (it may also swallow it and return).
func TestTaskSleepCancelled(t *testing.T) {
	l := newLoop(t)
	for _, swallow := range []bool{false, true} {
		steps := 0
		mustRaise := false
		task := newTask(t, l, func(tk *ll.Task) {
			steps++
			if steps == 1 {
				if err := tk.SleepSeconds(3600); err != nil {
					t.Errorf("SleepSeconds(3600): %v", err)
				}
				return
			}
			mustRaise = tk.MustRaiseCancel()
			out := newOut(t)
			out.Set(0xdead)
			expect(t, "ll_task_awaited after a cancelled sleep", raw.TaskAwaited(tk.ID(), out.Ptr()), 0)
			if out.Value() != 0 {
				t.Errorf("ll_task_awaited = %#x after a sleep, want 0", out.Value())
			}
			if swallow {
				tk.Uncancel()
				tk.Return(9, nil)
			} else {
				tk.Raise(cECANCELLED, "woken", 0, nil)
			}
		})
		var cancelled bool
		l.CallLater(5*time.Millisecond, func() { cancelled, _ = task.Cancel("stop") })
		t0 := time.Now()
		runUntil(t, l, &task.Future, 5*time.Second)
		if time.Since(t0) > 2*time.Second {
			t.Fatal("the hour-long sleep was not cut short")
		}
		if !cancelled || !mustRaise || steps != 2 {
			t.Fatalf("cancel %v, must raise %v, steps %d", cancelled, mustRaise, steps)
		}
		st, _ := task.State()
		if swallow {
			if v, err := task.Result(); st != ll.Finished || v != 9 || err != nil {
				t.Fatalf("swallowed: %v %d %v", st, v, err)
			}
		} else if st != ll.Cancelled {
			t.Fatalf("state %v, want cancelled", st)
		}
	}
	// Cancelled during its own step, before the sleep (0 or not): the next
	// step must raise, and comes at once.
	for _, d := range []float64{0, 3600} {
		steps := 0
		mustRaise := false
		task := newTask(t, l, func(tk *ll.Task) {
			steps++
			if steps == 1 {
				tk.Cancel("self")
				expect(t, fmt.Sprintf("ll_task_sleep(%g) after self-cancel", d), raw.TaskSleep(tk.ID(), d), 0)
				return
			}
			mustRaise = tk.MustRaiseCancel()
			tk.Raise(cECANCELLED, "", 0, nil)
		})
		t0 := time.Now()
		runUntil(t, l, &task.Future, 5*time.Second)
		if time.Since(t0) > 2*time.Second || !mustRaise || steps != 2 {
			t.Fatalf("sleep(%g) after self-cancel: took %v, must raise %v, steps %d", d, time.Since(t0), mustRaise, steps)
		}
		if st, _ := task.State(); st != ll.Cancelled {
			t.Fatalf("sleep(%g) after self-cancel: state %v", d, st)
		}
	}
	assertAlive(t, l.ID())
}

// NaN, +Inf and oversize delays are refused with LL_EINVAL and leave the
// step free to choose its outcome.
func TestTaskSleepBadDelays(t *testing.T) {
	l := newLoop(t)
	task := newTask(t, l, func(tk *ll.Task) {
		for _, d := range []float64{math.NaN(), math.Inf(1), 1e300, math.MaxFloat64, 4e9} {
			expect(t, fmt.Sprintf("ll_task_sleep(%g)", d), raw.TaskSleep(tk.ID(), d), cEINVAL)
			expectErr(t, fmt.Sprintf("SleepSeconds(%g)", d), tk.SleepSeconds(d), cEINVAL)
		}
		expectErr(t, "Sleep(max duration) (292 years)", tk.Sleep(time.Duration(math.MaxInt64)), cEINVAL)
		expectErr(t, "Return after refused sleeps", tk.Return(5, nil), 0)
	})
	runUntil(t, l, &task.Future, 5*time.Second)
	if v, err := task.Result(); v != 5 || err != nil {
		t.Fatalf("result %d, %v", v, err)
	}
	assertAlive(t, l.ID())
}

// Outside a step ll_task_sleep is LL_ESTATE; ids that name no task (0,
// stale, forged, a plain future, a loop, a handle) are LL_EBADHANDLE, in a
// step or not, whatever the delay.
func TestTaskSleepBadIDs(t *testing.T) {
	fx := newAIOFixture(t) // fx.task awaits fx.fut
	staleFut, staleTask := staleIDs(t, fx.loop)
	handle := soonHandle(t, fx.loop, func() {})
	defer raw.Release(handle)
	doneTask := rawTask(t, fx.loop, func(task uint64) { raw.TaskReturn(task, 0, 0) })
	runNowait(t, fx.loop)
	expect(t, "done task", raw.FutureState(doneTask), cFinished)
	bad := map[string]uint64{
		"id 0":              0,
		"forged all-ones":   math.MaxUint64,
		"forged generation": fx.task ^ 0x5a5a<<32,
		"forged slot":       1<<32 | 0xFFFFFF,
		"forged max slot":   0xFFFF_FFFF,
		"stale future":      staleFut,
		"stale task":        staleTask,
		"plain future":      fx.fut,
		"loop id":           fx.loop,
		"handle id":         handle,
	}
	delays := []float64{0, -1, 0.1, math.NaN()}
	check := func(where string) {
		for name, id := range bad {
			for _, d := range delays {
				expect(t, fmt.Sprintf("%s: ll_task_sleep(%s, %g)", where, name, d), raw.TaskSleep(id, d), cEBADHANDLE)
			}
		}
	}
	check("outside a step")
	for _, d := range []float64{0, -1, 0.1} {
		expect(t, fmt.Sprintf("ll_task_sleep(pending task, %g) outside a step", d), raw.TaskSleep(fx.task, d), cESTATE)
		expect(t, fmt.Sprintf("ll_task_sleep(done task, %g)", d), raw.TaskSleep(doneTask, d), cESTATE)
	}
	// Inside a step, the same ids, and another live task's id (not in its
	// step), are refused; the step then still returns normally.
	stepper := rawTask(t, fx.loop, func(task uint64) {
		check("in a step")
		for _, d := range []float64{0, 0.1} {
			expect(t, fmt.Sprintf("ll_task_sleep(another task, %g) in a step", d), raw.TaskSleep(fx.task, d), cESTATE)
			expect(t, fmt.Sprintf("ll_task_sleep(done task, %g) in a step", d), raw.TaskSleep(doneTask, d), cESTATE)
		}
		expect(t, "ll_task_return after refused sleeps", raw.TaskReturn(task, 4, 0), 0)
	})
	runNowait(t, fx.loop)
	if rc, v := result(t, stepper); rc != 0 || v != 4 {
		t.Fatalf("stepper result %s, %d", codeString(rc), v)
	}
	expect(t, "the fixture's task still awaits", raw.FutureState(fx.task), cPending)
	expect(t, "the fixture's future is untouched", raw.FutureState(fx.fut), cPending)
	assertAlive(t, fx.loop)
}

// Inside Run, main's task sleeps (its Task has no Loop, and needs none).
func TestTaskSleepInRun(t *testing.T) {
	steps := 0
	var slept float64
	var loopID uint64
	v, err := ll.Run(func(tk *ll.Task) {
		steps++
		switch steps {
		case 1:
			id, err := tk.LoopID()
			if err != nil || id == 0 {
				t.Errorf("LoopID in Run = %#x, %v", id, err)
			}
			loopID = id
			if raw.IsRunning(id) != 1 {
				t.Errorf("Run's loop %#x is not running", id)
			}
			slept = raw.Time(id)
			tk.Sleep(10 * time.Millisecond)
		case 2:
			slept = raw.Time(loopID) - slept
			tk.Sleep(0)
		default:
			tk.Return(11, nil)
		}
	})
	if v != 11 || err != nil || steps != 3 {
		t.Fatalf("Run = %d, %v after %d steps", v, err, steps)
	}
	if slept < 0.01 {
		t.Fatalf("main slept %.4fs, want >= 0.01", slept)
	}
	expect(t, "Run's loop after Run", raw.IsRunning(loopID), cEBADHANDLE)
}

// ll_future_get_loop names the loop of a future or a task.
func TestFutureGetLoop(t *testing.T) {
	a, b := newLoop(t), newLoop(t)
	out := newOut(t)
	for _, l := range []*ll.Loop{a, b} {
		f := newFuture(t, l)
		task := newTask(t, l, func(tk *ll.Task) {
			if id, err := tk.LoopID(); id != l.ID() || err != nil {
				t.Errorf("LoopID in a step = %#x, %v; want %#x", id, err, l.ID())
			}
			tk.Return(0, nil)
		})
		s, err := l.Sleep(time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Release()
		g, _ := l.Gather([]*ll.Future{f, s}, false)
		defer g.Release()
		for name, fut := range map[string]*ll.Future{"future": f, "task": &task.Future, "sleep": s, "gather": g} {
			out.Set(0xdead)
			expect(t, "ll_future_get_loop("+name+")", raw.FutureGetLoop(fut.ID(), out.Ptr()), 0)
			if out.Value() != l.ID() {
				t.Errorf("ll_future_get_loop(%s) = %#x, want %#x", name, out.Value(), l.ID())
			}
			if id, err := fut.LoopID(); id != l.ID() || err != nil {
				t.Errorf("%s.LoopID() = %#x, %v", name, id, err)
			}
			if fut.Loop() != l {
				t.Errorf("%s.Loop() is not its loop", name)
			}
			expect(t, "ll_future_get_loop("+name+", NULL)", raw.FutureGetLoop(fut.ID(), nil), cEINVAL)
		}
		runUntil(t, l, &task.Future, 5*time.Second)
		// A done task still names its loop while the host holds it.
		out.Set(0xdead)
		expect(t, "ll_future_get_loop(done task)", raw.FutureGetLoop(task.ID(), out.Ptr()), 0)
		if out.Value() != l.ID() {
			t.Errorf("ll_future_get_loop(done task) = %#x", out.Value())
		}
		g.Cancel("") // and its children
		l.RunOnce(true)
		g.Exception() // as asyncio: a cancelled child fails the gather; retrieve it
	}
	// Bad ids.
	fx := newAIOFixture(t)
	staleFut, staleTask := staleIDs(t, fx.loop)
	handle := soonHandle(t, fx.loop, func() {})
	defer raw.Release(handle)
	for name, id := range map[string]uint64{
		"id 0":              0,
		"forged all-ones":   math.MaxUint64,
		"forged generation": fx.fut ^ 0x5a5a<<32,
		"forged slot":       1<<32 | 0xFFFFFF,
		"stale future":      staleFut,
		"stale task":        staleTask,
		"loop id":           fx.loop,
		"handle id":         handle,
	} {
		for _, p := range []bool{true, false} {
			out.Set(0xdead)
			ptr := out.Ptr()
			if !p {
				ptr = nil
			}
			expect(t, fmt.Sprintf("ll_future_get_loop(%s, out=%v)", name, p), raw.FutureGetLoop(id, ptr), cEBADHANDLE)
			if out.Value() != 0xdead {
				t.Errorf("ll_future_get_loop(%s) wrote %#x", name, out.Value())
			}
		}
	}
	assertAlive(t, fx.loop)
	assertAlive(t, a.ID())
}

// Tasks outlive a released loop while the host holds them: the outcome
// calls on them (through C or Go) are refused with LL_ESTATE, never crash,
// and ll_future_get_loop names the released loop, whose id is now stale.
func TestTaskSleepReleasedLoop(t *testing.T) {
	out := newOut(t)
	expect(t, "ll_loop_new", raw.LoopNew(out.Ptr()), 0)
	loop := out.Value()
	done := rawTask(t, loop, func(task uint64) { raw.TaskReturn(task, 0, 0) })
	yielded := rawTask(t, loop, func(task uint64) { raw.TaskSleep(task, 0) })
	asleep := rawTask(t, loop, func(task uint64) { raw.TaskSleep(task, 3600) })
	runNowait(t, loop)
	expect(t, "ll_release(loop)", raw.Release(loop), 0)
	for name, id := range map[string]uint64{"done": done, "yielded": yielded, "asleep": asleep} {
		for _, d := range []float64{0, -1, 0.1} {
			expect(t, fmt.Sprintf("ll_task_sleep(%s task, %g)", name, d), raw.TaskSleep(id, d), cESTATE)
		}
		expect(t, "ll_task_yield("+name+" task)", raw.TaskYield(id), cESTATE)
		expect(t, "ll_task_await(itself) ("+name+" task)", raw.TaskAwait(id, id), cESTATE)
		expect(t, "ll_task_return("+name+" task)", raw.TaskReturn(id, 0, 0), cESTATE)
		out.Set(0xdead)
		expect(t, "ll_future_get_loop("+name+" task)", raw.FutureGetLoop(id, out.Ptr()), 0)
		if out.Value() != loop {
			t.Errorf("ll_future_get_loop(%s task of a released loop) = %#x, want %#x", name, out.Value(), loop)
		}
		expect(t, "ll_loop_is_closed(the loop it names)", raw.IsClosed(out.Value()), cEBADHANDLE)
	}
	assertAlive(t, newRawLoop(t))
}
