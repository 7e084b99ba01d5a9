// SPDX-License-Identifier: MIT

package main

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// cid is the C id type of the exports (cgo's name for C.uint64_t; test files
// cannot import "C").
type cid = _Ctype_uint64_t

// race runs release(id, token) from two goroutines standing for two threads
// (distinct tokens) and returns both results.
func race(id cid) [2]int {
	var rc [2]int
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc[g] = int(ll__release_go(id, _Ctype_uintptr_t(100+g)))
		}()
	}
	wg.Wait()
	return rc
}

// neverCalled stands for a callback address: the timers made here never run.
var neverCalled byte

func oneWinner(t *testing.T, what string, round int, rc [2]int) {
	t.Helper()
	bad := int(libloop.EBADHANDLE)
	if !(rc[0] == 0 && rc[1] == bad) && !(rc[0] == bad && rc[1] == 0) {
		t.Fatalf("%s round %d: ll_release returned %v, want one 0 and one LL_EBADHANDLE", what, round, rc)
	}
}

// Two threads releasing one future, handle or loop id: exactly one drops the
// reference, and -race sees no unsynchronised access to the core.
func TestReleaseFromTwoThreads(t *testing.T) {
	var loop cid
	if rc := ll__loop_new(&loop); rc != 0 {
		t.Fatal(rc)
	}
	for round := 0; round < 300; round++ {
		var f, h, l cid
		if rc := ll_future_new(loop, &f); rc != 0 {
			t.Fatal(rc)
		}
		oneWinner(t, "future", round, race(f))
		if rc := ll__call_later_go(0, loop, 3600, (*[0]byte)(unsafe.Pointer(&neverCalled)), nil, &h); rc != 0 {
			t.Fatal(rc)
		}
		oneWinner(t, "handle", round, race(h))
		if rc := ll__loop_new(&l); rc != 0 {
			t.Fatal(rc)
		}
		oneWinner(t, "loop", round, race(l))
	}
	if rc := ll__release_go(loop, 1); rc != 0 {
		t.Fatal(rc)
	}
}
