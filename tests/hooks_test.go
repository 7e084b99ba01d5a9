// SPDX-License-Identifier: MIT

package tests

import (
	"testing"

	ll "github.com/libloop/libloop/bindings/go"
)

// Hooks through the binding: idle, prepare, check around the poll, before
// the callbacks; a cancelled hook runs no more; Close ends them all.
func TestHooksOrderAndCancel(t *testing.T) {
	l := newLoop(t)
	var r recorder
	check, err := l.AddHook(ll.HookCheck, r.add("check"))
	if err != nil {
		t.Fatal(err)
	}
	prepare, _ := l.AddHook(ll.HookPrepare, r.add("prepare"))
	idle, _ := l.AddHook(ll.HookIdle, r.add("idle"))
	if _, err := l.CallSoon(r.add("soon")); err != nil {
		t.Fatal(err)
	}
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if !r.equal("idle", "prepare", "check", "soon") {
		t.Fatalf("one iteration ran %v", &r)
	}
	if d, err := l.NextTimeout(); err != nil || d != 0 {
		t.Fatalf("NextTimeout with an idle hook = %v, %v; want 0", d, err)
	}
	if err := idle.Cancel(); err != nil || idle.Active() || idle.ID() != 0 {
		t.Fatalf("Cancel: %v, active %v, id %#x", err, idle.Active(), idle.ID())
	}
	if err := idle.Cancel(); err != nil {
		t.Fatalf("second Cancel: %v", err)
	}
	if d, _ := l.NextTimeout(); d != -1 {
		t.Fatalf("NextTimeout with nothing scheduled = %v, want -1", d)
	}
	r.got = nil
	l.RunOnce(true)
	if !r.equal("prepare", "check") {
		t.Fatalf("after cancelling idle: %v", &r)
	}
	id := check.ID()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if prepare.Active() || check.Active() || check.ID() != 0 {
		t.Fatal("Close left a hook active or its id held")
	}
	expect(t, "ll_handle_cancelled(released hook)", raw.HandleCancelled(id), cEBADHANDLE)
}

// ll_hook_add's bad input, and hook ids where other kinds are expected.
func TestHooksBadInput(t *testing.T) {
	loop := newRawLoop(t)
	out := newOut(t)
	f, a := never(t, "bad hook")
	defer ll.Unregister(a)
	expect(t, "ll_hook_add(kind 0)", raw.HookAdd(loop, 0, f, a, out.Ptr()), cEINVAL)
	expect(t, "ll_hook_add(kind 4)", raw.HookAdd(loop, 4, f, a, out.Ptr()), cEINVAL)
	expect(t, "ll_hook_add(NULL fn)", raw.HookAdd(loop, ll.HookIdle, 0, a, out.Ptr()), cEINVAL)
	expect(t, "ll_hook_add(NULL out)", raw.HookAdd(loop, ll.HookIdle, f, a, nil), cEINVAL)
	expect(t, "ll_hook_add(loop 0)", raw.HookAdd(0, ll.HookIdle, f, a, out.Ptr()), cEBADHANDLE)
	expect(t, "ll_hook_add(forged loop)", raw.HookAdd(loop^0x5a5a0000, ll.HookIdle, f, a, out.Ptr()), cEBADHANDLE)
	// A hook's id is no loop, future or timer.
	n := 0
	hf, ha := ll.CallbackPtr(), ll.RegisterCallback(func(uint64) { n++ }, false)
	defer ll.Unregister(ha)
	expect(t, "ll_hook_add", raw.HookAdd(loop, ll.HookCheck, hf, ha, out.Ptr()), 0)
	hook := out.Value()
	expect(t, "ll_hook_add(hook id as loop)", raw.HookAdd(hook, ll.HookIdle, f, a, out.Ptr()), cEBADHANDLE)
	expect(t, "ll_loop_next_timeout(hook id)", raw.LoopNextTimeout(hook), cEBADHANDLE)
	expect(t, "ll_future_done(hook id)", raw.FutureDone(hook), cEBADHANDLE)
	if w := raw.TimerWhen(hook); w >= 0 {
		t.Errorf("ll_timer_when(hook) = %g, want negative", w)
	}
	runNowait(t, loop)
	expect(t, "ll_handle_cancel(hook)", raw.HandleCancel(hook), 0)
	runNowait(t, loop)
	if n != 1 {
		t.Fatalf("check hook ran %d times, want 1 (once before cancel)", n)
	}
	expect(t, "ll_release(hook)", raw.Release(hook), 0)
	expect(t, "ll_release(hook again)", raw.Release(hook), cEBADHANDLE)
	expect(t, "ll_loop_close", raw.LoopClose(loop), 0)
	expect(t, "ll_hook_add(closed loop)", raw.HookAdd(loop, ll.HookIdle, f, a, out.Ptr()), cECLOSED)
}
