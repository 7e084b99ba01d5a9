// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Prepare runs before the poll, check after it and before the callbacks
// the poll made ready; idle first of all. Each runs once per iteration.
func TestHooksRunAroundThePoll(t *testing.T) {
	l := newTestLoop(t)
	var got []string
	for _, k := range []struct {
		kind HookKind
		name string
	}{{HookCheck, "check"}, {HookPrepare, "prepare"}, {HookIdle, "idle"}} {
		name := k.name
		if _, err := l.AddHook(k.kind, func() { got = append(got, name) }); err != nil {
			t.Fatal(err)
		}
	}
	l.CallSoon(func() { got = append(got, "callback") })
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
	want := []string{"idle", "prepare", "check", "callback"}
	if len(got) != len(want) {
		t.Fatalf("one iteration ran %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("one iteration ran %v, want %v", got, want)
		}
	}
}

// An active idle hook keeps the poll from blocking: RunOnce with a timer an
// hour away returns at once; cancelled, the hook no longer runs.
func TestHookIdleKeepsThePollFromBlocking(t *testing.T) {
	l := newTestLoop(t)
	l.CallLater(3600, func() {})
	n := 0
	h, err := l.AddHook(HookIdle, func() { n++ })
	if err != nil {
		t.Fatal(err)
	}
	if d := l.NextTimeout(); d != 0 {
		t.Fatalf("NextTimeout with an idle hook = %v, want 0", d)
	}
	start := time.Now()
	for i := 0; i < 3; i++ {
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
	}
	if n != 3 || time.Since(start) > time.Second {
		t.Fatalf("idle ran %d times in %v, want 3 without blocking", n, time.Since(start))
	}
	h.Cancel()
	h.Cancel() // twice: nothing
	if h.Active() {
		t.Fatal("a cancelled hook is active")
	}
	l.RunOnce(true)
	if n != 3 {
		t.Fatalf("a cancelled idle hook ran (%d)", n)
	}
	if d := l.NextTimeout(); d <= 0 {
		t.Fatalf("NextTimeout without the idle hook = %v, want the timer's", d)
	}
}

// A hook may cancel itself and others while the hooks of its kind run: a
// hook cancelled earlier in the same iteration does not run; one added
// runs from the next iteration on.
func TestHookCancelAndAddWhileRunning(t *testing.T) {
	l := newTestLoop(t)
	var got []string
	var second, added *Hook
	first, _ := l.AddHook(HookPrepare, func() {
		got = append(got, "first")
		second.Cancel()
		if added == nil {
			added, _ = l.AddHook(HookPrepare, func() { got = append(got, "added") })
		}
	})
	second, _ = l.AddHook(HookPrepare, func() { got = append(got, "second") })
	l.RunOnce(true)
	l.RunOnce(true)
	first.Cancel()
	added.Cancel()
	l.RunOnce(true)
	want := "first first added"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("hooks ran %q, want %q", s, want)
	}
}

// A panicking Go hook is reported to the exception handler; the loop and
// the hook go on.
func TestHookPanicReported(t *testing.T) {
	l := newTestLoop(t)
	var reports int
	l.SetExceptionHandler(func(*ErrorContext) { reports++ })
	runs := 0
	l.AddHook(HookCheck, func() { runs++; panic("boom") })
	l.RunOnce(true)
	l.RunOnce(true)
	if runs != 2 || reports != 2 {
		t.Fatalf("runs %d reports %d, want 2 and 2", runs, reports)
	}
}

// Hooks run in RunForever too, and a prepare hook that stops the loop
// stops it before this iteration's poll blocks (on a timer an hour away).
func TestHookStopsRunForever(t *testing.T) {
	l := newTestLoop(t)
	n := 0
	l.AddHook(HookPrepare, func() {
		n++
		l.Stop()
	})
	l.CallLater(3600, func() {})
	done := make(chan error, 1)
	go func() { done <- l.RunForever() }()
	select {
	case err := <-done:
		if err != nil || n != 1 {
			t.Fatalf("RunForever: %v after %d prepare calls, want nil after 1", err, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunForever blocked in the poll after a prepare hook stopped it")
	}
}

func TestHookBadInput(t *testing.T) {
	l := newTestLoop(t)
	if _, err := l.AddHook(0, func() {}); err != EINVAL {
		t.Fatalf("kind 0: %v", err)
	}
	if _, err := l.AddHook(4, func() {}); err != EINVAL {
		t.Fatalf("kind 4: %v", err)
	}
	if _, err := l.AddHook(HookIdle, nil); err != EINVAL {
		t.Fatalf("nil fn: %v", err)
	}
	if _, err := l.AddHookHost(HookIdle, HostCall{Fn: 1}); err != EINVAL {
		t.Fatalf("host hook on a loop with no host: %v", err)
	}
	h, _ := l.AddHook(HookIdle, func() {})
	l.Close()
	if h.Active() {
		t.Fatal("Close left a hook active")
	}
	h.Cancel() // after Close: nothing
	if _, err := l.AddHook(HookIdle, func() {}); err != ECLOSED {
		t.Fatalf("closed loop: %v", err)
	}
}

// A host that drives the loop from its own poll waits on BackendFD for at
// most NextTimeout, then runs one iteration without blocking; a prepare
// hook runs just before each of the loop's polls.
func ExampleLoop_AddHook() {
	l, _ := New()
	defer l.Close()
	prepares := 0
	hook, _ := l.AddHook(HookPrepare, func() { prepares++ })
	fired := false
	l.CallLater(0.01, func() { fired = true })
	for !fired {
		// A real host polls BackendFD() and its own fds here, for at
		// most this long (negative: until I/O).
		time.Sleep(l.NextTimeout())
		l.RunOnce(true)
	}
	hook.Cancel()
	fmt.Println(fired, prepares > 0, l.NextTimeout())
	// Output: true true -1ns
}
