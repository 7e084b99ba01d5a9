// SPDX-License-Identifier: MIT

package main

import (
	"sync"

	"github.com/libloop/libloop/libloop"
)

// loopGate says which thread may act on a loop's objects right now, so that
// the calls documented as callable from any thread (ll_release) and the run
// entry points never touch the core (which is not thread-safe) from two
// threads at once.
//
// A thread is named by a token: the address of a C thread-local variable
// (cloop/thread.c), which costs nothing to get. The owner is the thread running
// the loop, or a thread that borrowed the idle loop to release something.
// Borrows nest on the owner's thread (a free function run by a release may
// release more); another thread's borrow waits for the owner to finish, or
// fails at once with LL_EWRONGTHREAD if the loop is running there.
//
// The gate is not taken by the ordinary loop-thread calls (those are the
// thread checks of enter); only by calls that end objects or run the loop.
type loopGate struct {
	mu       sync.Mutex
	idle     sync.Cond // signalled when owner becomes 0
	owner    uintptr   // token of the runner or borrower; 0: none
	depth    int       // borrows nested on the owner's thread
	running  bool
	released bool // the loop was released: it never runs again
}

// enterRun makes the calling thread the loop's runner. It fails with
// LL_ERUNNING if the loop runs anywhere (or is borrowed by this very thread,
// from inside a release), LL_EBADHANDLE once the loop was released, and
// waits while another thread's release is in progress.
func (g *loopGate) enterRun(tok uintptr) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		switch {
		case g.released:
			return int(libloop.EBADHANDLE)
		case g.running || g.owner == tok:
			return int(libloop.ERUNNING)
		case g.owner != 0:
			g.wait()
			continue
		}
		g.owner, g.running = tok, true
		return 0
	}
}

// exitRun ends the run enterRun began.
func (g *loopGate) exitRun() {
	g.mu.Lock()
	g.running = false
	if g.depth == 0 {
		g.setIdle()
	}
	g.mu.Unlock()
}

// borrow lets the calling thread act on the loop until unborrow: at once on
// the thread that runs or already borrowed it; after any other borrower is
// done on an idle (or released) loop; never while another thread runs it
// (LL_EWRONGTHREAD, and nothing may be done).
func (g *loopGate) borrow(tok uintptr) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		switch {
		case g.owner == tok:
		case g.running:
			return int(libloop.EWRONGTHREAD)
		case g.owner != 0:
			g.wait()
			continue
		default:
			g.owner = tok
		}
		g.depth++
		return 0
	}
}

// unborrow ends a borrow; the last one of an idle loop frees it for others.
func (g *loopGate) unborrow() {
	g.mu.Lock()
	g.depth--
	if g.depth == 0 && !g.running {
		g.setIdle()
	}
	g.mu.Unlock()
}

// markReleased records, under a borrow, that the loop is being released: it
// fails with LL_ERUNNING if the borrower is running it.
func (g *loopGate) markReleased() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running {
		return int(libloop.ERUNNING)
	}
	g.released = true
	return 0
}

// wait blocks until the gate may have changed; the caller holds g.mu.
func (g *loopGate) wait() {
	if g.idle.L == nil {
		g.idle.L = &g.mu
	}
	g.idle.Wait()
}

// setIdle frees the gate and wakes the waiters; the caller holds g.mu.
func (g *loopGate) setIdle() {
	g.owner = 0
	if g.idle.L != nil {
		g.idle.Broadcast()
	}
}
