// SPDX-License-Identifier: MIT

package tests

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// TypedFuture and TypedTask through libloop.so: what a Go program relies
// on is that its value comes back as the same Go value, that its error
// comes back as the same error (and the C future carries a code a C host
// reads), that cancellation reads as context.Canceled, that Wait ends with
// its context, and that the Go-side table does not grow.

// settle runs the loop until nothing is ready, so done callbacks have run
// and the library has freed what it no longer references.
func settle(t *testing.T, l *ll.Loop) {
	t.Helper()
	for range 3 {
		if err := l.RunOnce(true); err != nil {
			t.Fatalf("RunOnce: %v", err)
		}
	}
}

// checkNoTypedLeak fails if the table holds more entries than base once
// the test's futures are released and the loop settled.
func checkNoTypedLeak(t *testing.T, base int) {
	t.Helper()
	if n := ll.LiveTypedValues(); n != base {
		t.Errorf("typed-value table holds %d entries, want %d", n, base)
	}
}

type point struct{ X, Y int }

func TestGoAPITypedFutureValueRoundTrips(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveTypedValues()

	p := &point{1, 2}
	fp, err := ll.NewTypedFuture[*point](l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fp.Result(); !errors.Is(err, ll.ESTATE) {
		t.Errorf("Result while pending = %v, want ESTATE", err)
	}
	if err := fp.SetResult(p); err != nil {
		t.Fatal(err)
	}
	if got, err := fp.Result(); err != nil || got != p {
		t.Errorf("Result = %p, %v; want the same pointer %p", got, err, p)
	}
	if err := fp.SetResult(&point{}); !errors.Is(err, ll.ESTATE) {
		t.Errorf("second SetResult = %v, want ESTATE", err)
	}
	if ll.LiveTypedValues() != base+1 {
		t.Errorf("a refused SetResult left an entry: %d, want %d", ll.LiveTypedValues(), base+1)
	}

	m := map[string][]int{"a": {1, 2}}
	fm, _ := ll.NewTypedFuture[map[string][]int](l)
	fm.SetResult(m)
	got, err := fm.Result()
	got["b"] = nil // the very map, not a copy
	if err != nil || len(m) != 2 {
		t.Errorf("map result %v, %v: not the value given", got, err)
	}

	// An interface type: a nil value round-trips.
	fErr, _ := ll.NewTypedFuture[error](l)
	fErr.SetResult(nil)
	if v, err := fErr.Result(); v != nil || err != nil {
		t.Errorf("nil interface result = %v, %v", v, err)
	}

	// A value set through the untyped future is refused, not misread.
	raw, _ := ll.NewTypedFuture[int](l)
	raw.Future().SetResult(7, nil)
	if _, err := raw.Result(); !errors.Is(err, ll.EINVAL) {
		t.Errorf("Result of an untyped word = %v, want an error matching EINVAL", err)
	}

	for _, f := range []interface{ Release() error }{fp, fm, fErr, raw} {
		f.Release()
	}
	settle(t, l)
	checkNoTypedLeak(t, base)
}

// codedErr is an error type of the program's own.
type codedErr struct{ code int }

func (e *codedErr) Error() string { return fmt.Sprintf("coded %d", e.code) }

func TestGoAPITypedFutureErrors(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveTypedValues()

	// The program's error comes back as is; the C future carries EINVAL
	// and the message for a C host.
	mine := &codedErr{7}
	f1, _ := ll.NewTypedFuture[string](l)
	if err := f1.SetError(fmt.Errorf("loading: %w", mine)); err != nil {
		t.Fatal(err)
	}
	_, err := f1.Result()
	var ce *codedErr
	if !errors.As(err, &ce) || ce != mine || err.Error() != "loading: coded 7" {
		t.Errorf("Result error %v (%T), want the wrapped *codedErr", err, err)
	}

	// An errno keeps its code on the C side.
	f2, _ := ll.NewTypedFuture[string](l)
	f2.SetError(fmt.Errorf("peer: %w", syscall.ECONNRESET))
	if _, err := f2.Result(); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("Result = %v, want ECONNRESET", err)
	}
	if fe, err := f2.Future().Exception(); err != nil || fe == nil || fe.Code != ll.Error(-int(syscall.ECONNRESET)) || fe.Message != "peer: connection reset by peer" {
		t.Errorf("the C future's exception = %+v, %v; want -ECONNRESET and the message", fe, err)
	}

	// A deadline is ETIMEDOUT for C, context.DeadlineExceeded for Go.
	f3, _ := ll.NewTypedFuture[int](l)
	f3.SetError(context.DeadlineExceeded)
	if _, err := f3.Result(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Result = %v, want context.DeadlineExceeded", err)
	}
	if fe, _ := f3.Future().Exception(); fe == nil || fe.Code != ll.ETIMEDOUT {
		t.Errorf("the C code of DeadlineExceeded = %+v, want ETIMEDOUT", fe)
	}

	// context.Canceled cancels the future.
	f4, _ := ll.NewTypedFuture[int](l)
	if err := f4.SetError(context.Canceled); err != nil {
		t.Fatal(err)
	}
	if st, _ := f4.Future().State(); st != ll.Cancelled {
		t.Errorf("SetError(context.Canceled) left the future %v, want cancelled", st)
	}
	if _, err := f4.Result(); !errors.Is(err, context.Canceled) || !errors.Is(err, ll.ECANCELLED) {
		t.Errorf("Result of a cancelled future = %v, want ECANCELLED matching context.Canceled", err)
	}

	// A failure set by other code (the untyped layer, a C host) reads as
	// a *FutureError with its code and message.
	f5, _ := ll.NewTypedFuture[int](l)
	f5.Future().SetException(int(ll.ETLSCERT), "bad cert", 99, nil)
	_, err = f5.Result()
	var fe *ll.FutureError
	if !errors.As(err, &fe) || fe.Message != "bad cert" || !errors.Is(err, ll.ETLSCERT) {
		t.Errorf("Result = %v (%T), want a *FutureError for ETLSCERT", err, err)
	}

	if err := f1.SetError(nil); !errors.Is(err, ll.EINVAL) {
		t.Errorf("SetError(nil) = %v, want EINVAL", err)
	}
	if err := f1.SetError(errors.New("again")); !errors.Is(err, ll.ESTATE) {
		t.Errorf("SetError on a done future = %v, want ESTATE", err)
	}
	for _, f := range []*ll.TypedFuture[int]{f3, f4, f5} {
		f.Release()
	}
	f1.Release()
	f2.Release()
	settle(t, l)
	checkNoTypedLeak(t, base)
}

