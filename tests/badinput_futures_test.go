// SPDX-License-Identifier: MIT

package tests

import (
	"fmt"
	"math"
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
)

// The bad-input table for the Futures, Tasks, Executor and Host queue
// functions: every bad id, NULL out pointer, NULL function and bad number
// returns its documented code, writes nothing, runs nothing, and the loop
// goes on.

// aioFixture is a live loop with a pending future and a pending task on it.
type aioFixture struct {
	loop, fut, task uint64
	out             *ll.Out
}

func newAIOFixture(t *testing.T) *aioFixture {
	loop := newRawLoop(t)
	fx := &aioFixture{loop: loop, fut: newFut(t, loop), out: newOut(t)}
	fx.task = rawTask(t, loop, func(task uint64) { raw.TaskAwait(task, fx.fut) })
	runNowait(t, loop) // the task now awaits fut
	return fx
}

// rawTask makes a task with ll_task_new whose step is fn; the task is
// released and its step unregistered when t ends.
func rawTask(t *testing.T, loop uint64, fn func(task uint64)) uint64 {
	t.Helper()
	key := ll.RegisterCallback(fn, false)
	out := newOut(t)
	if rc := raw.TaskNew(loop, ll.CallbackPtr(), key, out.Ptr()); rc != 0 {
		t.Fatalf("ll_task_new = %s", codeString(int(rc)))
	}
	id := out.Value()
	t.Cleanup(func() { raw.Release(id); ll.Unregister(key) })
	return id
}

// staleIDs returns a future and a task that were released and disposed.
func staleIDs(t *testing.T, loop uint64) (fut, task uint64) {
	fut = newFut(t, loop)
	expect(t, "ll_release(future)", raw.Release(fut), 0)
	task = rawTask(t, loop, func(task uint64) { raw.TaskReturn(task, 0, 0) })
	runNowait(t, loop)
	expect(t, "ll_release(task)", raw.Release(task), 0)
	for name, id := range map[string]uint64{"future": fut, "task": task} {
		if rc := raw.FutureState(id); rc != cEBADHANDLE {
			t.Fatalf("released %s is still live: state %d", name, rc)
		}
	}
	return fut, task
}

func neverStep(t *testing.T) uintptr {
	key := ll.RegisterCallback(func(uint64) { t.Error("a refused call's step, callback or work ran") }, false)
	t.Cleanup(func() { ll.Unregister(key) })
	return key
}

// Functions that take a loop id reject a bad one with LL_EBADHANDLE.
func TestBadLoopIDsAIO(t *testing.T) {
	ids, alive := badIDs(t, false)
	fx := newAIOFixture(t)
	ids["future id as loop"] = fx.fut
	ids["task id as loop"] = fx.task
	never := neverStep(t)
	work := ll.RegisterWork(func() (uintptr, int) { t.Error("refused work ran"); return 0, 0 })
	defer ll.Unregister(work)
	arr, _ := ll.NewCIDs([]uint64{fx.fut})
	defer arr.Free()
	out := fx.out
	for name, id := range ids {
		calls := map[string]func() int32{
			"ll_future_new":                     func() int32 { return raw.FutureNew(id, out.Ptr()) },
			"ll_task_new":                       func() int32 { return raw.TaskNew(id, ll.CallbackPtr(), never, out.Ptr()) },
			"ll_current_task":                   func() int32 { return raw.CurrentTask(id, out.Ptr()) },
			"ll_all_tasks":                      func() int32 { return raw.AllTasks(id, out.Ptr(), 1) },
			"ll_loop_run_until_complete":        func() int32 { return raw.RunUntilComplete(id, fx.fut) },
			"ll_sleep":                          func() int32 { return raw.Sleep(id, 0, out.Ptr()) },
			"ll_gather":                         func() int32 { return raw.Gather(id, 1, arr.Ptr(), 0, out.Ptr()) },
			"ll_gather(no children)":            func() int32 { return raw.Gather(id, 0, nil, 1, out.Ptr()) },
			"ll_wait_for":                       func() int32 { return raw.WaitFor(id, fx.fut, 1, out.Ptr()) },
			"ll_run_in_executor":                func() int32 { return raw.RunInExecutor(id, ll.WorkPtr(), work, out.Ptr()) },
			"ll_loop_set_executor_workers":      func() int32 { return raw.SetExecutorWorkers(id, 2) },
			"ll_loop_shutdown_default_executor": func() int32 { return raw.ShutdownDefaultExecutor(id, out.Ptr()) },
			"ll_loop_set_host_queue":            func() int32 { return raw.SetHostQueue(id, ll.HostQueuePtr(), 1) },
			"ll_loop_set_host_queue(NULL)":      func() int32 { return raw.SetHostQueue(id, 0, 0) },
			"ll_loop_host_ready":                func() int32 { return raw.HostReady(id) },
		}
		for fn, call := range calls {
			out.Set(0xdead)
			expect(t, fmt.Sprintf("%s(%s)", fn, name), call(), cEBADHANDLE)
			if out.Value() != 0xdead {
				t.Errorf("%s(%s) wrote *out = %#x", fn, name, out.Value())
			}
		}
		assertAlive(t, alive)
		assertAlive(t, fx.loop)
	}
	expect(t, "the fixture's future is untouched", raw.FutureState(fx.fut), cPending)
}

