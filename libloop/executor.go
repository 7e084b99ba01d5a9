// SPDX-License-Identifier: MIT

package libloop

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// WorkFunc runs on a worker thread and returns a value, or a non-zero error
// code that fails the future.
type WorkFunc func() (value uintptr, code int)

// HostWork calls a host work function (fn, arg) on a worker thread; a host
// passes one static HostWork for all its jobs, so a job costs no closure.
type HostWork func(fn, arg uintptr) (value uintptr, code int)

// executor is the loop's default thread pool: a FIFO of jobs served by at
// most max worker goroutines, started on demand. Outcomes come back to the
// loop thread through the post queue as plain records (no closure per job).
type executor struct {
	mu      sync.Mutex
	park    workerPark // where idle workers wait
	jobs    []execJob
	head    int // jobs[head:] are queued
	workers int
	idle    int
	waking  int // workers signalled that have not woken yet
	// wakeEach: every submit wakes an idle worker not already being woken
	// (the file pool, as libuv's uv_cond_signal per request); otherwise one
	// wake-up is in flight at a time and woken workers wake the next.
	wakeEach bool
	max      int
	shutdown bool
	running  sync.WaitGroup
	// inflight holds, on the loop thread only, the futures whose outcome is
	// not delivered yet, each with the reference its job took; Close drops
	// those references, as a delivery posted to a closed loop never runs.
	inflight []*execFlight
	spare    []*execFlight // records to reuse: a job allocates none
	// pending counts jobs queued or running whose outcome is not posted
	// yet: they keep the loop alive (refs.go). Taken off by the post,
	// under its lock (postOutcome), so a job is always counted here or
	// waiting in the post queue, never both once the loop has taken it.
	pending atomic.Int64
	// hostJobs holds the file jobs queued on a host's threads (FSThreads),
	// by id - 1, until a host thread takes one (RunFSJob); hostFree, the
	// slots to reuse (mu).
	hostJobs []execJob
	hostFree []int
}

// execFlight is an executor future's role while its job is in flight: its
// index in the executor's inflight list and, once a worker posted it, the
// job's outcome, kept until the delivery callback runs.
type execFlight struct {
	fut   *Future
	owner *executor // the pool that tracks it: the default executor, the resolver or the file pool
	value uintptr
	code  int
	slot  int
	// withdrawable: the job may be withdrawn until a worker starts it (file
	// calls, libuv's uv_cancel); start then moves once, from flightQueued
	// to flightStarted (the worker) or flightWithdrawn (Cancel, Close).
	withdrawable bool
	start        atomic.Int32
	msg          string // the failure's message
	// hostToken: not 0 for a call the host makes itself (StartHostFS),
	// whose start state is the host's: host.WithdrawFS(hostToken).
	hostToken uint64
	host      FSThreads
}

// A withdrawable job's start states.
const (
	flightQueued int32 = iota
	flightStarted
	flightWithdrawn
)

// cancel: a future cancelled in flight ignores the outcome when it comes.
// A withdrawable job is cancelled only while no worker has started it: a
// started file call completes, since it may still be using the caller's
// buffer (libuv's uv_cancel answers EBUSY then).
func (r *execFlight) cancel(f *Future, msg string) bool {
	if r.hostToken != 0 {
		if !r.host.WithdrawFS(r.hostToken) {
			return false
		}
	} else if r.withdrawable && !r.start.CompareAndSwap(flightQueued, flightWithdrawn) {
		return false
	}
	return f.cancelSelf(msg)
}

func (r *execFlight) disposed(*Future) {}

type execJob struct {
	fn       WorkFunc
	call     HostWork
	cfn, arg uintptr
	fut      *Future     // resolved with the outcome, or
	after    HostCall    // posted back when there is no future (QueueWorkHost)
	flight   *execFlight // a withdrawable job's record, checked before it runs
	io       fileIO      // a host's read or write, described by value (fs_host.go)
}

// empty: no job (a free slot of the host table); every job has one of fn,
// call and io.
func (j *execJob) empty() bool { return j.fn == nil && j.call == nil && j.io.op == fileNone }

// DefaultExecutorWorkers is asyncio's default: min(32, ncpu+4).
func DefaultExecutorWorkers() int { return min(32, runtime.NumCPU()+4) }

// MaxExecutorWorkers bounds SetExecutorWorkers.
const MaxExecutorWorkers = 1024

func (l *Loop) exec() *executor {
	if l.executor == nil {
		e := &executor{max: DefaultExecutorWorkers()}
		e.park.init(&e.mu, false)
		l.executor = e
	}
	return l.executor
}

// SetExecutorWorkers sets how many workers the default executor may run
// (1..MaxExecutorWorkers).
func (l *Loop) SetExecutorWorkers(n int) error {
	if n < 1 || n > MaxExecutorWorkers {
		return EINVAL
	}
	if l.closed.Load() {
		return ECLOSED
	}
	e := l.exec()
	e.mu.Lock()
	e.max = n
	e.mu.Unlock()
	return nil
}