// A typed future awaited by a task, and gathered: the untyped future
// underneath is what the loop's machinery takes.
func TestGoAPITypedFutureInTasksAndGather(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveTypedValues()
	a, _ := ll.NewTypedFuture[string](l)
	b, _ := ll.NewTypedFuture[[]byte](l)
	g, err := l.Gather([]*ll.Future{a.Future(), b.Future()}, false)
	if err != nil {
		t.Fatal(err)
	}
	l.CallLater(time.Millisecond, func() { a.SetResult("A") })
	l.CallLater(2*time.Millisecond, func() { b.SetResult([]byte("B")) })
	task, _ := ll.NewTypedTask(l, func(tt *ll.TypedTask[string]) {
		if w, _ := tt.Awaited(); w == nil {
			tt.Await(g)
			return
		}
		av, _ := a.Result()
		bv, _ := b.Result()
		tt.Return(av + string(bv))
	})
	if err := l.RunUntilComplete(&task.Future); err != nil {
		t.Fatal(err)
	}
	if v, err := task.Result(); v != "AB" || err != nil {
		t.Errorf("task result %q, %v; want AB", v, err)
	}
	if v, err := task.Typed().Result(); v != "AB" || err != nil {
		t.Errorf("task.Typed().Result() = %q, %v", v, err)
	}
	g.Release()
	a.Release()
	b.Release()
	task.Release()
	settle(t, l)
	checkNoTypedLeak(t, base)
}

