// SPDX-License-Identifier: MIT

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/libloop/libloop/libloop"
	"golang.org/x/sys/unix"
)

// A call refused with LL_ENOMEM (no id left) has done nothing: no step run,
// no job started, no timer armed, no fd taken from the host, no child
// started. The id table is filled by lowering its limit to the slots in use
// and reserving every free one (16M real objects would take gigabytes).

// fillIDs makes every further id allocation fail until the returned func runs.
func fillIDs(t *testing.T) func() {
	t.Helper()
	ids.mu.Lock()
	ids.limit = ids.n
	if ids.limit == 0 {
		ids.limit = 1
	}
	ids.mu.Unlock()
	var held []uint64
	for {
		id := ids.reserveID()
		if id == 0 {
			break
		}
		held = append(held, id)
	}
	return func() {
		for _, id := range held {
			ids.remove(id)
		}
		ids.mu.Lock()
		ids.limit = 0
		ids.mu.Unlock()
	}
}

// trap stands for a host function pointer that must never be called: a
// call would jump into data and crash the test binary.
var trap [64]byte

func trapFn() *[0]byte { return (*[0]byte)(unsafe.Pointer(&trap)) }

// spin runs the loop for d (nothing refused may show up meanwhile).
func spin(loop cid, d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		ll__loop_run_go(loop, 1, 1)
		time.Sleep(time.Millisecond)
	}
}

func newLoop(t *testing.T) cid {
	t.Helper()
	var loop cid
	if rc := ll__loop_new(&loop); rc != 0 {
		t.Fatal(rc)
	}
	t.Cleanup(func() { ll__release_go(loop, 1) })
	return loop
}

func wantENOMEM(t *testing.T, what string, rc _Ctype_int, out cid) {
	t.Helper()
	if int(rc) != int(libloop.ENOMEM) {
		t.Errorf("%s under a full id table: rc %d, want LL_ENOMEM", what, rc)
	}
	if out != 77 {
		t.Errorf("%s refused but wrote *out = %d", what, out)
	}
}

func TestRefusedForWantOfIDsDoesNothing(t *testing.T) {
	loop := newLoop(t)
	var target cid
	if rc := ll_future_new(loop, &target); rc != 0 {
		t.Fatal(rc)
	}
	s, _ := getLoop(loop)
	futuresBefore := s.loop.LiveFutures()
	refill := fillIDs(t)
	var out cid = 77
	rc := ll_task_new(loop, trapFn(), nil, &out)
	wantENOMEM(t, "ll_task_new", rc, out)
	rc = ll_run_in_executor(loop, trapFn(), nil, &out)
	wantENOMEM(t, "ll_run_in_executor", rc, out)
	for _, timeout := range []float64{0, 0.01, 1e10} {
		rc = ll_wait_for(loop, target, _Ctype_double(timeout), &out)
		wantENOMEM(t, "ll_wait_for", rc, out)
	}
	rc = ll_future_new(loop, &out)
	wantENOMEM(t, "ll_future_new", rc, out)
	rc = ll_sleep(loop, 0.01, &out)
	wantENOMEM(t, "ll_sleep", rc, out)
	rc = ll_gather(loop, 1, (*_Ctype_ll__cid)(unsafe.Pointer(&target)), 0, &out)
	wantENOMEM(t, "ll_gather", rc, out)
	// A handle timer takes no id from the table (its record is in C,
	// timerslab.go): it is made even now; cancelled, it never runs.
	rc = ll__call_later_go(0, loop, 0.005, trapFn(), nil, &out)
	if rc != 0 || !isSlabID(out) || ll__handle_cancel_go(0, out) != 0 || ll__release_go(out, 1) != 0 {
		t.Errorf("ll_call_later with a handle under a full id table: rc %d, id %#x", rc, uint64(out))
	}
	out = 77
	rc = ll__call_soon_go(0, loop, _Ctype_uintptr_t(uintptr(unsafe.Pointer(&trap))), 0, &out)
	wantENOMEM(t, "ll_call_soon", rc, out)
	rc = ll_tcp_listen(loop, nil, 0, 0, 0, nil, nil, &out)
	wantENOMEM(t, "ll_tcp_listen", rc, out)
	var tl cid = 77
	rc = ll__loop_new(&tl)
	wantENOMEM(t, "ll__loop_new", rc, tl)

	// Nothing was started: the loop runs past every deadline with no
	// callback (a trap would crash), no task, the target still pending.
	spin(loop, 60*time.Millisecond)
	refill()
	if st := ll_future_state(target); st != 0 {
		t.Errorf("target's state %d after refused wait_for calls, want pending", st)
	}
	if n := ll_all_tasks(loop, nil, 0); n != 0 {
		t.Errorf("%d tasks after a refused ll_task_new", n)
	}
	if got := s.loop.LiveFutures(); got != futuresBefore {
		t.Errorf("live futures %d -> %d after refused calls", futuresBefore, got)
	}
	ll__release_go(target, 1)
}

