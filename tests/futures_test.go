// SPDX-License-Identifier: MIT

package tests

import (
	"strings"
	"testing"
	"unsafe"

	ll "github.com/libloop/libloop/bindings/go"
)

// Futures: states, outcomes and their codes, done callbacks, host payloads.

func TestFutureResultStates(t *testing.T) {
	loop := newRawLoop(t)
	f := newFut(t, loop)
	expect(t, "ll_future_state(new)", raw.FutureState(f), cPending)
	expect(t, "ll_future_done(new)", raw.FutureDone(f), 0)
	rc, v := result(t, f)
	if rc != cESTATE || v != 0xdead {
		t.Errorf("ll_future_result(pending) = %s, wrote %#x; want LL_ESTATE, nothing written", codeString(rc), v)
	}
	expect(t, "ll_future_exception(pending)", raw.FutureException(f, nil, nil, nil), cESTATE)

	expect(t, "ll_future_set_result", raw.FutureSetResult(f, 42, 0), 0)
	expect(t, "ll_future_state(finished)", raw.FutureState(f), cFinished)
	expect(t, "ll_future_done(finished)", raw.FutureDone(f), 1)
	if rc, v := result(t, f); rc != 0 || v != 42 {
		t.Errorf("ll_future_result = %s, %d; want 0, 42", codeString(rc), v)
	}
	expect(t, "ll_future_result(out NULL)", raw.FutureResult(f, nil), 0)
	buf, err := ll.NewCBuf(24)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	ids := buf.Uint64s()
	ids[0], ids[2] = 0xdead, 0xdead
	expect(t, "ll_future_exception(result)", raw.FutureException(f, buf.Ptr(), nil, ptrAt(buf, 16)), 0)
	if int32(ids[0]) != 0 {
		t.Errorf("ll_future_exception of a result: code %d, want 0", int32(ids[0]))
	}
	// A done future refuses a second outcome and stays as it was.
	expect(t, "ll_future_set_result(again)", raw.FutureSetResult(f, 43, 0), cESTATE)
	expect(t, "ll_future_set_exception(done)", raw.FutureSetException(f, -5, nil, 0, 0), cESTATE)
	expect(t, "ll_future_cancel(done)", raw.FutureCancel(f, nil), 0)
	if rc, v := result(t, f); rc != 0 || v != 42 {
		t.Errorf("after refused outcomes: ll_future_result = %s, %d", codeString(rc), v)
	}
	assertAlive(t, loop)
}

func TestFutureExceptionAndCancel(t *testing.T) {
	l := newLoop(t)
	f := newFuture(t, l)
	expectErr(t, "SetException(code 0)", f.SetException(0, "x", 0, nil), cEINVAL)
	expectErr(t, "SetException(LL_ECANCELLED)", f.SetException(cECANCELLED, "x", 0, nil), cEINVAL)
	if st, _ := f.State(); st != ll.Pending {
		t.Fatalf("a refused set_exception changed the state to %v", st)
	}
	expectErr(t, "SetException", f.SetException(-5, "disk on fire", 7, nil), 0)
	if st, _ := f.State(); st != ll.Finished || !f.Done() {
		t.Fatalf("failed future: state %v done %v", st, f.Done())
	}
	_, err := f.Result()
	expectErr(t, "Result(failed)", err, -5)
	exc, err := f.Exception()
	if err != nil || exc == nil || exc.Code != -5 || exc.Message != "disk on fire" || exc.Payload != 7 {
		t.Fatalf("Exception() = %+v, %v", exc, err)
	}
	expectErr(t, "SetResult(failed)", f.SetResult(1, nil), cESTATE)
	// The message pointer stays valid while the id does.
	buf, _ := ll.NewCBuf(8)
	defer buf.Free()
	expect(t, "ll_future_exception(message only)", raw.FutureException(f.ID(), nil, buf.Ptr(), nil), 0)
	msg := *(*unsafe.Pointer)(buf.Ptr())
	raw.FutureResult(f.ID(), nil) // other calls leave it valid
	f.Exception()
	if got := ll.GoString(msg); got != "disk on fire" {
		t.Fatalf("message %q", got)
	}

	c := newFuture(t, l)
	if ok, err := c.Cancel("stop it"); !ok || err != nil {
		t.Fatalf("Cancel = %v, %v", ok, err)
	}
	if st, _ := c.State(); st != ll.Cancelled || !c.Done() {
		t.Fatalf("cancelled future: state %v", st)
	}
	_, err = c.Result()
	expectErr(t, "Result(cancelled)", err, cECANCELLED)
	_, err = c.Exception()
	expectErr(t, "Exception(cancelled)", err, cECANCELLED)
	if ok, err := c.Cancel(""); ok || err != nil {
		t.Fatalf("second Cancel = %v, %v; want false", ok, err)
	}
	expectErr(t, "SetResult(cancelled)", c.SetResult(1, nil), cESTATE)
	expectErr(t, "SetException(cancelled)", c.SetException(-5, "", 0, nil), cESTATE)
	assertAlive(t, l.ID())
}

