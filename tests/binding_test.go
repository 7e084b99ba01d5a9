// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// The idiomatic layer of the binding over the same library.

func TestBindingLoop(t *testing.T) {
	l := newLoop(t)
	if l.ID() == 0 || l.IsRunning() || l.IsClosed() || l.Debug() {
		t.Fatalf("new loop: id %#x running %v closed %v debug %v", l.ID(), l.IsRunning(), l.IsClosed(), l.Debug())
	}
	r := &recorder{}
	var h1 *ll.Handle
	h1, err := l.CallSoon(func() {
		r.add("soon")()
		if !l.IsRunning() {
			t.Error("IsRunning false inside a callback")
		}
	})
	if err != nil || h1.ID() == 0 || h1.When() != 0 {
		t.Fatalf("CallSoon: %v id %#x when %g", err, h1.ID(), h1.When())
	}
	t0 := l.Time()
	hl, err := l.CallLater(20*time.Millisecond, r.add("later"))
	if err != nil || hl.When() < t0+0.02 || hl.When() > l.Time()+0.02 {
		t.Fatalf("CallLater: %v when %g (now %g)", err, hl.When(), t0)
	}
	ha, err := l.CallAt(t0+0.01, r.add("at"))
	if err != nil || ha.When() != raw.TimerWhen(ha.ID()) {
		t.Fatalf("CallAt: %v when %g", err, ha.When())
	}
	hc, err := l.CallLater(5*time.Millisecond, r.add("cancelled"))
	if err != nil {
		t.Fatal(err)
	}
	if err := hc.Cancel(); err != nil || !hc.Cancelled() {
		t.Fatalf("Cancel: %v cancelled %v", err, hc.Cancelled())
	}
	if _, err := l.CallLater(30*time.Millisecond, func() {
		if err := l.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if !r.equal("soon", "at", "later") || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("ran %v after %v", r, time.Since(start))
	}
	// Handles that ran or were cancelled released their library id.
	for _, h := range []*ll.Handle{h1, hl, ha, hc} {
		if h.ID() != 0 {
			t.Errorf("handle still holds library id %#x", h.ID())
		}
		if err := h.Cancel(); err != nil {
			t.Errorf("Cancel after run: %v", err)
		}
		if err := h.Release(); err != nil {
			t.Errorf("Release after run: %v", err)
		}
	}
	if h1.Cancelled() || !hc.Cancelled() {
		t.Error("Cancelled() wrong after the run")
	}
	if err := l.SetDebug(true); err != nil || !l.Debug() {
		t.Fatalf("SetDebug: %v", err)
	}
	if err := l.SetSlowCallbackDuration(time.Second); err != nil {
		t.Fatal(err)
	}
	if err := l.SetSlowCallbackDuration(-time.Second); !errors.Is(err, ll.EINVAL) {
		t.Fatalf("negative slow duration: %v", err)
	}
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil || !l.IsClosed() {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.CallSoon(func() {}); !errors.Is(err, ll.ECLOSED) {
		t.Fatalf("CallSoon on a closed loop: %v", err)
	}
	if err := l.RunOnce(true); !errors.Is(err, ll.ECLOSED) || !strings.Contains(err.Error(), "LL_ECLOSED") {
		t.Fatalf("RunOnce on a closed loop: %v", err)
	}
	if err := l.Release(); err != nil || l.ID() != 0 {
		t.Fatalf("Release: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}

func TestBindingHandleReleasedEarlyStillRuns(t *testing.T) {
	l := newLoop(t)
	n := 0
	h, err := l.CallSoon(func() { n++ })
	if err != nil {
		t.Fatal(err)
	}
	id := h.ID()
	if err := h.Release(); err != nil || h.ID() != 0 {
		t.Fatal(err)
	}
	expect(t, "ll_handle_cancelled(released by the binding)", raw.HandleCancelled(id), cEBADHANDLE)
	if err := h.Cancel(); !errors.Is(err, ll.EBADHANDLE) {
		t.Fatalf("Cancel after Release: %v", err)
	}
	if err := l.RunOnce(true); err != nil || n != 1 {
		t.Fatalf("run: %v, callback ran %d times", err, n)
	}
}

func TestBindingFds(t *testing.T) {
	l := newLoop(t)
	r, w := pipe(t)
	var reads, writes []int
	if err := l.AddReader(r, func(fd int) { reads = append(reads, fd) }); err != nil {
		t.Fatal(err)
	}
	if err := l.AddWriter(w, func(fd int) { writes = append(writes, fd) }); err != nil {
		t.Fatal(err)
	}
	unix.Write(w, []byte("x"))
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if len(reads) != 1 || reads[0] != r || len(writes) != 1 || writes[0] != w {
		t.Fatalf("reads %v writes %v", reads, writes)
	}
	for _, c := range []struct {
		name string
		fn   func(int) (bool, error)
		fd   int
	}{{"RemoveReader", l.RemoveReader, r}, {"RemoveWriter", l.RemoveWriter, w}} {
		if ok, err := c.fn(c.fd); !ok || err != nil {
			t.Fatalf("%s: %v %v", c.name, ok, err)
		}
		if ok, err := c.fn(c.fd); ok || err != nil {
			t.Fatalf("second %s: %v %v", c.name, ok, err)
		}
	}
	closed, w2 := pipe(t)
	unix.Close(closed)
	unix.Close(w2)
	err := l.AddReader(closed, func(int) {})
	if !errors.Is(err, syscall.EBADF) || !strings.Contains(err.Error(), "EBADF") {
		t.Fatalf("AddReader(closed fd): %v", err)
	}
}

func TestBindingThreadsafeAndWakeup(t *testing.T) {
	l := newLoop(t)
	const posters, each = 4, 250
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for g := 0; g < posters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := l.CallSoonThreadsafe(func() {
					mu.Lock()
					total++
					done := total == posters*each
					mu.Unlock()
					if done {
						l.Stop()
					}
				})
				if err != nil {
					t.Errorf("CallSoonThreadsafe: %v", err)
					return
				}
				if err := l.Wakeup(); err != nil {
					t.Errorf("Wakeup: %v", err)
					return
				}
			}
		}()
	}
	timer := time.AfterFunc(10*time.Second, func() { l.CallSoonThreadsafe(func() { l.Stop() }) })
	err := l.RunForever()
	timer.Stop()
	wg.Wait()
	if err != nil || total != posters*each {
		t.Fatalf("RunForever %v; %d of %d callbacks ran", err, total, posters*each)
	}
}

func TestBindingWrongThread(t *testing.T) {
	l := newLoop(t)
	if err := l.SetDebug(true); err != nil {
		t.Fatal(err)
	}
	var callErr, postErr error
	if _, err := l.CallSoon(func() {
		onOtherThread(func() {
			_, callErr = l.CallLater(0, func() { t.Error("wrong-thread timer ran") })
			postErr = l.CallSoonThreadsafe(func() { l.Stop() })
		})
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(callErr, ll.EWRONGTHREAD) || postErr != nil {
		t.Fatalf("from another thread: CallLater %v, CallSoonThreadsafe %v", callErr, postErr)
	}
}

func TestBindingExceptionHandler(t *testing.T) {
	l := newLoop(t)
	var got []ll.ErrorContext
	if err := l.SetExceptionHandler(func(c ll.ErrorContext) { got = append(got, c) }); err != nil {
		t.Fatal(err)
	}
	l.SetDebug(true)
	l.SetSlowCallbackDuration(60 * time.Millisecond)
	l.CallSoon(func() { time.Sleep(80 * time.Millisecond) })
	l.CallSoon(func() { panic("boom") })
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Loop != l.ID() || !strings.Contains(got[0].Message, "callback") ||
		got[0].Err() != nil || !strings.Contains(got[1].Message, "boom") {
		t.Fatalf("handler got %+v", got)
	}
	if err := l.SetExceptionHandler(nil); err != nil {
		t.Fatal(err)
	}
}

// The binding routes every callback through a fixed set of trampolines:
// far more callbacks than purego can ever create (~2000) work, and the
// callback table returns to its size once they ran, were cancelled or were
// dropped by Close.
func TestBindingCallbacksDoNotLeak(t *testing.T) {
	l := newLoop(t)
	base := ll.LiveCallbacks()
	n := 0
	for i := 0; i < 5000; i++ {
		if _, err := l.CallSoon(func() { n++ }); err != nil {
			t.Fatal(err)
		}
	}
	var timers []*ll.Handle
	for i := 0; i < 3000; i++ {
		h, err := l.CallLater(time.Hour, func() { t.Error("cancelled timer ran") })
		if err != nil {
			t.Fatal(err)
		}
		timers = append(timers, h)
	}
	for i := 0; i < 1000; i++ {
		if err := l.CallSoonThreadsafe(func() { n++ }); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range timers {
		if err := h.Cancel(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if n != 6000 {
		t.Fatalf("%d of 6000 callbacks ran", n)
	}
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("callback table holds %d entries, want %d", live, base)
	}
	// Pending work dropped by Close frees its entries too.
	for i := 0; i < 100; i++ {
		l.CallSoon(func() {})
		l.CallLater(time.Hour, func() {})
		l.CallSoonThreadsafe(func() {})
	}
	r, _ := pipe(t)
	l.AddReader(r, func(int) {})
	l.SetExceptionHandler(func(ll.ErrorContext) {})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if live := ll.LiveCallbacks(); live != base {
		t.Fatalf("after Close the callback table holds %d entries, want %d", live, base)
	}
}