// A host fd given to a refused ll_transport_open stays the host's: open,
// unwatched, usable for a transport once ids are back.
func TestRefusedTransportOpenKeepsHostFd(t *testing.T) {
	loop := newLoop(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	refill := fillIDs(t)
	var out cid = 77
	rc := ll_transport_open(loop, _Ctype_int(fds[0]), 1, nil, nil, &out)
	wantENOMEM(t, "ll_transport_open", rc, out)
	var udp cid = 77
	rc = ll_udp_open(loop, nil, 0, (*_Ctype_ll__cchar)(unsafe.Pointer(&[]byte("127.0.0.1\x00")[0])), 9, 0, nil, nil, &udp)
	wantENOMEM(t, "ll_udp_open", rc, udp)
	refill()
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFD, 0); err != nil {
		t.Fatalf("the host's fd was closed by a refused ll_transport_open: %v", err)
	}
	if rc := ll_transport_open(loop, _Ctype_int(fds[0]), 1, nil, nil, &out); rc != 0 {
		t.Fatalf("ll_transport_open after ids came back: %d", rc)
	}
}

// cstr is a NUL-terminated copy of s (the exports read C strings; called
// from Go they may be Go memory).
func cstr(s string) *_Ctype_ll__cchar {
	b := append([]byte(s), 0)
	return (*_Ctype_ll__cchar)(unsafe.Pointer(&b[0]))
}

// A spawn refused with LL_ENOMEM has started no child.
func TestRefusedSpawnStartsNoChild(t *testing.T) {
	loop := newLoop(t)
	marker := filepath.Join(t.TempDir(), "ran")
	argv := []*_Ctype_ll__cchar{cstr("/bin/sh"), cstr("-c"), cstr("touch " + marker), nil}
	env := []*_Ctype_ll__cchar{cstr("PATH=/usr/bin:/bin"), nil}
	var o _Ctype_ll_process_options
	o.file = argv[0]
	o.argv = (**_Ctype_char)(unsafe.Pointer(&argv[0]))
	o.env = (**_Ctype_char)(unsafe.Pointer(&env[0]))
	o.stdio = [3]_Ctype_int{-3, -2, -2} // devnull, pipe, pipe: three ids wanted
	for _, free := range []int{0, 1, 2} {
		refill := fillIDs(t)
		ids.mu.Lock()
		ids.limit += uint32(free) // fewer ids than the spawn needs
		ids.mu.Unlock()
		var out cid = 77
		rc := ll_spawn(loop, (*_Ctype_ll__cprocess_options)(unsafe.Pointer(&o)), nil, nil, &out)
		wantENOMEM(t, "ll_spawn", rc, out)
		refill()
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a refused ll_spawn ran its child")
	}
	// With ids, the same options run it.
	var p cid
	if rc := ll_spawn(loop, (*_Ctype_ll__cprocess_options)(unsafe.Pointer(&o)), nil, nil, &p); rc != 0 {
		t.Fatalf("ll_spawn: %d", rc)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			ll__release_go(p, 1)
			return
		}
		ll__loop_run_go(loop, 1, 1)
	}
	t.Fatal("the child never ran")
}
