// SPDX-License-Identifier: MIT

package libloop

// References, libuv's uv_ref/uv_unref: every timer, hook, transport,
// server, process and signal handler is referenced when made; an
// unreferenced one still works (its callbacks run, its events arrive) but
// does not keep Run(RunDefault) going. What keeps a loop alive (Alive):
//
//   - a ready callback: the ready queue, the host's queue, a post from
//     another thread not yet taken;
//   - a referenced live timer (a Handle timer, a Timer, a handle-less one,
//     a host's TimerSource timer);
//   - a referenced active hook (libuv's prepare, check and idle handles);
//   - a watched fd: a referenced transport (open or closing), a
//     referenced server's listening sockets, a connection being made, a
//     reader or writer of AddReader/AddWriter (libuv's uv_poll_t);
//   - a referenced process that has not exited;
//   - a referenced signal handler;
//   - a referenced active file-system watcher (fswatch.go);
//   - a job of the executor or the resolver pool queued, running, or whose
//     outcome is not delivered yet (libuv's pending requests);
//   - what an ObjectSource (walk.go) says keeps it alive.
//
// A future is a request's outcome, not a request: a pending future keeps
// the loop alive only through what will settle it (one of the above). One
// the host settles from a thread of its own is invisible to the loop: keep
// something referenced meanwhile (libuv's uv_async_t plays that part).
//
// Cost: nothing is counted per callback, per timer or per poll. The loop
// already counts its timers, hooks, watched fds and signal handlers; what
// references add is kept where a reference changes and where an
// unreferenced object ends (a stop, a cancel, an exit, an unwatch), never
// on the paths that run, queue or fire things. Alive is computed only by
// Run(RunDefault), once an iteration.

// refState is the loop's reference bookkeeping.
type refState struct {
	quietFDs     int        // watched fds that keep the loop alive no more (fdWatch.quiet)
	quietTimers  int        // unreferenced armed Timers
	quietHooks   int        // unreferenced active hooks
	quietSignals int        // unreferenced signal handlers
	quietProcs   int        // unreferenced processes not yet exited
	procs        int        // processes not yet exited
	live         []*Process // those processes, for Walk (Process.liveIdx)
	// quietHandles holds unreferenced Handle timers by their sequence: a
	// Handle is pooled and recycled, so an entry counts only while the
	// record still carries that sequence and is queued, uncancelled.
	quietHandles map[*Handle]uint64
}

// Ref makes the timer keep the loop alive again (the default).
func (h *Handle) Ref() {
	l := h.loop
	if l.refs.quietHandles != nil {
		delete(l.refs.quietHandles, h)
	}
}

// Unref makes a timer handle stop keeping the loop alive (it still runs
// when due); it does nothing to a handle that is not a pending timer.
func (h *Handle) Unref() {
	if !h.timer || !h.inHeap || h.cancelled {
		return
	}
	r := &h.loop.refs
	if r.quietHandles == nil {
		r.quietHandles = make(map[*Handle]uint64)
	}
	r.pruneHandles()
	r.quietHandles[h] = h.seq
}

// HasRef reports whether the handle keeps the loop alive while pending
// (true unless Unref was called on it).
func (h *Handle) HasRef() bool {
	seq, ok := h.loop.refs.quietHandles[h]
	return !ok || seq != h.seq
}

// pruneHandles drops entries whose timer ran, was cancelled or was
// recycled, so the map holds no more than the live unreferenced timers.
func (r *refState) pruneHandles() {
	for h, seq := range r.quietHandles {
		if h.seq != seq || !h.inHeap || h.cancelled {
			delete(r.quietHandles, h)
		}
	}
}

// Ref makes the timer keep the loop alive while armed (the default).
func (t *Timer) Ref() {
	if !t.unrefd {
		return
	}
	t.unrefd = false
	if t.h != nil {
		t.loop.refs.quietTimers--
	}
}

// Unref makes the timer stop keeping the loop alive; it still runs. The
// choice stays across Stop, Start and Again, as libuv's.
func (t *Timer) Unref() {
	if t.unrefd {
		return
	}
	t.unrefd = true
	if t.h != nil {
		t.loop.refs.quietTimers++
	}
}

// HasRef reports whether the timer keeps the loop alive while armed.
func (t *Timer) HasRef() bool { return !t.unrefd }

