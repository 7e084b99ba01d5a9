// SPDX-License-Identifier: MIT

package libloop

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libloop/libloop/internal/timers"
)

// Loop is an asyncio-style event loop: a ready queue, a timer heap and a
// selector, advanced by RunOnce. Except where a method says otherwise, it is
// used from one thread at a time.
type Loop struct {
	ready          readyQueue
	batches        hostBatches // host batches whose marks are in ready
	iter           uint64      // iterations run, for Stats
	yieldWork      uint64      // work since yieldIfLong's last look at the clock (yield.go)
	lastYield      int64       // loop time of the last yield to the Go scheduler
	yields         uint64      // yields to the Go scheduler (tests read it)
	postSource     PostSource  // a host's own cross-thread queue, if any
	timers         timerQueue
	hostTimers     timers.Queue[hostCall] // timers with no handle (CallLaterHost)
	timerSource    TimerSource            // a host's own timers (TimerHost), or nil
	sourceQueued   bool                   // timerSource may hold timers (timersource.go)
	timerCancelled int
	seq            uint64
	dueFloor       dueFloor // no timer due before it (hosttimers.go)
	freeHandles    []*Handle

	sel      selector
	fds      fdTable
	events   []ioEvent
	nWatched int // fds with a reader or writer (the wakeup fd not counted)
	// pollFirst: the selector tries a non-blocking poll before blocking
	// (epoll), so an iteration may make that try before choosing a timeout.
	pollFirst bool
	plan      pollPlan // when to try first, when to skip a poll (pollplan.go)
	io        ioState
	signals   signalState
	exits     map[int]*Process // children whose exit the selector reports (kqueue)
	spawn     spawnState       // how Spawn starts children, and its /dev/null

	// running and closed are atomic so that any thread may read them
	// (ll_loop_is_running, ll_loop_is_closed, and capi's check that refuses
	// calls from a thread other than the running one). Only the thread
	// using the loop writes them.
	running  atomic.Bool
	stopping bool
	closed   atomic.Bool
	ownerTid int // OS thread running the loop, checked in debug mode

	posted      postQueue
	wakePending atomic.Uint32

	host         Host       // runs host calls; nil: a Go-only loop (host.go)
	chain        chainState // iterations run in a host batch (chain.go)
	gate         gateState  // I/O iterations run after a host delivery (readgate.go)
	dispatchBuf  []HostCall
	batchHandles []*Handle

	tasks       map[*Task]struct{}
	currentTask *Task
	live        *Future // every future not yet disposed, for Close's sweep
	nlive       int     // how many there are, and their peak (memreturn.go)
	peakLive    int
	memShrunk   bool
	// WaitFor futures dropped while their target is pending: the tokens
	// of their dead callbacks on it (waitfor.go).
	droppedWaits map[*Future]map[uint64]struct{}
	executor     *executor
	resolver     *executor // name lookups' own pool (resolver.go)
	fsPool       *executor // file calls' own pool (fs.go)
	fsThreads    FSThreads // the host's threads that run them instead, or nil (fs_threads.go)

	hooks       hookState  // prepare, check and idle hooks (hook.go)
	fsw         fsWatchSet // file-system watchers (fswatch.go)
	hostQueue   HostQueue  // the host's own ready queue, or nil (host.go)
	hostPending bool       // it has work (HostReady)

	counters loopCounters // Stats' totals (stats.go)

	refs    refState       // references (refs.go)
	walk    walkState      // what Walk lists beside the core's own objects (walk.go)
	sources []ObjectSource // objects of kinds the core does not keep (walk.go)

	debug        bool
	slowDuration time.Duration
	excHandler   func(*ErrorContext)
	closeSig     closeSignal // wakes goroutines waiting on the loop's futures (context.go)

	// Tag is the host's id for this loop, passed to host callbacks.
	Tag uint64
	// Data is free for the embedding host.
	Data any
}

// New creates a loop with its own selector and wakeup fd.
func New() (*Loop, error) {
	sel, err := newSelector()
	if err != nil {
		return nil, err
	}
	l := &Loop{
		sel:          sel,
		pollFirst:    sel.triesFirst(),
		slowDuration: 100 * time.Millisecond,
	}
	l.view().Version = ChainViewVersion
	return l, nil
}

// BackendFD is the loop's selector fd (epoll on Linux, kqueue elsewhere),
// libuv's uv_backend_fd: poll(2) reports it readable, consuming nothing,
// while any fd the loop watches is ready or a wakeup is pending. A host
// that embeds the loop in another, or runs iterations of its own between
// the loop's, polls it to learn that the loop has I/O to run. The fd stays
// the loop's: the caller must not close it, read it or add fds to it.
func (l *Loop) BackendFD() (int, error) {
	if l.closed.Load() {
		return -1, ECLOSED
	}
	return l.sel.fd(), nil
}

// IsRunning reports whether a Run* call is in progress. Safe from any thread.
func (l *Loop) IsRunning() bool { return l.running.Load() }

// IsClosed reports whether Close has been called. Safe from any thread.
func (l *Loop) IsClosed() bool { return l.closed.Load() }

