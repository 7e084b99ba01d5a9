// SPDX-License-Identifier: MIT

package libloop

import (
	"math"
	"syscall"

	"github.com/libloop/libloop/internal/timers"
)

// The read gate: after the delivery that ends an I/O iteration, a host
// that reads sockets itself may run the loop's next I/O iterations in the
// same crossing, while each is nothing but a poll whose every event is a
// plain read of a stream transport with a host protocol, each read once
// and delivered. It is the chain (chain.go) for I/O: a ping-pong or a
// request/response connection runs one such iteration per message, and Go's
// side of it (the poll's return through Go frames, readiness to the ready
// queue, serveIO's read, the event copy, the delivery crossing) cost ~1,400
// of a round trip's ~1,900 instructions per iteration (bench/README.md).
//
// The loop opens the gate (gateTerms) only when the iteration Go would run
// next is fully known to be of that kind up to its poll:
//
//   - the run goes on until stopped (RunForever, RunUntilComplete: allowGate);
//     not Run(RunDefault), whose liveness is asked between iterations, nor
//     RunOnce, which runs one;
//   - no hook is active (prepare/check/idle hooks would have to run each
//     iteration: the gate is off while any exists), not debug mode, not
//     stopping;
//   - the delivery is the iteration's last work: it is the flush ready
//     callback's own (not one made inside a callback), the last run of the
//     event queue, the queue holds only DataReceived events (no EOF answer,
//     no close after resume to apply afterwards), none was withheld, it is
//     not a delivery made mid-read for room in the buffer, and nothing is
//     ready (the ready queue, the host's queue, posts);
//   - the selector can be polled elsewhere and tries before it blocks
//     (epoll);
//   - a lower bound of every timer's deadline is known (Deadline).
//
// The gate's polls are the next iterations' polls, made as Go makes them
// (run.go): a try with timeout 0 first while the poll plan lets tries run
// (TryFirst), and, when that finds nothing or tries rest, a poll that
// blocks until a timer may be due or until BlockUntil, the moment the loop
// owes the Go scheduler a turn (yieldBeforeBlock: Go yields before it
// blocks past it), unless a post waits (the host arms its own queue's wake
// protocol there, as its BeforeBlock does). So a server whose peer is in
// another process (its every poll blocks) stays in the gate too: a round
// trip there cost Go's whole iteration, ~1,800 instructions more than in
// the gate (callgrind, the loop thread). The host reports the time its
// blocking polls took (IdleNs, for Stats.Idle). Only one connection's
// iterations block so (gateBlockEvents): a delivery of more events opens
// the gate with BlockUntil 0 (never block: a poll that finds nothing
// hands back), and a poll of more events ends the blocking of the gate it
// runs in.
//
// The host then checks, before each iteration, what the iteration's own
// callbacks may have changed (the View's Changes and ReadyLen, its own
// call_soon queue and timers, a withheld event), polls, and after the poll
// what Go's iteration takes after its poll: posts from other threads and
// timers due (now > Deadline). Any of them, an event that is not EPOLLIN
// alone, an fd that is not such a transport's, or a transport paused,
// closing, writing (its write gate shut) or given to another protocol
// ends the gate; the last poll's answer is left for Go's next iteration as
// a chain's is (Polled), so that iteration runs the I/O first and then its
// posts and timers, in asyncio's order. An end of stream or a read error
// ends it too: the end is read again by Go's own read (a socket at its end
// stays readable), an error the host took is handed back (Failed) and
// applied as readStream would.
type ReadGater interface {
	EventSink
	// DeliverGated delivers evs as Deliver does, then runs I/O
	// iterations as the gate's terms allow and reports them in g.
	DeliverGated(l *Loop, evs []Event, g *ReadGate)
}

// ReadGate is a gate's terms and its outcome. The loop fills the first
// group; the host reads them, and the View while it runs, and fills the
// second.
type ReadGate struct {
	Poll          PollTarget // the selector's poll (as a chain's)
	View          *ChainView // the loop's words that end a chain, and the gate
	Deadline      int64      // loop ns: no timer is due while now <= Deadline
	BlockUntil    int64      // loop ns: a poll may block until then (0: never block; gateBlockEvents)
	TryFirst      bool       // poll with timeout 0 before a poll that may block
	MaxIterations int        // iterations at most (maxChain)
	ReadMax       int        // bytes one read takes at most (the loop's maxReadChunk)

	Iterations int        // out: I/O iterations run after the delivery
	Events     int        // out: the events they delivered
	Polled     int        // out: events the last poll left in Poll.Buf for Go (-1: none)
	Failed     *Transport // out: a read met Errno (the gate ended there)
	Errno      syscall.Errno
	IdleNs     int64 // out: time spent in polls that could block
}