// RunInExecutor runs fn on a worker and returns a future resolved with its
// outcome on the loop thread. A future cancelled meanwhile ignores the
// outcome. ESTATE after ShutdownDefaultExecutor.
func (l *Loop) RunInExecutor(fn WorkFunc) (*Future, error) {
	if fn == nil {
		return nil, EINVAL
	}
	return l.submit(execJob{fn: fn})
}

// RunInExecutorHost is RunInExecutor for a host function: call(fn, arg)
// runs on the worker.
func (l *Loop) RunInExecutorHost(call HostWork, fn, arg uintptr) (*Future, error) {
	if call == nil || fn == 0 {
		return nil, EINVAL
	}
	return l.submit(execJob{call: call, cfn: fn, arg: arg})
}

// QueueWorkHost is libuv's uv_queue_work: call(fn, arg) runs on a
// worker, then after is called on the loop thread (dropped if the loop is
// closed first). No future: the host keeps the outcome in its own memory.
func (l *Loop) QueueWorkHost(call HostWork, fn, arg uintptr, after HostCall) error {
	if call == nil || fn == 0 || after.Fn == 0 {
		return EINVAL
	}
	if l.closed.Load() {
		return ECLOSED
	}
	return l.exec().enqueue(l, execJob{call: call, cfn: fn, arg: arg, after: after})
}

func (l *Loop) submit(j execJob) (*Future, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	return l.submitTo(l.exec(), j)
}

// submitTo queues j on e with a future for its outcome.
func (l *Loop) submitTo(e *executor, j execJob) (*Future, error) {
	fut, _ := l.NewFuture()
	j.fut = fut
	if err := e.enqueue(l, j); err != nil {
		return nil, err
	}
	fut.hold() // by the job until its outcome is delivered
	e.track(fut)
	return fut, nil
}

// enqueue appends a job and makes sure a worker will take it.
func (e *executor) enqueue(l *Loop, j execJob) error {
	e.mu.Lock()
	if e.shutdown {
		e.mu.Unlock()
		return ESTATE
	}
	e.jobs = append(e.jobs, j)
	e.pending.Add(1)
	wake := false
	if e.idle == 0 && e.workers < e.max {
		e.workers++
		e.running.Add(1)
		go e.work(l)
	} else {
		wake = e.wakeOne()
	}
	e.mu.Unlock()
	// Woken after the unlock: a worker woken under the lock would find it
	// held and sleep again on the mutex (a second wake-up per job).
	if wake {
		e.park.signal()
	}
	return nil
}

// wakeOne decides, with mu held, whether to wake an idle worker. Without
// wakeEach only when no wake-up is already on its way: the woken worker
// wakes the next if jobs are still queued once it has taken one, so a
// burst of submissions costs the submitting (loop) thread one wake-up,
// and the others are made by workers, in parallel with the work (the Go
// scheduler's spinning-M rule); many trivial jobs run fastest so. With
// wakeEach, while an idle worker is not yet being woken: a few slow jobs
// in flight (file reads) then start at once instead of one wake-up after
// another (measured: 4 reads in flight ran at 0.63x libuv's rate with the
// chained rule). The caller signals after unlocking.
func (e *executor) wakeOne() bool {
	if e.idle <= e.waking || (e.waking > 0 && !e.wakeEach) {
		return false
	}
	e.waking++
	e.park.prepareSignal()
	return true
}

func (e *executor) work(l *Loop) {
	defer e.running.Done()
	e.mu.Lock()
	for {
		for e.head == len(e.jobs) && !e.shutdown && e.workers <= e.max {
			e.idle++
			e.park.wait()
			e.idle--
			if e.waking > 0 {
				e.waking-- // this wake-up (or a spurious one) has come
			}
		}
		if e.head == len(e.jobs) || e.workers > e.max {
			e.workers--
			// Leaving above a lowered bound, this worker may be the one
			// woken for the queued jobs: the wake-up passes on, or the
			// jobs would wait with a worker idle (one wake-up in flight).
			wake := e.head < len(e.jobs) && e.wakeOne()
			e.mu.Unlock()
			if wake {
				e.park.signal()
			}
			return
		}
		j := e.jobs[e.head]
		e.jobs[e.head] = execJob{}
		e.head++
		if e.head == len(e.jobs) {
			e.jobs, e.head = e.jobs[:0], 0 // drained: reuse the array
		}
		wake := e.head < len(e.jobs) && e.wakeOne()
		e.mu.Unlock()
		if wake {
			e.park.signal()
		}
		e.runTaken(l, &j)
		e.mu.Lock()
	}
}

