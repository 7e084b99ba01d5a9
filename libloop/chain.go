// SPDX-License-Identifier: MIT

package libloop

import (
	"sync/atomic"
	"unsafe"
)

// Iterations run in the host's batch (the chain). A host whose callbacks
// run in C batches (capi) and schedule each other with call_soon makes the
// loop run one short iteration per callback: bench/'s callback chain, a request
// handler's chain of steps. When such an iteration holds nothing but that
// host's own call_soon work (no timer, no post, no Go handle, no event),
// the iteration Go would run is fully known: poll if an fd is watched, then
// call what the last batch queued, in order. The host runs it itself, in
// the batch's crossing, and goes on while that stays true.
//
// Why: a system call returns with the CPU's return predictions flushed on
// this machine (Spectre/SRSO mitigations), so each frame the call returns
// through costs ~6 ns (bench/README.md, the callback chain with an fd watched); the loop's poll returns
// through four Go frames, one from C inside the batch through ten. Run
// from the batch, the poll returns through one, and the iteration costs no
// Go at all.
//
// Anything else ends the chain before the next iteration starts and Go
// runs that iteration: a change of the loop's state (changes: a new
// handle or timer of any kind, Stop, a change of interest), a Go-side
// ready entry, a post from another thread, a timer the host queued, an
// event (handed to Go as the next poll's answer), or MaxIterations. The
// loop allows a chain only while it runs forever or until a future is
// done (ll_loop_run_once runs exactly one iteration), outside debug mode,
// with no timer at all and no work in a host queue of its own (Python's;
// HostReady ends a chain).

// ChainRunner is a Host that can run the loop's next iterations in a
// batch's crossing (a chain, above).
type ChainRunner interface {
	Host
	// RunChain runs calls[0:n] as Run does, then runs up to
	// c.MaxIterations more iterations while they hold only the host's own
	// call_soon work, as the Chain describes, and reports what it did.
	RunChain(l *Loop, n int, c *Chain)
}

// Chain is a chain's terms and its outcome. The loop fills the first
// group; the runner reads them, and the View while it runs (valid until
// RunChain returns), and fills the second group.
type Chain struct {
	Poll          PollTarget // Fd -1: no fd watched, iterations do not poll
	MaxIterations int        //
	View          *ChainView // the loop's words that end a chain

	Iterations int // iterations run after the batch
	Calls      int // callbacks they called
	Polled     int // events the last poll left in Poll.Buf for the next iteration (-1: none)
}

// ChainViewVersion names ChainView's layout. A runner in another language
// declares the same struct under the same number (capi/cloop/cloop.h's
// ll__chain_view, LL__CHAIN_VIEW_VERSION; capi checks that both agree when
// it compiles) and runs no chain on a view of another version.
const ChainViewVersion = 1

// ChainView is what a chain runner reads, after each iteration it runs, to
// know that the next one is still only its own call_soon work: one struct
// of fixed layout (offsets 0, 4, 8, 16; 24 bytes, no Go pointers), so the
// runner follows no pointer into the loop's internals. These words are the
// loop's own counters, kept here rather than copied: the ready queue counts
// its length in ReadyLen (the view lives in the ready queue, ready.go), the
// post queue its waiting calls in Posted, and changed bumps Changes; so
// the view is current at every moment, written only by the loop's thread
// or, for Posted, atomically by any thread.
type ChainView struct {
	Version  uint32       // ChainViewVersion
	Posted   atomic.Int32 // callbacks posted through Go, not yet taken; non-zero ends the chain
	Changes  uint64       // the loop's change counter (changed); a move ends the chain
	ReadyLen int64        // the ready queue's length; non-zero ends the chain
}

// PollTarget names the selector's poll: on Linux an epoll fd and a buffer
// of Max epoll_event records (the kernel's layout, no Go pointers in it).
type PollTarget struct {
	Fd  int
	Buf unsafe.Pointer
	Max int
}

// maxChain bounds a chain: the loop's own checks (yielding to the Go
// scheduler, returning memory) run at least that often, and a chain of
// iterations with a poll stays well under sysmon's 20 µs look at a thread
// in a C call.
const maxChain = 64

// pollTargetSelector is a selector whose poll can be made elsewhere: it
// names its target and decodes n records written there.
type pollTargetSelector interface {
	pollTarget() PollTarget
	decode(n int, evs []ioEvent) ([]ioEvent, bool)
}

// chainState is the loop's side of chains.
type chainState struct {
	runner  ChainRunner
	sel     pollTargetSelector // nil: the selector cannot be polled elsewhere
	allowed bool               // RunForever/RunUntilComplete, set by allowChain
	c       Chain
	polled  int // events waiting in the selector's buffer for the next poll; -1: none
}

// setChainRunner enables chains when the host supports them.
func (l *Loop) setChainRunner(d Host) {
	l.chain.runner, _ = d.(ChainRunner)
	l.chain.sel, _ = l.sel.(pollTargetSelector)
	l.chain.polled = -1
}

// changed counts a change of the loop's state that a chain must not miss.
func (l *Loop) changed() { l.view().Changes++ }

// view is the loop's ChainView.
func (l *Loop) view() *ChainView { return &l.ready.view }

// allowChain lets batches run chains until the returned func is called
// (the run entry points that run iterations until stopped).
func (l *Loop) allowChain() func() {
	// A chain runs no hooks (hook.go): none while any is active.
	l.chain.allowed = l.chain.runner != nil && l.hooks.n == 0
	return func() { l.chain.allowed = false }
}

// dispatch hands a batch to the host; a batch that ends the
// iteration's callbacks (last) may run a chain when the loop allows one.
func (l *Loop) dispatch(n int, last bool) {
	ch := &l.chain
	if !last || !ch.allowed || l.debug || l.hostPending || l.stopping || l.ready.len() > 0 ||
		l.timers.len() > 0 || l.hostTimers.Len() > 0 || l.sourceQueued {
		l.host.Run(l, n)
		return
	}
	c := &ch.c
	c.Poll = PollTarget{Fd: -1}
	if l.nWatched > 0 {
		if ch.sel == nil {
			l.host.Run(l, n) // the poll must be Go's
			return
		}
		c.Poll = ch.sel.pollTarget()
	}
	c.MaxIterations = maxChain
	c.View = l.view()
	c.Iterations, c.Calls, c.Polled = 0, 0, -1
	ch.runner.RunChain(l, n, c)
	if c.Iterations > 0 {
		l.iter += uint64(c.Iterations)
		l.counters.callbacks += uint64(c.Calls)
		l.yieldIfLong()
	}
	ch.polled = c.Polled
}

// takePolled returns the events a chain's last poll found, if this
// iteration may use them: a poll that may block needs a fresh one unless
// that poll found something (it would have returned at once).
func (l *Loop) takePolled(timeout int64) (evs []ioEvent, woke, ok bool) {
	n := l.chain.polled
	if n < 0 {
		return nil, false, false
	}
	l.chain.polled = -1
	if timeout != 0 && n == 0 {
		return nil, false, false
	}
	evs, woke = l.chain.sel.decode(n, l.events[:0])
	return evs, woke, true
}

// setInterest changes fd's interest in the selector: a change a chain must
// see, and one that voids events polled under the old interests and the
// plan's skip of the next zero-timeout poll.
func (l *Loop) setInterest(fd int, old, new uint8) error {
	l.chain.polled = -1
	l.plan.stale() // an fd watched anew may be ready already
	l.changed()
	return l.sel.control(fd, old, new)
}
