// SPDX-License-Identifier: MIT

package libloop

import (
	"fmt"
	"time"

	"github.com/libloop/libloop/internal/timers"
)

// minScheduledForPurge and the half-cancelled rule are asyncio's: when more
// than 100 timers are scheduled and over half are cancelled, rebuild the heap
// without them; otherwise only pop cancelled heads.
const minScheduledForPurge = 100

// dispatchBatch caps how many host callbacks go to C in one crossing.
const dispatchBatch = 256

// run runs iterations, each asyncio's BaseEventLoop._run_once: one if once,
// else until the loop is stopping. The iterations loop here rather than in
// the callers so that, at the end of each, the return after its system calls
// (the poll, the reads, the writes of the callbacks it ran) is not one more
// mispredicted return (chain.go says why those cost).
func (l *Loop) run(nowait, once bool) error {
	plan := &l.plan
	plan.stale() // what the caller did before this run is for its first poll to see
	for {
		l.purgeCancelledTimers()
		l.maybeReturnMemory()
		l.iter++
		if l.yieldWork >= yieldEvery {
			l.yieldWork = 0
			l.yieldIfLong()
		}

		// Hooks (hook.go): while none is active, two loads and branches an
		// iteration (here and after the poll; ~8 instructions, callgrind).
		idle := false
		if l.hooks.n > 0 {
			idle = l.beforePoll()
		}
		// The plan (pollplan.go) is looked at only in an iteration with
		// timeout 0: a try's find that made it one rests tries, and a
		// poll that allows it lets it skip its own. Only the iteration
		// right after that poll may skip (skipZero reads the clock).
		timeout := int64(-1)
		skip := false
		if nowait || idle || l.ready.len() > 0 || l.hostPending || l.stopping || l.view().Posted.Load() > 0 {
			timeout = 0
			if plan.tries == triesFound {
				plan.startRest(l.iter) // the find lost this iteration its skip
			}
			skip = plan.fresh && !l.stopping && plan.skipZero()
		}
		plan.fresh = false
		// With an fd watched and a selector that tries a non-blocking poll
		// before blocking anyway (epoll), the loop makes that try first:
		// what it finds would end any poll at once, so choosing a timeout
		// (the host's BeforeBlock, the first deadline, the clock reads that
		// time the wait) matters only when it finds nothing. A busy loop (a
		// ping-pong, a loaded server) finds something nearly every iteration
		// and skips that work. While the plan rests tries, the loop chooses
		// the timeout and blocks at once, and the selector does not try
		// either.
		early := l.nWatched > 0 && l.pollFirst && plan.tries != triesRest
		// clockAt: the clock blockTimeout read to time the wait (0: none),
		// which then also starts the idle time: one read fewer an
		// iteration that blocks (a clock read is ~30-40 ns in a VM).
		clockAt := int64(0)
		if timeout != 0 && !early {
			timeout, clockAt = l.blockTimeout()
		}
		tried := false // a non-blocking poll found nothing this iteration
		if l.nWatched > 0 && (timeout == 0 && !skip || early) {
			evs, woke, ok := l.takePolled(0)
			if !ok {
				var err error
				if evs, woke, err = l.sel.poll(0, l.events[:0], false); err != nil {
					return err
				}
			}
			switch {
			case timeout == 0:
				l.polled(evs, woke)
			case len(evs) > 0 || woke: // the early try found something
				plan.tries = triesFound
				l.polled(evs, woke)
				timeout = 0
			default:
				plan.startRest(l.iter)
				tried = true
				timeout, clockAt = l.blockTimeout()
			}
		}
		// A poll that may block is timed for Stats.Idle; it does not repeat
		// the try, nor make one while tries rest. No fd watched and timeout
		// 0: no poll, since it could report nothing but the wakeup fd, and
		// posted callbacks are taken below anyway.
		// polledAt: when this iteration's blocking poll returned (0: it
		// made none), the "now" of its due timers below, as asyncio's
		// _run_once reads the clock once after its select.
		polledAt := int64(0)
		if timeout != 0 {
			idleFrom := clockAt
			if idleFrom == 0 {
				idleFrom = monoNow()
			}
			l.yieldBeforeBlock(idleFrom)
			evs, woke, ok := l.takePolled(timeout)
			if !ok {
				rested := !tried && plan.tries == triesRest && l.pollFirst && l.nWatched > 0
				var err error
				evs, woke, err = l.sel.poll(timeout, l.events[:0], tried || rested)
				now := monoNow()
				polledAt = now
				l.counters.idleNs += now - idleFrom
				if err != nil {
					return err
				}
				n := len(evs)
				if woke {
					n++
				}
				plan.blocked(n, now, rested, l.iter)
			}
			l.polled(evs, woke)
		}
		l.takePosted()
		l.takeHostPosts()
		if l.hooks.n > 0 {
			l.runHooks(HookCheck)
		}

		if l.timers.len() > 0 || l.hostTimers.Len() > 0 || l.sourceQueued {
			// The poll's return time, unless check hooks ran since (they
			// run the host's code, which takes time).
			if polledAt == 0 || l.hooks.n > 0 {
				polledAt = monoNow()
			}
			l.queueDueTimers(timers.DueBy(polledAt))
		}

		ntodo := l.ready.len()
		l.yieldWork += 1 + uint64(ntodo)
		if l.hostPending {
			// The host's own queue holds what it scheduled in the previous
			// iteration, so it runs before this iteration's I/O and timers.
			l.hostPending = false
			l.yieldWork += yieldHostRun
			if l.hostQueue != nil && l.hostQueue.RunHostQueue(l) {
				l.hostPending = true
			}
		}
		// Counted once per iteration, not per callback: a cancelled handle is
		// subtracted where it is dropped, a host batch adds its calls where it
		// runs (the rare paths).
		l.counters.callbacks += uint64(ntodo)
		for ntodo > 0 {
			ntodo -= l.runSome(ntodo)
		}
		if once || l.stopping {
			return nil
		}
	}
}