// Done callbacks are scheduled with call_soon in registration order, never
// called synchronously, and get the future's id.
func TestFutureDoneCallbacksOrder(t *testing.T) {
	inModes(t, func(t *testing.T, loop uint64) {
		f := newFut(t, loop)
		r := &recorder{}
		done := func(name string) {
			fn, arg := cb(func(id uint64) {
				r.add(name)()
				if id != f {
					t.Errorf("done callback %s got id %#x, want the future %#x", name, id, f)
				}
			})
			expect(t, "ll_future_add_done_callback", raw.FutureAddDoneCallback(f, fn, arg), 0)
		}
		soon(t, loop, r.add("soon before"))
		done("A")
		done("B")
		done("C")
		expect(t, "ll_future_set_result", raw.FutureSetResult(f, 1, 0), 0)
		soon(t, loop, r.add("soon after"))
		if len(r.got) != 0 {
			t.Fatalf("ran synchronously: %v", r)
		}
		runNowait(t, loop)
		if !r.equal("soon before", "A", "B", "C", "soon after") {
			t.Fatalf("order %v", r)
		}
		// Added to a done future: scheduled at once, run in the next iteration.
		r.got = nil
		done("late")
		if len(r.got) != 0 {
			t.Fatal("a callback added to a done future ran synchronously")
		}
		runNowait(t, loop)
		if !r.equal("late") {
			t.Fatalf("late callback: %v", r)
		}
		// Callbacks added by a done callback run after the others.
		g := newFut(t, loop)
		r.got = nil
		fn, arg := cb(func(uint64) {
			r.add("first")()
			f2, a2 := cb(func(uint64) { r.add("added while running")() })
			raw.FutureAddDoneCallback(g, f2, a2)
		})
		raw.FutureAddDoneCallback(g, fn, arg)
		f3, a3 := cb(func(uint64) { r.add("second")() })
		raw.FutureAddDoneCallback(g, f3, a3)
		raw.FutureCancel(g, nil)
		runNowait(t, loop)
		runNowait(t, loop)
		if !r.equal("first", "second", "added while running") {
			t.Fatalf("order %v", r)
		}
		assertAlive(t, loop)
	})
}

func TestFutureRemoveDoneCallback(t *testing.T) {
	loop := newRawLoop(t)
	f := newFut(t, loop)
	ranK, ranK2 := 0, 0
	k := ll.RegisterCallback(func(uint64) { ranK++ }, false)
	defer ll.Unregister(k)
	k2 := ll.RegisterCallback(func(uint64) { ranK2++ }, false)
	defer ll.Unregister(k2)
	p := ll.CallbackPtr()
	expect(t, "add(k)", raw.FutureAddDoneCallback(f, p, k), 0)
	expect(t, "add(k2)", raw.FutureAddDoneCallback(f, p, k2), 0)
	expect(t, "add(k) again", raw.FutureAddDoneCallback(f, p, k), 0)
	expect(t, "remove(k)", raw.FutureRemoveDoneCallback(f, p, k), 2)
	expect(t, "remove(k) again", raw.FutureRemoveDoneCallback(f, p, k), 0)
	expect(t, "remove(other fn, k2)", raw.FutureRemoveDoneCallback(f, ll.IOCallbackPtr(), k2), 0)
	expect(t, "ll_future_set_result", raw.FutureSetResult(f, 0, 0), 0)
	// Once scheduled, a registration can no longer be removed.
	expect(t, "remove(k2) after done", raw.FutureRemoveDoneCallback(f, p, k2), 0)
	runNowait(t, loop)
	if ranK != 0 || ranK2 != 1 {
		t.Fatalf("removed callback ran %d times, kept one %d times", ranK, ranK2)
	}
	// Through the binding: one registration per id.
	l := newLoop(t)
	g := newFuture(t, l)
	ran := false
	id, err := g.AddDoneCallback(func(*ll.Future) { ran = true })
	if err != nil {
		t.Fatal(err)
	}
	if n, err := g.RemoveDoneCallback(id); n != 1 || err != nil {
		t.Fatalf("RemoveDoneCallback = %d, %v", n, err)
	}
	if n, _ := g.RemoveDoneCallback(id); n != 0 {
		t.Fatalf("second RemoveDoneCallback = %d", n)
	}
	g.SetResult(0, nil)
	l.RunOnce(true)
	if ran {
		t.Fatal("a removed done callback ran")
	}
	assertAlive(t, loop)
	assertAlive(t, l.ID())
}