// Functions that take a future (or task) id reject a bad one.
func TestBadFutureIDs(t *testing.T) {
	fx := newAIOFixture(t)
	staleFut, staleTask := staleIDs(t, fx.loop)
	handle := soonHandle(t, fx.loop, func() {})
	defer raw.Release(handle)
	ids := map[string]uint64{
		"id 0":                0,
		"forged all-ones":     math.MaxUint64,
		"forged generation":   fx.fut ^ 0x5a5a<<32,
		"forged slot":         1<<32 | 0xFFFFFF,
		"forged max slot":     0xFFFF_FFFF,
		"stale future":        staleFut,
		"stale task":          staleTask,
		"loop id as future":   fx.loop,
		"handle id as future": handle,
	}
	never := neverStep(t)
	cbuf, _ := ll.NewCBuf(24)
	defer cbuf.Free()
	out := fx.out
	for name, id := range ids {
		arr, _ := ll.NewCIDs([]uint64{fx.fut, id})
		calls := map[string]func() int32{
			"ll_future_state":                func() int32 { return raw.FutureState(id) },
			"ll_future_done":                 func() int32 { return raw.FutureDone(id) },
			"ll_future_set_result":           func() int32 { return raw.FutureSetResult(id, 1, 0) },
			"ll_future_set_exception":        func() int32 { return raw.FutureSetException(id, -5, nil, 0, 0) },
			"ll_future_cancel":               func() int32 { return raw.FutureCancel(id, nil) },
			"ll_future_result":               func() int32 { return raw.FutureResult(id, out.Ptr()) },
			"ll_future_exception":            func() int32 { return raw.FutureException(id, cbuf.Ptr(), ptrAt(cbuf, 8), out.Ptr()) },
			"ll_future_add_done_callback":    func() int32 { return raw.FutureAddDoneCallback(id, ll.CallbackPtr(), never) },
			"ll_future_remove_done_callback": func() int32 { return raw.FutureRemoveDoneCallback(id, ll.CallbackPtr(), never) },
			"ll_loop_run_until_complete":     func() int32 { return raw.RunUntilComplete(fx.loop, id) },
			"ll_wait_for":                    func() int32 { return raw.WaitFor(fx.loop, id, 1, out.Ptr()) },
			"ll_gather":                      func() int32 { return raw.Gather(fx.loop, 2, arr.Ptr(), 0, out.Ptr()) },
			"ll_task_await(good task)":       func() int32 { return raw.TaskAwait(fx.task, id) },
		}
		if name != "loop id as future" && name != "handle id as future" {
			calls["ll_release"] = func() int32 { return raw.Release(id) }
		}
		for fn, call := range calls {
			out.Set(0xdead)
			expect(t, fmt.Sprintf("%s(%s)", fn, name), call(), cEBADHANDLE)
			if out.Value() != 0xdead {
				t.Errorf("%s(%s) wrote *out = %#x", fn, name, out.Value())
			}
		}
		arr.Free()
		assertAlive(t, fx.loop)
	}
	expect(t, "the fixture's future is untouched", raw.FutureState(fx.fut), cPending)
	expect(t, "the fixture's task is untouched", raw.FutureState(fx.task), cPending)
	// Releasing twice is an error; the id is then stale.
	f := newFut(t, fx.loop)
	expect(t, "ll_release(future)", raw.Release(f), 0)
	expect(t, "ll_release(future, twice)", raw.Release(f), cEBADHANDLE)
	// Future and task ids are not handles.
	for _, id := range []uint64{fx.fut, fx.task} {
		expect(t, "ll_handle_cancel(future id)", raw.HandleCancel(id), cEBADHANDLE)
		expect(t, "ll_handle_cancelled(future id)", raw.HandleCancelled(id), cEBADHANDLE)
	}
	assertAlive(t, fx.loop)
}