func (l *Loop) purgeCancelledTimers() {
	if l.sourceQueued {
		l.timerSource.Tidy()
	}
	n := l.timers.len()
	if n > minScheduledForPurge && 2*l.timerCancelled > n {
		l.timers.removeIf(func(h *Handle) bool {
			if !h.cancelled {
				return false
			}
			h.inHeap = false
			l.unref(h)
			return true
		})
		l.timerCancelled = 0
		return
	}
	for l.timers.len() > 0 && l.timers.peek().Val.cancelled {
		l.timerCancelled--
		l.unref(l.timers.pop())
	}
}

// blockTimeout is how long the poll may block when nothing is ready: 0 if
// the host's post source has work (BeforeBlock), else until the first timer,
// else forever (-1); and the clock it read to tell (0 if it read none).
func (l *Loop) blockTimeout() (timeout, now int64) {
	if l.postSource != nil && l.postSource.BeforeBlock() {
		return 0, 0
	}
	if when, ok := l.nextDeadline(); ok {
		// Compared first: a deadline of -Inf is math.MinInt64, and the
		// subtraction would overflow.
		if now = monoNow(); when > now {
			return when - now, now
		}
		return 0, now
	}
	return -1, 0
}

// polled takes a poll's answer: the readiness it reported, and the wakeup.
func (l *Loop) polled(evs []ioEvent, woke bool) {
	l.counters.events += uint64(len(evs))
	if woke {
		l.wakePending.Store(0)
	}
	l.processEvents(evs)
	l.events = evs[:0]
}

func (l *Loop) processEvents(evs []ioEvent) {
	for _, e := range evs {
		if e.mask == evExit {
			l.plan.stale()
			l.childExited(int(e.fd))
			continue
		}
		w := l.fds.get(e.fd)
		if w == nil {
			continue
		}
		if hs, ok := w.owner.(*fdHandles); ok {
			// A reader's or writer's callback: whether it leaves the fd
			// ready is its own affair.
			l.plan.stale()
			hs.ioReady(e.mask)
			continue
		}
		// A transport's read says itself whether it drained the socket
		// (readStream); a write may leave it writable.
		if e.mask != evRead {
			l.plan.stale()
		}
		l.queueIO(w.owner, e.mask)
	}
}