// Stop makes RunForever return after the current iteration; called while the
// loop is not running, it makes the next RunForever run one iteration.
func (l *Loop) Stop() error {
	if l.closed.Load() {
		return ECLOSED
	}
	l.stopping = true
	l.changed()
	return nil
}

// Close releases the selector and drops every pending callback. It fails with
// ERUNNING while the loop runs and does nothing the second time.
func (l *Loop) Close() error {
	if l.running.Load() {
		return ERUNNING
	}
	if l.closed.Load() {
		return nil
	}
	l.closed.Store(true)
	l.closeSig.fire()
	// Posts end first: dropping what follows releases futures, whose
	// disposal may run host code (the exception handler, for an exception
	// nobody retrieved); a post made there must be refused (ECLOSED, as
	// every other scheduling call now), not queued for no iteration.
	l.closePosted()
	l.dropFSWatchers() // before the fd sweep: their fds and wds go first
	for l.ready.len() > 0 {
		if h := l.ready.pop().h; h != nil {
			l.unref(h)
		}
	}
	l.dropBatches()
	l.timers.removeIf(func(h *Handle) bool {
		h.inHeap = false
		l.unref(h)
		return true
	})
	l.timers = timerQueue{}
	l.hostTimers = timers.Queue[hostCall]{}
	if l.timerSource != nil {
		l.timerSource.Drop()
		l.sourceQueued = false
	}
	l.fds.each(l.dropWatch)
	l.dropHooks()
	for t := range l.tasks {
		delete(l.tasks, t) // their holds go in dropHolds: they will never run again
	}
	for _, e := range [...]*executor{l.executor, l.resolver} {
		if e != nil {
			e.stop()         // as asyncio: shutdown(wait=False)
			e.dropInflight() // their deliveries will never run
		}
	}
	if l.fsPool != nil {
		l.fsPool.closeFiles() // no worker uses a caller's buffer after Close
	}
	l.reapExitWatches()
	l.spawn.close()
	l.dropHolds()
	l.droppedWaits = nil
	l.freeHandles = nil
	l.maybeReturnMemory()
	return l.sel.close()
}

// SetDebug turns debug mode on or off: slow callbacks are reported and
// calls from a thread other than the running one fail with EWRONGTHREAD.
func (l *Loop) SetDebug(on bool) {
	if on && !l.debug && l.running.Load() {
		l.ownerTid = threadID() // enterRun records it only in debug mode
	}
	l.debug = on
	l.changed() // a chain (chain.go) runs no debug-mode iteration
}

// Debug reports whether debug mode is on.
func (l *Loop) Debug() bool { return l.debug }

// SetSlowCallbackDuration sets the debug-mode threshold for slow callbacks.
func (l *Loop) SetSlowCallbackDuration(d time.Duration) { l.slowDuration = d }

// CheckThread returns EWRONGTHREAD in debug mode when the loop is running on
// another OS thread than the caller's, nil otherwise.
func (l *Loop) CheckThread() error {
	if l.debug && l.running.Load() && threadID() != l.ownerTid {
		return EWRONGTHREAD
	}
	return nil
}

func (l *Loop) enterRun() error {
	if l.closed.Load() {
		return ECLOSED
	}
	// A CAS: two threads racing to run one loop (a host error) cannot
	// both get in.
	if !l.running.CompareAndSwap(false, true) {
		return ERUNNING
	}
	runtime.LockOSThread()
	if l.debug {
		l.ownerTid = threadID()
	}
	return nil
}

func (l *Loop) leaveRun() {
	l.stopping = false
	l.chain.polled = -1 // the host may change anything before the next run
	l.running.Store(false)
	runtime.UnlockOSThread()
}

// RunForever runs iterations until Stop.
func (l *Loop) RunForever() error {
	if err := l.enterRun(); err != nil {
		return err
	}
	defer l.leaveRun()
	l.startRunClock()
	defer l.stopRunClock()
	defer l.allowChain()()
	defer l.allowGate()()
	return l.run(false, false)
}

// RunOnce runs one iteration; with nowait the poll does not block.
func (l *Loop) RunOnce(nowait bool) error {
	if err := l.enterRun(); err != nil {
		return err
	}
	defer l.leaveRun()
	if nowait {
		// Not timed for Stats.Running: a clock read pair would double
		// the cost of an iteration that cannot block.
		return l.run(true, true)
	}
	l.startRunClock()
	err := l.run(false, true)
	l.stopRunClock() // not deferred: that would cost the nowait path too
	return err
}

// postQueue holds callbacks posted from other threads until the loop takes
// them; a mutex keeps it simple and the loop takes the whole batch at once.
// How many wait is the loop's ChainView's Posted (chain.go), where a chain
// runner reads it.
type postQueue struct {
	mu     sync.Mutex
	items  []postedCall
	spare  []postedCall
	closed bool
}

type postedCall struct {
	gofn func()
	call HostCall
	// done, when set, is an executor future whose outcome (value, code) is
	// delivered by a ready callback: a record, so a job needs no closure.
	done  *Future
	value uintptr
	code  int
}

func (l *Loop) closePosted() {
	q := &l.posted
	q.mu.Lock()
	q.closed = true
	q.items = nil
	l.view().Posted.Store(0)
	q.mu.Unlock()
}