// runTaken runs a job a worker took from the queue (or a host thread, from
// the host table) and posts its outcome. A withdrawn one does not run.
func (e *executor) runTaken(l *Loop, j *execJob) {
	var v uintptr
	var code int
	if j.flight != nil && !j.flight.start.CompareAndSwap(flightQueued, flightStarted) {
		code = int(ECANCELLED) // withdrawn: its future is already done
	} else {
		v, code = runJob(j)
	}
	// If the loop is closed the outcome is dropped: nobody can read it.
	switch {
	case j.fut != nil:
		l.postOutcome(postedCall{done: j.fut, value: v, code: code}, &e.pending)
	case j.io.op != fileNone:
		l.postOutcome(postedCall{call: j.io.outcome(j.after, v, code)}, &e.pending)
	default:
		l.postOutcome(postedCall{call: j.after}, &e.pending)
	}
}

// runJob calls the job's function, turning a panic into an error code.
func runJob(j *execJob) (v uintptr, code int) {
	defer func() {
		if r := recover(); r != nil {
			v, code = 0, int(EINVAL)
		}
	}()
	switch {
	case j.call != nil:
		return j.call(j.cfn, j.arg)
	case j.io.op != fileNone:
		return j.io.run()
	}
	return j.fn()
}

// stageOutcome keeps a job's outcome in its future's record until
// delivery (takePosted, on the loop thread).
func stageOutcome(f *Future, value uintptr, code int) {
	if r, ok := f.role.(*execFlight); ok {
		r.value, r.code = value, code
	}
}

// deliverNow resolves a file call's future as its outcome is taken from
// the post queue (takePosted, before the iteration's run phase), so its
// done callbacks run in that same iteration, as libuv runs a request's
// callback in the wake-up that brought it; other executor outcomes wait
// for a ready callback (asyncio's order). It reports whether it did.
func deliverNow(f *Future, value uintptr, code int) bool {
	r, ok := f.role.(*execFlight)
	if !ok || !r.withdrawable {
		return false
	}
	r.value, r.code = value, code
	execDelivered(f)
	return true
}

// execDelivered runs on the loop thread, as a ready callback, with a job's
// outcome staged in the future's record.
func execDelivered(f *Future) {
	r, ok := f.role.(*execFlight)
	if !ok {
		f.unhold()
		return
	}
	value, code := r.value, r.code
	r.owner.untrack(r)
	if !f.Done() {
		if code != 0 {
			// fail, not SetException: a job may fail with any non-zero
			// code, ECANCELLED included.
			msg := r.msg
			if msg == "" {
				msg = "executor job failed"
			}
			f.fail(code, msg, 0, nil)
		} else {
			f.SetResult(value, f.free) // a free set by SetFreeFunc
		}
	}
	f.unhold() // the job's hold
}

// ShutdownDefaultExecutor stops accepting jobs and returns a future that
// finishes once every queued and running job has completed.
func (l *Loop) ShutdownDefaultExecutor() (*Future, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	fut, _ := l.NewFuture()
	e := l.executor
	if e == nil {
		l.exec().stop() // never used: nothing to wait for, but refuse work from now on
		fut.SetResult(0, nil)
		return fut, nil
	}
	e.stop()
	fut.hold()
	e.track(fut)
	go func() {
		e.running.Wait()
		l.post(postedCall{done: fut})
	}()
	return fut, nil
}

// stop marks the executor shut down and wakes idle workers so they exit
// once the queue is empty.
func (e *executor) stop() {
	e.mu.Lock()
	e.shutdown = true
	e.park.broadcast()
	e.mu.Unlock()
}

// track records fut as awaiting delivery (loop thread).
func (e *executor) track(fut *Future) *execFlight {
	var r *execFlight
	if n := len(e.spare); n > 0 {
		r = e.spare[n-1]
		e.spare = e.spare[:n-1]
	} else {
		r = &execFlight{}
	}
	r.fut, r.owner, r.slot = fut, e, len(e.inflight)
	e.inflight = append(e.inflight, r)
	fut.role = r
	return r
}

// untrack removes r once its outcome is delivered (loop thread).
func (e *executor) untrack(r *execFlight) {
	last := len(e.inflight) - 1
	e.inflight[r.slot] = e.inflight[last]
	e.inflight[r.slot].slot = r.slot
	e.inflight[last] = nil
	e.inflight = e.inflight[:last]
	r.fut.role = nil
	r.fut, r.owner, r.value, r.code, r.slot = nil, nil, 0, 0, 0
	r.withdrawable, r.msg = false, ""
	r.hostToken, r.host = 0, nil
	r.start.Store(flightQueued)
	e.spare = append(e.spare, r)
}

// dropInflight releases the references of undelivered outcomes. Close calls
// it once no delivery can run any more (the post queue is closed and the
// ready queue dropped); workers still running never touch the futures.
func (e *executor) dropInflight() {
	rs := e.inflight
	e.inflight, e.spare = nil, nil
	for _, r := range rs {
		r.fut.role = nil
		r.fut.unhold()
	}
}
