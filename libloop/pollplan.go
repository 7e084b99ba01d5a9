// SPDX-License-Identifier: MIT

package libloop

// pollPlan is what the loop remembers of its recent polls to spare two
// system calls that request/response traffic made for nothing (a client
// waiting on its server: asyncpg, redis-py, one connection). A query there
// made three epoll_wait where uvloop makes one; with the plan it makes one.
//
//  1. The early try. With epoll an iteration that may block first polls
//     without blocking (run.go): when that finds something, choosing a
//     timeout is skipped (the host's BeforeBlock, the first deadline, the
//     clock reads that time the wait), which a busy loop (a ping-pong, a
//     loaded server) does nearly every iteration. A client that has just
//     sent its request mostly finds nothing: the answer comes after the
//     server runs. And when it does find the answer, its callbacks wake a
//     task, so the next iteration must poll with timeout 0, a poll that
//     can be skipped (2) only after a poll that blocked, whose return the
//     loop timed. So tries rest after one that found nothing, or whose
//     find made the next iteration a zero-timeout one: iterations then
//     choose their timeout and block at once, the selector told not to
//     try either. After a rest of 1 blocking iteration they try again; a
//     try that fails again at once (within retryWithin iterations of
//     resuming) doubles the next rest, up to maxRest, and one that pays
//     for longer brings it back to 1. A request/response client pays one empty try
//     per maxRest answers; a busy loop that lost its rhythm for a moment
//     pays one iteration's timeout choice and a scheduler hand-off around
//     a poll, ~100 ns, against ~150-500 ns for an empty try here.
//
//  2. The zero-timeout poll after an answer. In asyncio's order the
//     callback an answer's I/O callback schedules (the task step that
//     data_received wakes) runs in the next iteration, whose poll has
//     timeout 0; that poll comes microseconds after the one that brought
//     the answer and finds nothing. It is skipped when what it could find
//     is only what arrived since that poll (skipZero): the previous
//     iteration's poll blocked, returned fewer records than its buffer
//     holds, and every event it reported was a plain stream transport's
//     read that left its socket drained (a read shorter than its buffer: a
//     level-triggered poll reports such an fd again only for new data; a
//     TLS, datagram or pipe transport's, a reader's or writer's callback,
//     a write, an end of stream or an error say nothing of the kind);
//     no interest changed since; less than skipWindow has passed since it
//     returned. Skipping it is then the same as that data arriving a
//     moment later, which the loop cannot tell from the data itself. The
//     skipped iteration is asyncio's otherwise: its ready callbacks, then
//     the next iteration polls. Never two in a row (a skipped iteration
//     polls nothing, so it cannot make the next one skippable), so a loop
//     that always has work still polls at least every other iteration;
//     not when the loop is stopping, and not in the first iteration of a
//     run (what the caller did before the call, say a write to a socket
//     the loop watches, is seen at once; a RunOnce is all first).
//
// Both keep asyncio's order of callbacks: the first changes only which
// system call finds the events, the second only when an event that came
// after a poll is seen.
type pollPlan struct {
	tries   uint8  // triesOn, triesFound or triesRest (1)
	fresh   bool   // the last poll qualifies the next iteration's for skipZero (2)
	rest    uint8  // blocking iterations left in the rest
	restLen uint8  // the last rest's length
	resumed uint64 // the iteration in which tries last resumed
	freshAt int64  // loop time when the poll that set fresh returned
	skipped uint64 // zero-timeout polls skipped (tests read it)
}

// The states of the early try (1). One byte, so that the busy path (a try
// that finds something, an iteration that may block after it) writes one
// field and reads one.
const (
	triesOn    = iota // try first
	triesFound        // try first; the last try found events, and a next iteration with timeout 0 rests tries
	triesRest         // block at once
)

// maxRest caps a rest (blocking iterations).
const maxRest = 64

// retryWithin is how soon after resuming a failed try doubles the rest:
// a request/response cycle's iterations (the block that resumed tries,
// the answer's step, the try after the request, the step it lost its
// skip to).
const retryWithin = 4

// skipWindow is how recent the poll that brought an answer must be for
// the next iteration to skip its zero-timeout poll (ns). An answer's I/O
// callbacks take 10-30 µs of Python here (asyncpg, redis-py); a window an
// order longer than the poll's own cost says the skipped poll's ~0.3 µs
// would still be 0.3% or more of the time. Past it, callbacks ran long
// enough for other fds' data to be likely, and the poll is made.
const skipWindow = 100_000

// startRest rests tries in iteration iter: for 1 blocking iteration after
// a spell in which they paid, for twice the last rest when they failed
// within retryWithin iterations of resuming.
func (p *pollPlan) startRest(iter uint64) {
	if iter-p.resumed > retryWithin || p.restLen == 0 {
		p.restLen = 1
	} else {
		p.restLen = min(2*p.restLen, maxRest)
	}
	p.rest = p.restLen
	p.tries = triesRest
}

// blocked records a poll that may have blocked, made in iteration iter: it
// returned at loop time now with n records (the wakeup fd counted). The
// events' service can still void it for skipZero (stale). rested: tries
// rest, and this iteration counts toward the rest's end.
func (p *pollPlan) blocked(n int, now int64, rested bool, iter uint64) {
	p.fresh = n > 0 && n < pollBuffer
	p.freshAt = now
	if rested {
		if p.rest--; p.rest == 0 {
			p.tries = triesOn
			p.resumed = iter
		}
	}
}

// skipZero reports whether this iteration may skip its zero-timeout poll
// (the caller has checked fresh and forgets it after).
func (p *pollPlan) skipZero() bool {
	if monoNow()-p.freshAt >= skipWindow {
		return false
	}
	p.skipped++
	return true
}

// stale voids the last poll for skipZero: an fd it reported may still be
// ready, or an fd's interest changed after it.
func (p *pollPlan) stale() { p.fresh = false }