// Ref makes the hook keep the loop alive while active (the default).
func (h *Hook) Ref() {
	if !h.unrefd {
		return
	}
	h.unrefd = false
	if h.active {
		h.loop.refs.quietHooks--
	}
}

// Unref makes the hook stop keeping the loop alive; it still runs.
func (h *Hook) Unref() {
	if h.unrefd {
		return
	}
	h.unrefd = true
	if h.active {
		h.loop.refs.quietHooks++
	}
}

// HasRef reports whether the hook keeps the loop alive while active.
func (h *Hook) HasRef() bool { return !h.unrefd }

// Ref makes the process keep the loop alive until it exits (the default).
func (p *Process) Ref() {
	if !p.unrefd {
		return
	}
	p.unrefd = false
	if !p.exited {
		p.loop.refs.quietProcs--
	}
}

// Unref makes the process stop keeping the loop alive; its exit and its
// pipes' events still arrive (its pipes are transports with references
// of their own, as libuv's).
func (p *Process) Unref() {
	if p.unrefd {
		return
	}
	p.unrefd = true
	if !p.exited {
		p.loop.refs.quietProcs++
	}
}

// HasRef reports whether the process keeps the loop alive until it exits.
func (p *Process) HasRef() bool { return !p.unrefd }

// processStarted and exitedRefs keep the list of running processes.
func (l *Loop) processStarted(p *Process) {
	r := &l.refs
	r.procs++
	p.liveIdx = len(r.live)
	r.live = append(r.live, p)
}

func (p *Process) exitedRefs() {
	r := &p.loop.refs
	r.procs--
	if p.unrefd {
		r.quietProcs--
	}
	last := len(r.live) - 1
	if p.liveIdx <= last && r.live[p.liveIdx] == p {
		r.live[p.liveIdx] = r.live[last]
		r.live[p.liveIdx].liveIdx = p.liveIdx
		r.live[last] = nil
		r.live = r.live[:last]
	}
}

// Ref makes the transport keep the loop alive until its ConnectionLost
// (the default).
func (t *Transport) Ref() { t.loop.setQuiet(int(t.fd), t, false) }

// Unref makes the transport stop keeping the loop alive; it still reads,
// writes and delivers its events. The flag is kept with the transport's
// fd registration (no field in the Transport: its size is measured).
func (t *Transport) Unref() { t.loop.setQuiet(int(t.fd), t, true) }

// HasRef reports whether the transport keeps the loop alive (true once
// it is closed: there is nothing left to keep).
func (t *Transport) HasRef() bool { return !t.loop.isQuiet(int(t.fd), t) }

// Ref makes the server keep the loop alive until Close (the default).
func (s *Server) Ref() {
	s.unrefd = false
	for _, ls := range s.sockets {
		s.loop.setQuiet(ls.fd, ls, false)
	}
}

// Unref makes the server stop keeping the loop alive; it still accepts.
// Its connections keep their own references.
func (s *Server) Unref() {
	s.unrefd = true
	for _, ls := range s.sockets {
		s.loop.setQuiet(ls.fd, ls, true)
	}
}

// HasRef reports whether the server keeps the loop alive while serving.
func (s *Server) HasRef() bool { return !s.unrefd }

// setQuiet marks fd, owned by o, as keeping the loop alive or not.
func (l *Loop) setQuiet(fd int, o ioOwner, quiet bool) {
	w := l.fds.get(int32(fd))
	if w == nil || w.owner != o || w.quiet == quiet {
		return
	}
	w.quiet = quiet
	if quiet {
		l.refs.quietFDs++
	} else {
		l.refs.quietFDs--
	}
}

func (l *Loop) isQuiet(fd int, o ioOwner) bool {
	w := l.fds.get(int32(fd))
	return w != nil && w.owner == o && w.quiet
}

// RefSignal makes sig's handler keep the loop alive (the default);
// EINVAL if sig has no handler.
func (l *Loop) RefSignal(sig int) error { return l.refSignal(sig, false) }

// UnrefSignal makes sig's handler stop keeping the loop alive; it still
// runs on each delivery. EINVAL if sig has no handler. A new handler for
// sig (AddSignalHandler) is referenced again.
func (l *Loop) UnrefSignal(sig int) error { return l.refSignal(sig, true) }