// gateBlockEvents is the largest I/O iteration whose gate may block in its
// polls: one connection's answer, the request/response shape with the
// peer in another process, where each message's blocking iteration in Go
// cost ~2,000 loop-thread instructions more than the gate's (callgrind:
// 2,574 against 483). A delivery of many connections' events shares that
// cost among them; letting its polls block lost 8% of a many-connection
// echo server's round trips (cause not found), so its gate never blocks:
// it hands back at the first poll that finds nothing and Go's iteration
// blocks. Such gates open while tries rest too (a server that outruns its
// clients fails its tries, and the rest kept its reads in Go: ~740
// loop-thread instructions a round trip against 300-620 in the gate), for
// ~0.008 more zero-timeout epoll_wait a round trip. The host applies the
// same rule to its own polls: a poll of more events ends its blocking
// (capi/cloop/readgate.c).
const gateBlockEvents = 1

// gateState is the loop's side of the read gate.
type gateState struct {
	runner  ReadGater
	allowed bool // the run goes on until stopped (allowGate)
	g       ReadGate
}

// allowGate lets deliveries open the gate until the returned func is
// called: the run entry points that run until stopped.
func (l *Loop) allowGate() func() {
	l.gate.allowed = l.gate.runner != nil
	return func() { l.gate.allowed = false }
}

// gateTerms reports whether the sink run evs[i:] of the event queue evs
// may open the gate, and fills its terms (base: readStops when the queue
// was taken, as deliverQueued's).
func (l *Loop) gateTerms(evs []Event, base uint64) *ReadGate {
	gs := &l.gate
	ch := &l.chain
	if !gs.allowed || ch.sel == nil || l.debug || l.hooks.n > 0 || l.hostPending || l.stopping ||
		l.ready.len() > 0 || l.io.running || l.io.readStops != base || l.nWatched == 0 ||
		l.view().Posted.Load() != 0 || !l.pollFirst {
		return nil
	}
	// One connection's answer (gateBlockEvents) opens a gate whose polls
	// may block; a larger one a gate whose polls never block.
	blocks := len(evs) <= gateBlockEvents
	for i := range evs {
		if evs[i].Kind != DataReceived {
			return nil
		}
	}
	floor := int64(math.MaxInt64) // no timer at all (the floor's zero value says 0)
	if l.timers.len() > 0 || l.hostTimers.Len() > 0 || l.sourceQueued {
		if l.dueFloor.seq != l.seq {
			// Unknown since the last timer moved: the earliest deadline
			// of the three queues is such a bound (a cancelled one only
			// lowers it), and is the floor queueDueTimers would find.
			which, when := l.earliestTimer()
			if which == 0 {
				when = math.MaxInt64
			}
			l.dueFloor = dueFloor{when: when, seq: l.seq}
		}
		floor = l.dueFloor.when
	}
	// A timer is due at now once DueBy(now) > floor: now > floor - Resolution.
	if floor < math.MinInt64+timers.Resolution {
		return nil
	}
	g := &gs.g
	*g = ReadGate{
		Poll:          ch.sel.pollTarget(),
		View:          l.view(),
		Deadline:      floor - timers.Resolution,
		TryFirst:      l.plan.tries != triesRest,
		MaxIterations: maxChain,
		ReadMax:       maxReadChunk,
		Polled:        -1,
	}
	if blocks {
		g.BlockUntil = l.lastYield + yieldSlice
	}
	return g
}

// gateDone counts what the host ran as the loop's own iterations, applies
// a read error it met, and leaves the last poll's answer for the next
// iteration (takePolled: a poll that found nothing is that iteration's
// early try, which then rests tries as its own would).
func (l *Loop) gateDone(g *ReadGate) {
	if t := g.Failed; t != nil {
		g.Failed = nil
		t.readFailed(g.Errno)
	}
	l.counters.idleNs += g.IdleNs
	if g.Iterations == 0 && g.Polled < 0 {
		return
	}
	l.iter += uint64(g.Iterations)
	l.counters.callbacks += uint64(g.Iterations) // one I/O callback each, as runIO
	l.counters.events += uint64(g.Events)
	l.yieldWork += 2 * uint64(g.Iterations) // the run's next iteration looks at it
	l.chain.polled = g.Polled
	l.plan.stale() // the gate's reads say nothing of drained sockets
}

// readFailed applies an error a host's read of t's socket met (the gate):
// what readStream does with it.
func (t *Transport) readFailed(errno syscall.Errno) {
	t.loop.plan.stale()
	if t.state == tClosed || errno == syscall.EAGAIN || errno == syscall.EINTR {
		return
	}
	t.fatal(errno)
}

// deliverSink hands the sink run evs[i:j] of the event queue to the sink,
// through the gate when it is the queue's last run, the delivery is the
// flush ready callback's own (top: not one a callback's call made, which
// would run iterations nested inside that callback) and the loop allows it.
func (l *Loop) deliverSink(evs []Event, i, j int, base uint64, top bool) {
	if top && j == len(evs) && l.gate.allowed {
		if g := l.gateTerms(evs, base); g != nil {
			l.gate.runner.DeliverGated(l, evs[i:j], g)
			l.gateDone(g)
			return
		}
	}
	l.io.sink.Deliver(l, evs[i:j])
}
