// SPDX-License-Identifier: MIT

package libloop

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func mustLib(t *testing.T) *Lib {
	t.Helper()
	lib, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func newLoop(t *testing.T) *Loop {
	t.Helper()
	l, err := mustLib(t).NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Release(); err != nil {
			t.Errorf("release: %v", err)
		}
	})
	return l
}

func TestLoadErrorNamesEveryPath(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.so")
	_, err := load([]string{missing, "libloop-does-not-exist.so"})
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("load error %T %v, want *LoadError", err, err)
	}
	msg := err.Error()
	for _, want := range []string{missing, "libloop-does-not-exist.so", EnvLibrary} {
		if !strings.Contains(msg, want) {
			t.Errorf("load error %q does not mention %q", msg, want)
		}
	}
}

func TestCandidatePathsHonourEnv(t *testing.T) {
	t.Setenv(EnvLibrary, "/x/libloop.so")
	if got := candidatePaths(); len(got) != 1 || got[0] != "/x/libloop.so" {
		t.Fatalf("candidates %v", got)
	}
	t.Setenv(EnvLibrary, "")
	got := candidatePaths()
	if len(got) != 2 || !strings.HasSuffix(got[0], filepath.Join("build", "libloop.so")) || got[1] != "libloop.so" {
		t.Fatalf("candidates %v", got)
	}
}

func TestErrorNamesAndErrno(t *testing.T) {
	mustLib(t)
	if EINVAL.Name() != "LL_EINVAL" || ENOMEM.Name() != "LL_ENOMEM" {
		t.Fatalf("names %q %q", EINVAL.Name(), ENOMEM.Name())
	}
	ebadf := Error(-int(syscall.EBADF))
	if ebadf.Name() != "EBADF" || !errors.Is(ebadf, syscall.EBADF) || errors.Is(ebadf, syscall.EPERM) {
		t.Fatalf("EBADF: %q is=%v", ebadf.Name(), errors.Is(ebadf, syscall.EBADF))
	}
	if !strings.HasPrefix(ECLOSED.Error(), "LL_ECLOSED: ") {
		t.Fatalf("Error() = %q", ECLOSED.Error())
	}
	if check(0) != nil || check(1) != nil || check(-10000) != EINVAL {
		t.Fatal("check")
	}
}

func TestErrorContextLayout(t *testing.T) {
	var c cErrorContext
	if s := unsafe.Sizeof(c); s != 40 {
		t.Fatalf("sizeof(ll_error_context) = %d, want 40", s)
	}
}

// A one-shot entry is freed when it runs, when it is cancelled and when its
// loop is closed with it pending; watchers and handlers when replaced/removed.
func TestCallbackTableDoesNotLeak(t *testing.T) {
	l := newLoop(t)
	base := LiveCallbacks()
	ran := 0
	for range 100 {
		if _, err := l.CallSoon(func() { ran++ }); err != nil {
			t.Fatal(err)
		}
	}
	h, err := l.CallLater(time.Hour, func() { t.Error("cancelled timer ran") })
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if ran != 100 || LiveCallbacks() != base+1 {
		t.Fatalf("ran %d, live %d (base %d)", ran, LiveCallbacks(), base)
	}
	if err := h.Cancel(); err != nil || !h.Cancelled() || h.ID() != 0 {
		t.Fatalf("cancel %v cancelled %v id %d", err, h.Cancelled(), h.ID())
	}
	if LiveCallbacks() != base {
		t.Fatalf("live %d after cancel, want %d", LiveCallbacks(), base)
	}
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	for range 3 {
		if err := l.AddReader(fds[0], func(int) {}); err != nil {
			t.Fatal(err)
		}
		if err := l.SetExceptionHandler(func(ErrorContext) {}); err != nil {
			t.Fatal(err)
		}
	}
	if LiveCallbacks() != base+2 {
		t.Fatalf("live %d after replacing, want %d", LiveCallbacks(), base+2)
	}
	if ok, err := l.RemoveReader(fds[0]); !ok || err != nil {
		t.Fatalf("remove %v %v", ok, err)
	}
	for range 10 {
		l.CallSoon(func() {})
		l.CallSoonThreadsafe(func() {})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if LiveCallbacks() != base {
		t.Fatalf("live %d after close, want %d", LiveCallbacks(), base)
	}
}

func TestPanicInCallbackIsReported(t *testing.T) {
	l := newLoop(t)
	var got []ErrorContext
	l.SetExceptionHandler(func(c ErrorContext) { got = append(got, c) })
	after := false
	l.CallSoon(func() { panic("boom") })
	l.CallSoon(func() { after = true })
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0].Message, "boom") || got[0].Loop != l.ID() {
		t.Fatalf("reports %+v", got)
	}
	if !after {
		t.Fatal("the callback after the panicking one did not run")
	}
}