// Functions that take a task id reject a bad one, a plain future included.
func TestBadTaskIDs(t *testing.T) {
	fx := newAIOFixture(t)
	staleFut, staleTask := staleIDs(t, fx.loop)
	ids := map[string]uint64{
		"id 0":              0,
		"forged all-ones":   math.MaxUint64,
		"forged generation": fx.task ^ 0x5a5a<<32,
		"stale task":        staleTask,
		"stale future":      staleFut,
		"plain future":      fx.fut,
		"loop id as task":   fx.loop,
	}
	out := fx.out
	for name, id := range ids {
		calls := map[string]func() int32{
			"ll_task_await":             func() int32 { return raw.TaskAwait(id, fx.fut) },
			"ll_task_yield":             func() int32 { return raw.TaskYield(id) },
			"ll_task_return":            func() int32 { return raw.TaskReturn(id, 1, 0) },
			"ll_task_raise":             func() int32 { return raw.TaskRaise(id, -5, nil, 0, 0) },
			"ll_task_awaited":           func() int32 { return raw.TaskAwaited(id, out.Ptr()) },
			"ll_task_must_raise_cancel": func() int32 { return raw.TaskMustRaiseCancel(id) },
			"ll_task_cancel":            func() int32 { return raw.TaskCancel(id, nil) },
			"ll_task_uncancel":          func() int32 { return raw.TaskUncancel(id) },
			"ll_task_cancelling":        func() int32 { return raw.TaskCancelling(id) },
		}
		for fn, call := range calls {
			out.Set(0xdead)
			expect(t, fmt.Sprintf("%s(%s)", fn, name), call(), cEBADHANDLE)
			if out.Value() != 0xdead {
				t.Errorf("%s(%s) wrote *out", fn, name)
			}
		}
		assertAlive(t, fx.loop)
	}
	expect(t, "the plain future was not cancelled", raw.FutureState(fx.fut), cPending)
	expect(t, "the task was not touched", raw.TaskCancelling(fx.task), 0)
}

// NULL out pointers and NULL functions are LL_EINVAL; nothing is created,
// scheduled or run.
func TestNullArgumentsAIO(t *testing.T) {
	fx := newAIOFixture(t)
	never := neverStep(t)
	work := ll.RegisterWork(func() (uintptr, int) { t.Error("refused work ran"); return 0, 0 })
	defer ll.Unregister(work)
	arr, _ := ll.NewCIDs([]uint64{fx.fut})
	defer arr.Free()
	out := fx.out
	calls := map[string]func() int32{
		"ll_future_new(out NULL)":                     func() int32 { return raw.FutureNew(fx.loop, nil) },
		"ll_task_new(out NULL)":                       func() int32 { return raw.TaskNew(fx.loop, ll.CallbackPtr(), never, nil) },
		"ll_current_task(out NULL)":                   func() int32 { return raw.CurrentTask(fx.loop, nil) },
		"ll_all_tasks(out NULL, cap 4)":               func() int32 { return raw.AllTasks(fx.loop, nil, 4) },
		"ll_sleep(out NULL)":                          func() int32 { return raw.Sleep(fx.loop, 0, nil) },
		"ll_gather(out NULL)":                         func() int32 { return raw.Gather(fx.loop, 1, arr.Ptr(), 0, nil) },
		"ll_gather(futs NULL, n 1)":                   func() int32 { return raw.Gather(fx.loop, 1, nil, 0, out.Ptr()) },
		"ll_wait_for(out NULL)":                       func() int32 { return raw.WaitFor(fx.loop, fx.fut, 1, nil) },
		"ll_run_in_executor(out NULL)":                func() int32 { return raw.RunInExecutor(fx.loop, ll.WorkPtr(), work, nil) },
		"ll_loop_shutdown_default_executor(out NULL)": func() int32 { return raw.ShutdownDefaultExecutor(fx.loop, nil) },
		"ll_task_awaited(out NULL)":                   func() int32 { return raw.TaskAwaited(fx.task, nil) },
		"ll_task_new(step NULL)":                      func() int32 { return raw.TaskNew(fx.loop, 0, never, out.Ptr()) },
		"ll_future_add_done_callback(cb NULL)":        func() int32 { return raw.FutureAddDoneCallback(fx.fut, 0, never) },
		"ll_run_in_executor(fn NULL)":                 func() int32 { return raw.RunInExecutor(fx.loop, 0, work, out.Ptr()) },
		"ll_run(step NULL)":                           func() int32 { return raw.Run(0, never, out.Ptr()) },
	}
	for fn, call := range calls {
		out.Set(0xdead)
		expect(t, fn, call(), cEINVAL)
		if out.Value() != 0xdead {
			t.Errorf("%s wrote *out = %#x", fn, out.Value())
		}
		assertAlive(t, fx.loop)
	}
	expect(t, "ll_all_tasks(NULL, cap 0) counts", raw.AllTasks(fx.loop, nil, 0), 1)
	expect(t, "ll_future_remove_done_callback(cb NULL) removes nothing", raw.FutureRemoveDoneCallback(fx.fut, 0, never), 0)
	// The shutdown refused above did not shut the executor down.
	key := ll.RegisterWork(func() (uintptr, int) { return 3, 0 })
	expect(t, "ll_run_in_executor after refused calls", raw.RunInExecutor(fx.loop, ll.WorkPtr(), key, out.Ptr()), 0)
	job := out.Value()
	defer raw.Release(job)
	for raw.FutureDone(job) != 1 {
		raw.RunOnce(fx.loop, cRunOnce)
	}
	if rc, v := result(t, job); rc != 0 || v != 3 {
		t.Fatalf("job result %s %d", codeString(rc), v)
	}
	expect(t, "no task was created", raw.AllTasks(fx.loop, nil, 0), 1)
	assertAlive(t, fx.loop)
}