func TestGoAPITypedTaskRaise(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveTypedValues()
	mine := &codedErr{3}
	failing, _ := ll.NewTypedTask(l, func(tt *ll.TypedTask[int]) { tt.Raise(mine) })
	cancelled, _ := ll.NewTypedTask(l, func(tt *ll.TypedTask[int]) { tt.Raise(context.Canceled) })
	// Cancelled during the step that returns: the value is dropped at once.
	var dropped *ll.TypedTask[*point]
	dropped, _ = ll.NewTypedTask(l, func(tt *ll.TypedTask[*point]) {
		dropped.Cancel("stop")
		if err := tt.Return(&point{}); err != nil {
			t.Errorf("Return after a cancel in the same step = %v", err)
		}
	})
	all, _ := l.Gather([]*ll.Future{&failing.Future, &cancelled.Future, &dropped.Future}, true)
	if err := l.RunUntilComplete(all); err != nil {
		t.Fatal(err)
	}
	if _, err := failing.Result(); err != error(mine) {
		t.Errorf("Raise(mine): Result error %v, want the same error", err)
	}
	if _, err := cancelled.Result(); !errors.Is(err, context.Canceled) {
		t.Errorf("Raise(context.Canceled): Result error %v, want context.Canceled", err)
	}
	if st, _ := dropped.State(); st != ll.Cancelled {
		t.Errorf("a task cancelled in its returning step ended %v", st)
	}
	if _, err := dropped.Result(); !errors.Is(err, ll.ECANCELLED) {
		t.Errorf("its Result = %v, want ECANCELLED", err)
	}
	if n := ll.LiveTypedValues(); n != base+1 { // failing's error only
		t.Errorf("table holds %d entries before release, want %d (the dropped value freed at once)", n, base+1)
	}
	for _, tk := range []*ll.Task{failing.Task, cancelled.Task, dropped.Task} {
		tk.Release()
	}
	all.Release()
	settle(t, l)
	checkNoTypedLeak(t, base)
}

