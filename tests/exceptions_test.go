// SPDX-License-Identifier: MIT

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// setHandler installs a raw exception handler that records what it gets.
func setHandler(t *testing.T, loop uint64, got *[]ll.ErrorContext) uintptr {
	t.Helper()
	key := ll.RegisterExceptionHandler(func(l uint64, c ll.ErrorContext) {
		if l != loop {
			t.Errorf("exception handler got loop %#x, want %#x", l, loop)
		}
		*got = append(*got, c)
	})
	t.Cleanup(func() { ll.Unregister(key) })
	expect(t, "ll_loop_set_exception_handler", raw.SetExceptionHandler(loop, ll.ExceptionHandlerPtr(), key), 0)
	return key
}

func TestSlowCallbackReportedInDebugMode(t *testing.T) {
	loop := newRawLoop(t)
	var got []ll.ErrorContext
	setHandler(t, loop, &got)
	expect(t, "ll_loop_set_debug", raw.SetDebug(loop, 1), 0)
	expect(t, "ll_loop_set_slow_callback_duration", raw.SetSlowCallbackDuration(loop, 0.08), 0)
	soon(t, loop, func() {})                                     // fast: not reported
	soon(t, loop, func() { time.Sleep(100 * time.Millisecond) }) // slow
	soon(t, loop, func() {})
	runNowait(t, loop)
	if len(got) != 1 {
		t.Fatalf("handler got %d reports, want 1: %+v", len(got), got)
	}
	c := got[0]
	if c.Message == "" || !strings.Contains(c.Message, "callback") {
		t.Errorf("report message %q", c.Message)
	}
	if c.Code != 0 || c.Future != 0 || c.Task != 0 {
		t.Errorf("report context %+v", c)
	}
	// A slow I/O callback and a slow timer are reported too.
	r, w := pipe(t)
	f := ll.IOCallbackPtr()
	a := ll.RegisterIOCallback(func(uint64, int) { time.Sleep(100 * time.Millisecond) }, false)
	expect(t, "ll_add_reader", raw.AddReader(loop, int32(r), f, a), 0)
	unix.Write(w, []byte("x"))
	later(t, loop, -1, func() { time.Sleep(100 * time.Millisecond) })
	runNowait(t, loop)
	expect(t, "ll_remove_reader", raw.RemoveReader(loop, int32(r)), 1)
	ll.Unregister(a)
	if len(got) != 3 {
		t.Fatalf("handler got %d reports, want 3", len(got))
	}
	assertAlive(t, loop)
}

func TestSlowCallbackNotReported(t *testing.T) {
	loop := newRawLoop(t)
	var got []ll.ErrorContext
	setHandler(t, loop, &got)
	// Debug off: never reported.
	expect(t, "ll_loop_set_slow_callback_duration", raw.SetSlowCallbackDuration(loop, 0.001), 0)
	soon(t, loop, func() { time.Sleep(10 * time.Millisecond) })
	runNowait(t, loop)
	// Debug on, under the threshold: not reported.
	expect(t, "ll_loop_set_debug", raw.SetDebug(loop, 1), 0)
	expect(t, "ll_loop_set_slow_callback_duration", raw.SetSlowCallbackDuration(loop, 1), 0)
	soon(t, loop, func() { time.Sleep(5 * time.Millisecond) })
	runNowait(t, loop)
	if len(got) != 0 {
		t.Fatalf("handler got %+v", got)
	}
}

func TestReplaceExceptionHandler(t *testing.T) {
	loop := newRawLoop(t)
	var first, second []ll.ErrorContext
	setHandler(t, loop, &first)
	setHandler(t, loop, &second)
	expect(t, "ll_loop_set_debug", raw.SetDebug(loop, 1), 0)
	expect(t, "ll_loop_set_slow_callback_duration", raw.SetSlowCallbackDuration(loop, 0), 0)
	soon(t, loop, func() {})
	runNowait(t, loop)
	if len(first) != 0 || len(second) != 1 {
		t.Fatalf("replaced handler got %d, new one %d reports", len(first), len(second))
	}
}

// NULL restores the default handler, which writes one line to stderr.
func TestDefaultExceptionHandlerWritesStderr(t *testing.T) {
	loop := newRawLoop(t)
	var got []ll.ErrorContext
	setHandler(t, loop, &got)
	expect(t, "ll_loop_set_exception_handler(NULL)", raw.SetExceptionHandler(loop, 0, 0), 0)
	expect(t, "ll_loop_set_debug", raw.SetDebug(loop, 1), 0)
	expect(t, "ll_loop_set_slow_callback_duration", raw.SetSlowCallbackDuration(loop, 0.005), 0)

	path := filepath.Join(t.TempDir(), "stderr")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := unix.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(f.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	soon(t, loop, func() { time.Sleep(20 * time.Millisecond) })
	runNowait(t, loop)
	unix.Dup2(saved, 2)
	unix.Close(saved)

	if len(got) != 0 {
		t.Fatalf("removed handler still got %+v", got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "callback") {
		t.Fatalf("default handler wrote %q, want one line about the slow callback", data)
	}
}
