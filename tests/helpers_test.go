// SPDX-License-Identifier: MIT

// Package tests is libloop's purego behaviour suite: it loads
// build/libloop.so through the Go binding (bindings/go) and checks the C ABI
// of include/libloop.h — success paths, ordering, timers, fds, threads,
// futures, tasks, the asyncio helpers, the executor, the host queue and the
// bad-input table of GUIDE.md §4 — from a Go host with no cgo.
//
// Callbacks run on the loop thread inside a C call: they report with
// t.Errorf (never t.Fatal, which cannot unwind through C frames).
package tests

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// The header's codes, spelled out so the suite checks the binding's
// constants against include/libloop.h instead of trusting them.
const (
	cEINVAL       = -10000
	cEBADHANDLE   = -10001
	cECLOSED      = -10002
	cERUNNING     = -10003
	cESTATE       = -10004
	cECANCELLED   = -10005
	cEWRONGTHREAD = -10006
	cESTOPPED     = -10007
	cETIMEDOUT    = -10008
	cENOMEM       = -10009

	cRunOnce   = 0 // LL_RUN_ONCE
	cRunNowait = 1 // LL_RUN_NOWAIT

	eBADF = -9 // -EBADF
	ePERM = -1 // -EPERM
)

var (
	lib *ll.Lib
	raw *ll.Raw
)

func TestMain(m *testing.M) {
	var err error
	lib, err = ll.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	raw = lib.Raw
	os.Exit(m.Run())
}

// newRawLoop makes a loop with ll_loop_new and releases it when t ends.
func newRawLoop(t *testing.T) uint64 {
	t.Helper()
	out := newOut(t)
	if rc := raw.LoopNew(out.Ptr()); rc != 0 {
		t.Fatalf("ll_loop_new = %d", rc)
	}
	id := out.Value()
	if id == 0 {
		t.Fatal("ll_loop_new gave id 0")
	}
	t.Cleanup(func() { raw.Release(id) }) // may already be released
	return id
}

// newLoop makes a loop through the idiomatic binding.
func newLoop(t *testing.T) *ll.Loop {
	t.Helper()
	l, err := ll.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release() })
	return l
}

func newOut(t *testing.T) *ll.Out {
	t.Helper()
	o, err := ll.NewOut()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Free)
	return o
}

// cb registers fn for one call through the binding's C trampoline and
// returns the (function, arg) pair to hand to the C API.
func cb(fn func(id uint64)) (uintptr, uintptr) {
	return ll.CallbackPtr(), ll.RegisterCallback(fn, true)
}

// never returns a callback that fails the test if it ever runs.
func never(t *testing.T, what string) (uintptr, uintptr) {
	return cb(func(uint64) { t.Errorf("%s: callback ran", what) })
}

// soon schedules fn with ll_call_soon (NULL out: no handle).
func soon(t *testing.T, loop uint64, fn func()) {
	t.Helper()
	f, a := cb(func(uint64) { fn() })
	if rc := raw.CallSoon(loop, f, a, nil); rc != 0 {
		ll.Unregister(a)
		t.Fatalf("ll_call_soon = %d", rc)
	}
}

// soonHandle schedules fn with ll_call_soon and returns its handle id.
func soonHandle(t *testing.T, loop uint64, fn func()) uint64 {
	t.Helper()
	out := newOut(t)
	f, a := cb(func(uint64) { fn() })
	if rc := raw.CallSoon(loop, f, a, out.Ptr()); rc != 0 {
		ll.Unregister(a)
		t.Fatalf("ll_call_soon = %d", rc)
	}
	return out.Value()
}

// later schedules fn with ll_call_later and returns its handle id.
func later(t *testing.T, loop uint64, delay float64, fn func()) uint64 {
	t.Helper()
	out := newOut(t)
	f, a := cb(func(uint64) { fn() })
	if rc := raw.CallLater(loop, delay, f, a, out.Ptr()); rc != 0 {
		ll.Unregister(a)
		t.Fatalf("ll_call_later(%g) = %d", delay, rc)
	}
	return out.Value()
}

// at schedules fn with ll_call_at and returns its handle id.
func at(t *testing.T, loop uint64, when float64, fn func()) uint64 {
	t.Helper()
	out := newOut(t)
	f, a := cb(func(uint64) { fn() })
	if rc := raw.CallAt(loop, when, f, a, out.Ptr()); rc != 0 {
		ll.Unregister(a)
		t.Fatalf("ll_call_at(%g) = %d", when, rc)
	}
	return out.Value()
}

// runNowait runs one non-blocking iteration.
func runNowait(t *testing.T, loop uint64) {
	t.Helper()
	if rc := raw.RunOnce(loop, cRunNowait); rc != 0 {
		t.Fatalf("ll_loop_run_once(NOWAIT) = %d", rc)
	}
}

// runForever runs the loop until it stops, stopping it (and failing) after
// limit as a watchdog.
func runForever(t *testing.T, loop uint64, limit time.Duration) {
	t.Helper()
	var fired atomic.Bool
	timer := time.AfterFunc(limit, func() {
		fired.Store(true)
		f, a := cb(func(id uint64) { raw.Stop(id) })
		raw.CallSoonThreadsafe(loop, f, a)
	})
	rc := raw.RunForever(loop)
	timer.Stop()
	if rc != 0 {
		t.Fatalf("ll_loop_run_forever = %d", rc)
	}
	if fired.Load() {
		t.Fatalf("ll_loop_run_forever did not stop within %v", limit)
	}
}

// inModes runs fn as a subtest with debug mode off and on: debug mode runs
// host callbacks one per batch instead of in batches, so ordering rules are
// checked on both paths.
func inModes(t *testing.T, fn func(t *testing.T, loop uint64)) {
	for _, debug := range []int32{0, 1} {
		t.Run(fmt.Sprintf("debug=%d", debug), func(t *testing.T) {
			loop := newRawLoop(t)
			expect(t, "ll_loop_set_debug", raw.SetDebug(loop, debug), 0)
			fn(t, loop)
		})
	}
}

// assertAlive checks the loop still runs a callback normally: exactly once,
// in the next iteration, with the loop's id.
func assertAlive(t *testing.T, loop uint64) {
	t.Helper()
	n := 0
	var got uint64
	f, a := cb(func(id uint64) { n++; got = id })
	if rc := raw.CallSoon(loop, f, a, nil); rc != 0 {
		t.Fatalf("loop no longer accepts ll_call_soon: %d", rc)
	}
	runNowait(t, loop)
	runNowait(t, loop)
	if n != 1 || got != loop {
		t.Fatalf("loop no longer runs callbacks normally: ran %d times with id %#x (loop %#x)", n, got, loop)
	}
}

// expect fails unless rc == want.
func expect(t *testing.T, what string, rc int32, want int) {
	t.Helper()
	if int(rc) != want {
		t.Errorf("%s = %s, want %s", what, codeString(int(rc)), codeString(want))
	}
}

func codeString(c int) string {
	if c < 0 {
		return fmt.Sprintf("%d (%s)", c, lib.ErrName(c))
	}
	return fmt.Sprint(c)
}

// recorder collects labels in the order callbacks run (on the loop thread).
type recorder struct{ got []string }

func (r *recorder) add(s string) func() { return func() { r.got = append(r.got, s) } }

func (r *recorder) String() string { return fmt.Sprint(r.got) }

func (r *recorder) equal(want ...string) bool {
	if len(r.got) != len(want) {
		return false
	}
	for i := range want {
		if r.got[i] != want[i] {
			return false
		}
	}
	return true
}