// Wait from another goroutine: the value, the error, a context that ends
// first (the future ends cancelled), a loop that closes first.
func TestGoAPITypedFutureWait(t *testing.T) {
	l, stop := runningLoop(t)
	base := ll.LiveTypedValues()
	var val, fail, never *ll.TypedFuture[[]int]
	onLoop(t, l, func() {
		val, _ = ll.NewTypedFuture[[]int](l)
		fail, _ = ll.NewTypedFuture[[]int](l)
		never, _ = ll.NewTypedFuture[[]int](l)
		l.CallLater(2*time.Millisecond, func() { val.SetResult([]int{4, 2}) })
		l.CallLater(3*time.Millisecond, func() { fail.SetError(&codedErr{1}) })
	})
	ctx := context.Background()
	if v, err := ll.Await(ctx, val); err != nil || len(v) != 2 || v[0] != 4 {
		t.Errorf("Await = %v, %v; want [4 2]", v, err)
	}
	var ce *codedErr
	if _, err := fail.Wait(ctx); !errors.As(err, &ce) || ce.code != 1 {
		t.Errorf("Wait on a failed future = %v, want the *codedErr", err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if _, err := never.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait past its context = %v, want DeadlineExceeded", err)
	}
	if time.Since(t0) > 2*time.Second {
		t.Errorf("Wait took %v after its context ended", time.Since(t0))
	}
	onLoop(t, l, func() {
		if st, _ := never.Future().State(); st != ll.Cancelled {
			t.Errorf("the future whose Wait gave up is %v, want cancelled", st)
		}
		if _, err := never.Result(); !errors.Is(err, context.Canceled) {
			t.Errorf("its Result = %v, want ECANCELLED matching context.Canceled", err)
		}
	})
	done, cancelNow := context.WithCancel(ctx)
	cancelNow()
	if _, err := val.Wait(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a done context = %v, want context.Canceled", err)
	}
	var pending *ll.TypedFuture[int]
	onLoop(t, l, func() {
		pending, _ = ll.NewTypedFuture[int](l)
		val.Release()
		fail.Release()
		never.Release()
	})
	ended := make(chan error, 1)
	go func() { _, err := pending.Wait(ctx); ended <- err }()
	time.Sleep(5 * time.Millisecond)
	stop() // stops and releases the loop: pending's wait must end
	select {
	case err := <-ended:
		if !errors.Is(err, ll.ECLOSED) {
			t.Errorf("Wait across the loop's close = %v, want ECLOSED", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not end when the loop closed")
	}
	checkNoTypedLeak(t, base)
}

// Many typed futures made, settled and released leave the table as it
// was; an entry lives while the loop still holds its future (a done
// callback scheduled reads the value after the host's Release).
func TestGoAPITypedFutureNoLeak(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveTypedValues()
	frees := ll.LiveFrees()
	held, read := 0, 0
	for i := range 200 {
		f, err := ll.NewTypedFuture[int](l)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0:
			f.SetResult(i)
		case 1:
			f.SetError(errors.New("no"))
			f.Result() // retrieved: nothing reported at release
		case 2:
			f.Cancel("")
		}
		if i%2 == 0 {
			if i%3 != 2 {
				held++
			}
			f.Future().AddDoneCallback(func(*ll.Future) {
				if v, err := f.Result(); i%3 == 0 && (err != nil || v != i) {
					t.Errorf("after Release, a done callback read %d, %v; want %d", v, err, i)
				}
				read++
			})
		}
		f.Release()
	}
	if n := ll.LiveTypedValues(); n != base+held {
		t.Errorf("before the loop ran the table holds %d entries, want %d (those of futures the loop still holds)", n-base, held)
	}
	settle(t, l)
	if read != 100 {
		t.Errorf("%d done callbacks ran, want 100", read)
	}
	checkNoTypedLeak(t, base)
	if n := ll.LiveFrees(); n != frees {
		t.Errorf("%d free funcs left registered, want %d", n, frees)
	}
}

// RunTyped (asyncio.run) hands the task's value to the caller and takes it
// out of the table; a raised error comes back as is.
func TestGoAPITypedRun(t *testing.T) {
	base, frees := ll.LiveTypedValues(), ll.LiveFrees()
	p := &point{5, 6}
	steps := 0
	got, err := ll.RunTyped(func(tt *ll.TypedTask[*point]) {
		if steps++; steps == 1 {
			tt.Sleep(time.Millisecond)
			return
		}
		tt.Return(p)
	})
	if got != p || err != nil || steps != 2 {
		t.Errorf("RunTyped = %p, %v after %d steps; want %p after 2", got, err, steps, p)
	}
	mine := &codedErr{9}
	if _, err := ll.RunTyped(func(tt *ll.TypedTask[int]) { tt.Raise(mine) }); err != error(mine) {
		t.Errorf("RunTyped of a raising task = %v, want the raised error", err)
	}
	if _, err := ll.RunTyped(func(tt *ll.TypedTask[int]) { tt.Raise(context.Canceled) }); !errors.Is(err, context.Canceled) {
		t.Errorf("RunTyped of a cancelled task = %v, want context.Canceled", err)
	}
	if _, err := ll.RunTyped(func(tt *ll.TypedTask[int]) { tt.Task.Return(3, nil) }); !errors.Is(err, ll.EINVAL) {
		t.Errorf("RunTyped of an untyped Return = %v, want EINVAL", err)
	}
	checkNoTypedLeak(t, base)
	if n := ll.LiveFrees(); n != frees {
		t.Errorf("%d free funcs left registered, want %d", n, frees)
	}
}
