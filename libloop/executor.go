package libloop

import (
	"runtime"
	"sync"
)

// WorkFunc runs on a worker thread and returns a value, or a non-zero error
// code that fails the future.
type WorkFunc func() (value uintptr, code int)

// executor is the loop's default thread pool: a FIFO of jobs served by at
// most max worker goroutines, started on demand. Results travel back to the
// loop thread through the thread-safe post queue.
type executor struct {
	mu       sync.Mutex
	cond     *sync.Cond
	jobs     []execJob
	workers  int
	idle     int
	max      int
	shutdown bool
	running  sync.WaitGroup
	// inflight holds the futures whose outcome is not delivered yet, each
	// with the reference its job (or shutdown) took; Close drops those
	// references, as a delivery posted to a closed loop never runs.
	inflight map[*Future]struct{}
}

type execJob struct {
	fn  WorkFunc
	fut *Future
}

// DefaultExecutorWorkers is asyncio's default: min(32, ncpu+4).
func DefaultExecutorWorkers() int { return min(32, runtime.NumCPU()+4) }

// MaxExecutorWorkers bounds SetExecutorWorkers.
const MaxExecutorWorkers = 1024

func (l *Loop) exec() *executor {
	if l.executor == nil {
		e := &executor{max: DefaultExecutorWorkers()}
		e.cond = sync.NewCond(&e.mu)
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
	if l.closed {
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
	if l.closed {
		return nil, ECLOSED
	}
	e := l.exec()
	fut, _ := l.NewFuture()
	fut.Retain() // held by the job until its outcome is delivered
	e.mu.Lock()
	if e.shutdown {
		e.mu.Unlock()
		fut.refs = 0
		return nil, ESTATE
	}
	e.jobs = append(e.jobs, execJob{fn: fn, fut: fut})
	e.track(fut)
	if e.idle == 0 && e.workers < e.max {
		e.workers++
		e.running.Add(1)
		go e.work(l)
	} else {
		e.cond.Signal()
	}
	e.mu.Unlock()
	return fut, nil
}

func (e *executor) work(l *Loop) {
	defer e.running.Done()
	e.mu.Lock()
	for {
		for len(e.jobs) == 0 && !e.shutdown && e.workers <= e.max {
			e.idle++
			e.cond.Wait()
			e.idle--
		}
		if len(e.jobs) == 0 || e.workers > e.max {
			e.workers--
			e.mu.Unlock()
			return
		}
		j := e.jobs[0]
		e.jobs[0] = execJob{}
		e.jobs = e.jobs[1:]
		e.mu.Unlock()
		v, code := runJob(j.fn)
		fut := j.fut
		// If the loop is closed the result is dropped: nobody can read it.
		l.post(postedCall{gofn: func() {
			e.untrack(fut)
			if !fut.Done() {
				if code != 0 {
					// Unchecked: a job may fail with any non-zero code, ECANCELLED
					// included (SetException refuses that one and would leave the
					// future pending forever).
					fut.setException(code, "executor job failed", 0, nil)
				} else {
					fut.SetResult(v, nil)
				}
			}
			fut.Release()
		}})
		e.mu.Lock()
	}
}

// runJob calls fn, turning a panic into an error code.
func runJob(fn WorkFunc) (v uintptr, code int) {
	defer func() {
		if r := recover(); r != nil {
			v, code = 0, int(EINVAL)
		}
	}()
	return fn()
}

// ShutdownDefaultExecutor stops accepting jobs and returns a future that
// finishes once every queued and running job has completed.
func (l *Loop) ShutdownDefaultExecutor() (*Future, error) {
	if l.closed {
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
	fut.Retain()
	e.mu.Lock()
	e.track(fut)
	e.mu.Unlock()
	go func() {
		e.running.Wait()
		l.post(postedCall{gofn: func() {
			e.untrack(fut)
			fut.SetResult(0, nil)
			fut.Release()
		}})
	}()
	return fut, nil
}

// stop marks the executor shut down and wakes idle workers so they exit
// once the queue is empty.
func (e *executor) stop() {
	e.mu.Lock()
	e.shutdown = true
	e.cond.Broadcast()
	e.mu.Unlock()
}

// track records fut as awaiting delivery; the caller holds e.mu.
func (e *executor) track(fut *Future) {
	if e.inflight == nil {
		e.inflight = make(map[*Future]struct{})
	}
	e.inflight[fut] = struct{}{}
}

// untrack is called on the loop thread when fut's outcome is delivered.
func (e *executor) untrack(fut *Future) {
	e.mu.Lock()
	delete(e.inflight, fut)
	e.mu.Unlock()
}

// dropInflight releases the references of undelivered outcomes. Close calls
// it once no delivery can run any more (the post queue is closed and the
// ready queue dropped); workers still running never touch the futures.
func (e *executor) dropInflight() {
	e.mu.Lock()
	futs := e.inflight
	e.inflight = nil
	e.mu.Unlock()
	for f := range futs {
		f.Release()
	}
}