// A result or payload is freed exactly once, when neither the host nor the
// loop references the future any more; a refused outcome's value never is.
func TestFutureFreeExactlyOnce(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveFrees()
	log := &freeLog{}
	f := newFuture(t, l)
	expectErr(t, "SetResult", f.SetResult(0x1001, log.fn), 0)
	expectErr(t, "SetResult(again)", f.SetResult(0x1002, log.fn), cESTATE)
	l.RunOnce(true)
	if n := len(log.calls()); n != 0 {
		t.Fatalf("freed %d times while the host holds the future", n)
	}
	release(t, f)
	if log.count(0x1001) != 1 || len(log.calls()) != 1 {
		t.Fatalf("frees after release: %#x", log.calls())
	}

	// A done callback scheduled when the host releases keeps the future (and
	// its value) alive until it has run: it can still read the result.
	g, _ := l.NewFuture()
	if _, err := g.AddDoneCallback(func(g *ll.Future) {
		exc, err := g.Exception()
		if err != nil || exc == nil || exc.Payload != 0x2001 {
			t.Errorf("done callback after release: Exception() = %+v, %v", exc, err)
		}
		if log.count(0x2001) != 0 {
			t.Error("payload freed before the done callback ran")
		}
	}); err != nil {
		t.Fatal(err)
	}
	gid := g.ID()
	g.SetException(-5, "failed", 0x2001, log.fn)
	release(t, g)
	l.RunOnce(true)
	if log.count(0x2001) != 1 {
		t.Fatalf("payload freed %d times", log.count(0x2001))
	}
	expect(t, "ll_future_state(disposed)", raw.FutureState(gid), cEBADHANDLE)

	// Cancelled or released pending: nothing to free. Every Go free func the
	// binding recorded has been called or forgotten.
	c, _ := l.NewFuture()
	c.Cancel("")
	release(t, c)
	p, _ := l.NewFuture()
	release(t, p)
	l.RunOnce(true)
	if n := ll.LiveFrees(); n != base {
		t.Fatalf("%d Go free funcs left (base %d)", n, base)
	}
	if len(log.calls()) != 2 {
		t.Fatalf("frees %#x", log.calls())
	}
	assertAlive(t, l.ID())
}

// A failed future released with its exception never retrieved is reported
// to the exception handler (asyncio's "exception was never retrieved").
func TestFutureNeverRetrieved(t *testing.T) {
	l := newLoop(t)
	var got []ll.ErrorContext
	if err := l.SetExceptionHandler(func(c ll.ErrorContext) { got = append(got, c) }); err != nil {
		t.Fatal(err)
	}
	f, _ := l.NewFuture()
	fid := f.ID()
	f.SetException(-5, "nobody looked", 0, nil)
	release(t, f)
	if len(got) != 1 || got[0].Future != fid || got[0].Code != -5 || got[0].Loop != l.ID() ||
		!strings.Contains(got[0].Message, "never retrieved") || !strings.Contains(got[0].Message, "nobody looked") {
		t.Fatalf("reports %+v", got)
	}
	// Retrieved with Exception or Result, cancelled, or finished: no report.
	got = nil
	for i, how := range []func(*ll.Future){
		func(f *ll.Future) { f.SetException(-5, "", 0, nil); f.Exception() },
		func(f *ll.Future) { f.SetException(-5, "", 0, nil); f.Result() },
		func(f *ll.Future) { f.Cancel("") },
		func(f *ll.Future) { f.SetResult(1, nil) },
	} {
		f, _ := l.NewFuture()
		how(f)
		release(t, f)
		if len(got) != 0 {
			t.Fatalf("case %d reported %+v", i, got)
		}
	}
	// A failed task is reported with its id as the task.
	task, _ := l.NewTask(func(tk *ll.Task) { tk.Raise(-7, "task failed", 0, nil) })
	tid := task.ID()
	l.RunOnce(true)
	release(t, task)
	l.RunOnce(true) // the done callbacks scheduled when it failed hold it until they run
	if len(got) != 1 || got[0].Task != tid || got[0].Future != tid || got[0].Code != -7 {
		t.Fatalf("task report %+v", got)
	}
	assertAlive(t, l.ID())
}