// runSome runs up to max handles from the head of the ready queue and
// returns how many it consumed. Consecutive host callbacks go to the
// host as one batch (one per handle in debug mode, to time each).
func (l *Loop) runSome(max int) int {
	it := l.ready.pop()
	if it.isMark() {
		if it.arg == markBatch {
			l.runBatch()
		} else {
			l.runMark(it.arg)
		}
		return 1
	}
	h := it.h
	if h == nil && (l.debug || l.host == nil) {
		h = l.hostHandle(it) // debug mode times and reports it as a handle
	}
	if h != nil {
		if h.cancelled {
			l.counters.callbacks--
			l.unref(h)
			return 1
		}
		if h.isGo() || l.host == nil {
			l.runGo(h)
			return 1
		}
	}
	limit := dispatchBatch
	if l.debug {
		limit = 1
	}
	if limit > max {
		limit = max
	}
	buf := l.host.Buffer(limit)
	l.dispatchBuf = buf
	batch := l.batchHandles[:0]
	n := 0
	for {
		switch {
		case h == nil: // a host call by value: nothing to mark or release
			buf[len(batch)] = HostCall{Fn: it.fn, Arg: it.arg, ID: l.Tag}
			// batchHandles past its length is all nil (cleared below):
			// lengthen it without storing a nil, and without the
			// barrier that store pays while the GC marks.
			if len(batch) < cap(batch) {
				batch = batch[:len(batch)+1]
			} else {
				batch = append(batch, nil)
			}
		case !h.cancelled:
			buf[len(batch)] = h.call
			h.inBatch = true
			h.pos = int32(len(batch))
			batch = append(batch, h)
		default:
			l.counters.callbacks--
			l.unref(h)
		}
		n++
		if n == max || len(batch) == limit || l.ready.len() == 0 {
			break
		}
		if next := l.ready.peek(); next.isMark() || next.h != nil && next.h.isGo() && !next.h.cancelled {
			break
		}
		it = l.ready.pop()
		h = it.h
	}
	// Read debug once: a callback in the batch may switch it.
	debug := l.debug
	var start time.Time
	if debug {
		start = time.Now()
	}
	l.dispatch(len(batch), n == max)
	if debug {
		l.reportSlow(batch[0], time.Since(start))
	}
	for i, bh := range batch {
		if bh == nil {
			continue
		}
		bh.inBatch = false
		bh.pos = -1
		l.unref(bh)
		batch[i] = nil
	}
	l.batchHandles = batch[:0]
	return n
}

// hostHandle gives a handle-less host call a pooled handle (debug mode,
// where each call is timed and reported with its handle).
func (l *Loop) hostHandle(it readyItem) *Handle {
	h := l.newHandle()
	h.call = HostCall{Fn: it.fn, Arg: it.arg, ID: l.Tag}
	return h
}

func (l *Loop) runGo(h *Handle) {
	if !h.isGo() {
		l.counters.callbacks--
		l.unref(h) // a host callback with no Host installed cannot run
		return
	}
	if debug := l.debug; debug {
		start := time.Now()
		l.callGo(h)
		l.reportSlow(h, time.Since(start))
	} else {
		l.callGo(h)
	}
	l.unref(h)
}

// callGo runs a Go callback; a panic is reported to the exception handler
// and the loop goes on, as asyncio logs an exception raised by a callback.
func (l *Loop) callGo(h *Handle) {
	defer func() {
		if r := recover(); r != nil {
			l.CallExceptionHandler(&ErrorContext{
				Message: fmt.Sprintf("Exception in callback: %v", r),
				Code:    int(EINVAL),
			})
		}
	}()
	if h.futfn != nil {
		h.futfn(h.fut)
	} else {
		h.gofn()
	}
}

// runMark runs one of the loop's own callbacks queued as a mark (queueOwn),
// recovering a panic as callGo does (a Go Protocol's, through runIO).
func (l *Loop) runMark(kind uintptr) {
	defer func() {
		if r := recover(); r != nil {
			l.CallExceptionHandler(&ErrorContext{
				Message: fmt.Sprintf("Exception in callback: %v", r),
				Code:    int(EINVAL),
			})
		}
	}()
	// runIO's halves called here, not through it: the protocols' calls
	// (and their writes' system calls) run one frame less deep.
	if kind == markIO {
		l.serveIO()
	}
	l.flushEvents()
}

func (l *Loop) reportSlow(h *Handle, d time.Duration) {
	if d < l.slowDuration {
		return
	}
	l.CallExceptionHandler(&ErrorContext{
		Message: fmt.Sprintf("Executing callback took %.3f seconds", d.Seconds()),
		Handle:  h,
	})
}