// Bad numbers and codes are LL_EINVAL; the future stays as it was.
func TestBadValuesAIO(t *testing.T) {
	fx := newAIOFixture(t)
	out := fx.out
	for name, d := range map[string]float64{"NaN": math.NaN(), "+Inf": math.Inf(1), "1e300": 1e300} {
		out.Set(0xdead)
		expect(t, "ll_sleep("+name+")", raw.Sleep(fx.loop, d, out.Ptr()), cEINVAL)
		if out.Value() != 0xdead {
			t.Errorf("ll_sleep(%s) wrote *out", name)
		}
		assertAlive(t, fx.loop)
	}
	out.Set(0xdead)
	expect(t, "ll_wait_for(NaN)", raw.WaitFor(fx.loop, fx.fut, math.NaN(), out.Ptr()), cEINVAL)
	if out.Value() != 0xdead {
		t.Error("ll_wait_for(NaN) wrote *out")
	}
	expect(t, "ll_future_set_exception(code 0)", raw.FutureSetException(fx.fut, 0, nil, 0, 0), cEINVAL)
	expect(t, "ll_future_set_exception(LL_ECANCELLED)", raw.FutureSetException(fx.fut, cECANCELLED, nil, 0, 0), cEINVAL)
	for _, n := range []int32{0, -1, 1025, math.MinInt32} {
		expect(t, fmt.Sprintf("ll_loop_set_executor_workers(%d)", n), raw.SetExecutorWorkers(fx.loop, n), cEINVAL)
	}
	expect(t, "the future is still pending", raw.FutureState(fx.fut), cPending)
	assertAlive(t, fx.loop)
	// A delay <= 0 (even -Inf) is allowed: the future is finished already.
	for _, d := range []float64{0, -1, math.Inf(-1)} {
		expect(t, fmt.Sprintf("ll_sleep(%g)", d), raw.Sleep(fx.loop, d, out.Ptr()), 0)
		s := out.Value()
		expect(t, fmt.Sprintf("ll_sleep(%g) is finished", d), raw.FutureState(s), cFinished)
		raw.Release(s)
	}
	// ll_task_raise(code 0), inside a step.
	task := rawTask(t, fx.loop, func(task uint64) {
		expect(t, "ll_task_raise(code 0)", raw.TaskRaise(task, 0, nil, 0, 0), cEINVAL)
		raw.TaskReturn(task, 1, 0)
	})
	runNowait(t, fx.loop)
	if rc, v := result(t, task); rc != 0 || v != 1 {
		t.Fatalf("task after a refused raise: %s %d", codeString(rc), v)
	}
	assertAlive(t, fx.loop)
}

