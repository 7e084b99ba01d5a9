// SPDX-License-Identifier: MIT

package main

import (
	"sync"
	"testing"
	"time"

	"github.com/libloop/libloop/libloop"
)

// Borrows from many threads are exclusive: the work they guard (here a plain
// counter, which -race would flag) never overlaps, and none is lost.
func TestGateBorrowsExclude(t *testing.T) {
	var g loopGate
	var wg sync.WaitGroup
	count := 0
	for tok := uintptr(1); tok <= 4; tok++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				if rc := g.borrow(tok); rc != 0 {
					t.Errorf("borrow of an idle loop: %d", rc)
					return
				}
				count++
				g.unborrow()
			}
		}()
	}
	wg.Wait()
	if count != 4000 {
		t.Fatalf("count %d, want 4000", count)
	}
}

// While a thread runs the loop, it may borrow (nested, as a callback that
// releases does) and another thread may not; a second run is refused.
func TestGateRunner(t *testing.T) {
	var g loopGate
	const runner, other = 1, 2
	if rc := g.enterRun(runner); rc != 0 {
		t.Fatal(rc)
	}
	if rc := g.borrow(other); rc != int(libloop.EWRONGTHREAD) {
		t.Fatalf("borrow from another thread while running: %d", rc)
	}
	if rc := g.enterRun(other); rc != int(libloop.ERUNNING) {
		t.Fatalf("second run: %d", rc)
	}
	if rc := g.borrow(runner); rc != 0 {
		t.Fatalf("borrow on the running thread: %d", rc)
	}
	if rc := g.markReleased(); rc != int(libloop.ERUNNING) {
		t.Fatalf("release while running here: %d", rc)
	}
	g.unborrow()
	g.exitRun()
	if rc := g.borrow(other); rc != 0 {
		t.Fatalf("borrow after the run: %d", rc)
	}
	g.unborrow()
}

// A run started while another thread releases waits for the release, and a
// run after a release finds no loop.
func TestGateRunWaitsForRelease(t *testing.T) {
	var g loopGate
	if rc := g.borrow(1); rc != 0 {
		t.Fatal(rc)
	}
	got := make(chan int)
	go func() { got <- g.enterRun(2) }()
	select {
	case rc := <-got:
		t.Fatalf("run did not wait for the borrow: %d", rc)
	case <-time.After(20 * time.Millisecond):
	}
	if rc := g.markReleased(); rc != 0 {
		t.Fatal(rc)
	}
	g.unborrow()
	if rc := <-got; rc != int(libloop.EBADHANDLE) {
		t.Fatalf("run of a released loop: %d", rc)
	}
}