// SignalHasRef reports whether sig's handler keeps the loop alive; EINVAL
// if sig has no handler.
func (l *Loop) SignalHasRef(sig int) (bool, error) {
	h := l.signals.handlers[sig]
	if h == nil {
		return false, EINVAL
	}
	return !h.unrefd, nil
}

func (l *Loop) refSignal(sig int, quiet bool) error {
	h := l.signals.handlers[sig]
	if h == nil {
		return EINVAL
	}
	if h.unrefd != quiet {
		h.unrefd = quiet
		if quiet {
			l.refs.quietSignals++
		} else {
			l.refs.quietSignals--
		}
	}
	return nil
}

// Alive reports whether the loop has anything referenced left to do
// (the list at the top of this file): what Run(RunDefault) runs until.
// Called on the loop's thread.
func (l *Loop) Alive() bool {
	if l.closed.Load() {
		return false
	}
	// The pools' counts first, then Posted: a job's outcome moves from
	// the one to the other (postOutcome), so read in that order it is seen.
	for _, e := range [...]*executor{l.executor, l.resolver, l.fsPool} {
		if e != nil && e.pending.Load() > 0 {
			return true
		}
	}
	if hj, ok := l.postSource.(HostJobs); ok && hj.Outstanding() {
		return true
	}
	if l.ready.len() > 0 || l.hostPending || l.view().Posted.Load() > 0 {
		return true
	}
	if l.postSource != nil && l.postSource.Pending() {
		return true
	}
	r := &l.refs
	n := l.nWatched - r.quietFDs
	n += len(l.signals.handlers) - r.quietSignals
	n += l.hooks.n - r.quietHooks
	n += r.procs - r.quietProcs
	n += len(l.fsw.all) - l.fsw.quiet
	n += l.timers.len() - l.timerCancelled + l.hostTimers.Len() - r.quietTimers
	if l.timerSource != nil {
		if rs, ok := l.timerSource.(ReferencedTimers); ok {
			n += rs.Referenced()
		} else {
			n += l.timerSource.Live()
		}
	}
	if n > len(r.quietHandles) {
		return true // no pruning can bring it to 0
	}
	if len(r.quietHandles) > 0 {
		r.pruneHandles()
		n -= len(r.quietHandles)
	}
	if n > 0 {
		return true
	}
	for _, s := range l.sources {
		if s.Alive() > 0 {
			return true
		}
	}
	return false
}

// ReferencedTimers is what a TimerSource whose timers can be unreferenced
// adds: how many of its live timers keep the loop alive (without it, all
// of Live do).
type ReferencedTimers interface {
	Referenced() int
}

// RunMode says how long Run runs; the values are the C API's LL_RUN_*.
type RunMode int

const (
	// RunModeOnce: one iteration, whose poll blocks until something is due.
	RunModeOnce RunMode = 0
	// RunModeNoWait: one iteration whose poll does not block.
	RunModeNoWait RunMode = 1
	// RunModeDefault: iterations until nothing referenced is left (Alive),
	// or until Stop.
	RunModeDefault RunMode = 2
)

// Run runs the loop as libuv's uv_run: in RunModeDefault until nothing
// keeps it alive (Alive) or Stop is called; in RunModeOnce and
// RunModeNoWait one iteration. As uv_run, a loop that is not alive runs
// no iteration at all, whatever the mode (RunForever and RunOnce are for a
// loop that should run regardless). It reports whether the loop is still
// alive when it returns: in RunModeDefault, true only when Stop ended it
// with referenced work left.
func (l *Loop) Run(mode RunMode) (alive bool, err error) {
	if mode < RunModeOnce || mode > RunModeDefault {
		return false, EINVAL
	}
	if err := l.enterRun(); err != nil {
		return false, err
	}
	defer l.leaveRun()
	if !l.Alive() {
		return false, nil
	}
	if mode == RunModeNoWait {
		err := l.run(true, true)
		return l.Alive(), err
	}
	l.startRunClock()
	defer l.stopRunClock()
	if mode == RunModeOnce {
		err := l.run(false, true)
		return l.Alive(), err
	}
	defer l.allowChain()()
	// One iteration per run call: RunForever's loop is left as it is (no
	// check per iteration there), and Alive is asked between iterations.
	for {
		if err := l.run(false, true); err != nil {
			return l.Alive(), err
		}
		if l.stopping {
			return l.Alive(), nil
		}
		if !l.Alive() {
			return false, nil
		}
	}
}
