// SPDX-License-Identifier: MIT

package tests

import (
	"syscall"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// Run modes, references and the walk through the binding: RunModeDefault
// ends with the last referenced timer; an unreferenced timer and transport
// still work but do not keep the loop; Stop with referenced work reports
// it; Walk lists each object with its id and stops on false; stale ids get
// codes.
func TestLoopRunDefaultAndRefs(t *testing.T) {
	l := newLoop(t)
	if alive, err := l.Run(ll.RunModeDefault); alive || err != nil {
		t.Fatalf("empty loop: %v %v", alive, err)
	}
	n := 0
	far, _ := l.CallLaterSeconds(60, func() { t.Error("unreferenced far timer ran") })
	if err := l.Unref(far); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.HasRef(far); ok || err != nil {
		t.Fatalf("HasRef after Unref: %v %v", ok, err)
	}
	tick, _ := l.StartTimer(0.002, 0.002, func() { n++ })
	l.Unref(tick)
	l.CallLaterSeconds(0.03, func() {})
	start := time.Now()
	if alive, err := l.Run(ll.RunModeDefault); alive || err != nil {
		t.Fatalf("Run: %v %v", alive, err)
	}
	if time.Since(start) > 5*time.Second || n < 3 {
		t.Fatalf("ran %v, the unreferenced repeating timer %d times", time.Since(start), n)
	}
	// Stop with a referenced timer left.
	l.Ref(tick)
	l.CallLaterSeconds(0.01, func() { l.Stop() })
	if alive, err := l.Run(ll.RunModeDefault); !alive || err != nil {
		t.Fatalf("stopped with a referenced timer: %v %v", alive, err)
	}
	if _, err := l.Run(9); err != ll.EINVAL {
		t.Fatalf("bad mode: %v", err)
	}
	tick.Release()
	if err := l.Unref(tick); err != nil { // id 0 once released
		if err != ll.EBADHANDLE {
			t.Fatalf("unref of a released timer: %v", err)
		}
	}
	if err := l.Ref(ll.ID(12345)); err != ll.EBADHANDLE {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := l.HasRef(l); err != ll.EBADHANDLE {
		t.Fatalf("a loop's reference: %v", err)
	}
}

func TestLoopWalk(t *testing.T) {
	l := newLoop(t)
	h, _ := l.CallLaterSeconds(60, func() {})
	tm, _ := l.StartTimer(60, 1, func() {})
	hk, _ := l.AddHook(ll.HookPrepare, func() {})
	if err := l.AddSignalHandler(syscall.SIGUSR2, func() {}); err != nil {
		t.Fatal(err)
	}
	sig := l.SignalHandlerID(syscall.SIGUSR2)
	if sig == 0 {
		t.Fatal("no id for the signal handler")
	}
	l.Unref(ll.ID(sig))
	if ok, _ := l.HasRef(ll.ID(sig)); ok {
		t.Fatal("signal handler still referenced")
	}
	want := map[uint64]int32{h.ID(): ll.KindHandle, tm.ID(): ll.KindTimer, hk.ID(): ll.KindHook, sig: ll.KindSignal}
	got := map[uint64]int32{}
	if err := l.Walk(func(id uint64, kind int32) bool { got[id] = kind; return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("walk listed %v, want %v", got, want)
	}
	for id, k := range want {
		if got[id] != k {
			t.Fatalf("id %#x listed as %d, want %d", id, got[id], k)
		}
	}
	calls := 0
	l.Walk(func(uint64, int32) bool { calls++; return false })
	if calls != 1 {
		t.Fatalf("walk went on after false: %d", calls)
	}
	// Ending everything from the first call: nothing more is handed over.
	calls = 0
	l.Walk(func(uint64, int32) bool {
		calls++
		h.Cancel()
		tm.Release()
		hk.Cancel()
		l.RemoveSignalHandler(syscall.SIGUSR2)
		return true
	})
	if calls != 1 {
		t.Fatalf("walk handed over %d objects, ended after the first", calls)
	}
	if err := l.Walk(nil); err != ll.EINVAL {
		t.Fatalf("nil fn: %v", err)
	}
}