// Futures of another loop are LL_EINVAL for the calls that combine them.
func TestOtherLoopFutures(t *testing.T) {
	fx := newAIOFixture(t)
	other := newRawLoop(t)
	of := newFut(t, other)
	arr, _ := ll.NewCIDs([]uint64{fx.fut, of})
	defer arr.Free()
	out := fx.out
	out.Set(0xdead)
	expect(t, "ll_loop_run_until_complete(other loop's future)", raw.RunUntilComplete(fx.loop, of), cEINVAL)
	expect(t, "ll_gather(other loop's future)", raw.Gather(fx.loop, 2, arr.Ptr(), 0, out.Ptr()), cEINVAL)
	expect(t, "ll_wait_for(other loop's future)", raw.WaitFor(fx.loop, of, 1, out.Ptr()), cEINVAL)
	if out.Value() != 0xdead {
		t.Error("a refused call wrote *out")
	}
	expect(t, "other loop's future untouched", raw.FutureState(of), cPending)
	assertAlive(t, fx.loop)
	assertAlive(t, other)
}

// A closed loop refuses new futures, tasks and work with LL_ECLOSED; its
// futures still answer and can be released, freeing their values.
func TestClosedLoopAIO(t *testing.T) {
	loop := newRawLoop(t)
	f := newFut(t, loop)
	done := newFut(t, loop)
	expect(t, "set_result", raw.FutureSetResult(done, 5, 0), 0)
	never := neverStep(t)
	work := ll.RegisterWork(func() (uintptr, int) { t.Error("refused work ran"); return 0, 0 })
	defer ll.Unregister(work)
	arr, _ := ll.NewCIDs([]uint64{f})
	defer arr.Free()
	out := newOut(t)
	expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
	calls := map[string]func() int32{
		"ll_future_new":                     func() int32 { return raw.FutureNew(loop, out.Ptr()) },
		"ll_task_new":                       func() int32 { return raw.TaskNew(loop, ll.CallbackPtr(), never, out.Ptr()) },
		"ll_sleep":                          func() int32 { return raw.Sleep(loop, 0, out.Ptr()) },
		"ll_gather":                         func() int32 { return raw.Gather(loop, 1, arr.Ptr(), 0, out.Ptr()) },
		"ll_wait_for":                       func() int32 { return raw.WaitFor(loop, f, 1, out.Ptr()) },
		"ll_run_in_executor":                func() int32 { return raw.RunInExecutor(loop, ll.WorkPtr(), work, out.Ptr()) },
		"ll_loop_set_executor_workers":      func() int32 { return raw.SetExecutorWorkers(loop, 2) },
		"ll_loop_shutdown_default_executor": func() int32 { return raw.ShutdownDefaultExecutor(loop, out.Ptr()) },
		"ll_loop_run_until_complete":        func() int32 { return raw.RunUntilComplete(loop, f) },
	}
	for fn, call := range calls {
		out.Set(0xdead)
		expect(t, fn+"(closed loop)", call(), cECLOSED)
		if out.Value() != 0xdead {
			t.Errorf("%s on a closed loop wrote *out", fn)
		}
	}
	expect(t, "ll_future_state(future of a closed loop)", raw.FutureState(f), cPending)
	if rc, v := result(t, done); rc != 0 || v != 5 {
		t.Fatalf("result of a closed loop's future: %s %d", codeString(rc), v)
	}
	// Completing it is allowed but schedules nothing; its value is freed on release.
	log := &freeLog{}
	forget := ll.RegisterFree(0xc105, log.fn)
	fn, a := never2(t)
	expect(t, "add_done_callback(closed loop)", raw.FutureAddDoneCallback(f, fn, a), 0)
	if rc := raw.FutureSetResult(f, 0xc105, ll.FreePtr()); rc != 0 {
		forget()
		t.Fatalf("set_result on a closed loop's future = %s", codeString(int(rc)))
	}
	expect(t, "ll_release(loop)", raw.Release(loop), 0)
	expect(t, "ll_release(future of a released loop)", raw.Release(f), 0)
	if log.count(0xc105) != 1 {
		t.Fatalf("value freed %d times", log.count(0xc105))
	}
	expect(t, "ll_release(done future of a released loop)", raw.Release(done), 0)
	assertAlive(t, newRawLoop(t))
}

// never2 is never for a done callback (freed with the test).
func never2(t *testing.T) (uintptr, uintptr) {
	key := ll.RegisterCallback(func(uint64) { t.Error("done callback of a closed loop ran") }, true)
	t.Cleanup(func() { ll.Unregister(key) })
	return ll.CallbackPtr(), key
}
