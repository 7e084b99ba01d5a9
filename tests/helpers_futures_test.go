// SPDX-License-Identifier: MIT

package tests

import (
	"errors"
	"sync"
	"testing"
	"time"
	"unsafe"

	ll "github.com/libloop/libloop/bindings/go"
)

// Helpers for the futures, tasks, executor and host-queue tests.

// The header's future states, spelled out (LL_PENDING ...).
const (
	cPending   = 0
	cCancelled = 1
	cFinished  = 2
)

// codeOf returns the C code an error stands for: 0 for nil.
func codeOf(err error) int {
	if err == nil {
		return 0
	}
	var e ll.Error
	if errors.As(err, &e) {
		return int(e)
	}
	return 1 // not a libloop code: never equal to a wanted one
}

// expectErr fails unless err carries the code want (0: no error).
func expectErr(t *testing.T, what string, err error, want int) {
	t.Helper()
	if got := codeOf(err); got != want {
		t.Errorf("%s: error %v (%s), want %s", what, err, codeString(got), codeString(want))
	}
}

// newFut makes a pending future with ll_future_new on loop; it is released
// when t ends unless the test released it.
func newFut(t *testing.T, loop uint64) uint64 {
	t.Helper()
	out := newOut(t)
	if rc := raw.FutureNew(loop, out.Ptr()); rc != 0 {
		t.Fatalf("ll_future_new = %s", codeString(int(rc)))
	}
	id := out.Value()
	t.Cleanup(func() { raw.Release(id) })
	return id
}

// state returns ll_future_state(id).
func state(id uint64) int { return int(raw.FutureState(id)) }

// result returns ll_future_result(id) and the value it wrote.
func result(t *testing.T, id uint64) (int, uint64) {
	t.Helper()
	out := newOut(t)
	out.Set(0xdead)
	rc := raw.FutureResult(id, out.Ptr())
	return int(rc), out.Value()
}

// newFuture makes a future through the binding, released when t ends.
func newFuture(t *testing.T, l *ll.Loop) *ll.Future {
	t.Helper()
	f, err := l.NewFuture()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Release() })
	return f
}

// newTask makes a task through the binding, released when t ends.
func newTask(t *testing.T, l *ll.Loop, step func(*ll.Task)) *ll.Task {
	t.Helper()
	task, err := l.NewTask(step)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Release() })
	return task
}

// release releases f now and fails the test if that errs.
func release(t *testing.T, f interface{ Release() error }) {
	t.Helper()
	if err := f.Release(); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// runUntil runs f's loop until f is done, failing after limit (a timer
// that stops the loop is the watchdog).
func runUntil(t *testing.T, l *ll.Loop, f *ll.Future, limit time.Duration) {
	t.Helper()
	h, err := l.CallLater(limit, func() { t.Errorf("run_until_complete: not done within %v", limit); l.Stop() })
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilComplete(f); err != nil {
		t.Fatalf("run_until_complete: %v", err)
	}
	h.Cancel()
	if !f.Done() {
		t.Fatal("run_until_complete returned with the future pending")
	}
}

// freeLog records the values Go free funcs were called with.
type freeLog struct {
	mu  sync.Mutex
	got []uintptr
}

func (l *freeLog) fn(v uintptr) { l.mu.Lock(); l.got = append(l.got, v); l.mu.Unlock() }

func (l *freeLog) calls() []uintptr {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uintptr(nil), l.got...)
}

// count returns how many times v was freed.
func (l *freeLog) count(v uintptr) int {
	n := 0
	for _, x := range l.calls() {
		if x == v {
			n++
		}
	}
	return n
}

// ptrAt returns the address off bytes into b.
func ptrAt(b *ll.CBuf, off uintptr) unsafe.Pointer { return unsafe.Add(b.Ptr(), off) }
