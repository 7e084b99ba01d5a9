// SPDX-License-Identifier: MIT

package libloop

// A host whose file calls run on threads of its own (capi's C pool, which
// serves ll_fs_read_cb) runs the core's file calls there too: one FIFO,
// served by at most FSWorkers threads, whichever form a call took. Two
// pools under the one bound would let a loop run twice the bound's
// threads. The core keeps the policy (the bound, withdrawal, the future
// and its delivery); the host only lends the threads.

// FSThreads is a Host that runs the loop's file calls on its own threads.
type FSThreads interface {
	// QueueFS queues file job id behind the host's own calls, for a
	// thread of the host's, which runs it with Loop.RunFSJob(id). Called
	// on the loop's thread. false: not taken (the host has no thread to
	// run it); the core's own pool runs it then. The host must withdraw
	// the jobs it still holds, and wait for those running, before the
	// loop's Close returns (a started call may still use a buffer).
	QueueFS(id uint64) bool
	// WithdrawFS withdraws the host's own call token (StartHostFS) if no
	// thread has started it: true if it will not run. Loop's thread.
	WithdrawFS(token uint64) bool
}

// StartHostFS makes the future of a file call the host makes itself on
// its threads with no Go there (capi's reads and writes: the system call
// and the post in C); token names it to WithdrawFS, should the future be
// cancelled before a thread starts it. The call counts as pending (it
// keeps the loop alive) until FinishHostFS or DropHostFS. Loop's thread.
func (l *Loop) StartHostFS(token uint64, msg string) (*Future, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	if l.fsThreads == nil || token == 0 {
		return nil, EINVAL
	}
	e := l.files()
	fut, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	r := e.track(fut)
	r.withdrawable, r.msg, r.hostToken, r.host = true, msg, token, l.fsThreads
	e.pending.Add(1)
	fut.hold() // by the call until FinishHostFS
	return fut, nil
}

// FinishHostFS delivers the outcome of a StartHostFS call, on the loop
// thread once the host took it back from its threads: value, or the
// non-zero code the future fails with (ignored if the future was
// cancelled meanwhile).
func (l *Loop) FinishHostFS(f *Future, value uintptr, code int) {
	r, ok := f.role.(*execFlight)
	if !ok || r.hostToken == 0 {
		return
	}
	e := r.owner
	r.value, r.code = value, code
	execDelivered(f)
	e.pending.Add(-1)
}

// DropHostFS undoes StartHostFS for a call the host could not queue: the
// future is released with no outcome.
func (l *Loop) DropHostFS(f *Future) {
	r, ok := f.role.(*execFlight)
	if !ok || r.hostToken == 0 {
		return
	}
	e := r.owner
	e.untrack(r)
	e.pending.Add(-1)
	f.unhold()
	f.Release()
}

// queueFile queues a file job on the host's threads when the host lends
// them, else on the core's pool.
func (l *Loop) queueFile(j execJob) error {
	e := l.files()
	if l.fsThreads != nil {
		if taken, err := e.queueOnHost(l.fsThreads, j); taken || err != nil {
			return err
		}
	}
	return e.enqueue(l, j)
}

// queueOnHost keeps j in the host table and hands its id to the host:
// taken reports whether the host took it.
func (e *executor) queueOnHost(h FSThreads, j execJob) (taken bool, err error) {
	e.mu.Lock()
	if e.shutdown {
		e.mu.Unlock()
		return false, ESTATE
	}
	var i int
	if n := len(e.hostFree); n > 0 {
		i = e.hostFree[n-1]
		e.hostFree = e.hostFree[:n-1]
		e.hostJobs[i] = j
	} else {
		i = len(e.hostJobs)
		e.hostJobs = append(e.hostJobs, j)
	}
	e.pending.Add(1)
	e.mu.Unlock()
	// Outside mu: the host takes its own lock, and its threads take mu
	// in RunFSJob without it.
	if h.QueueFS(uint64(i) + 1) {
		return true, nil
	}
	e.mu.Lock()
	e.hostJobs[i] = execJob{}
	e.hostFree = append(e.hostFree, i)
	e.pending.Add(-1)
	e.mu.Unlock()
	return false, nil
}

// RunFSJob runs file job id (FSThreads.QueueFS) on the calling thread,
// one of the host's, and posts its outcome as the core's workers do. A job
// Close dropped meanwhile is not run.
func (l *Loop) RunFSJob(id uint64) {
	e := l.fsPool
	if e == nil || id == 0 {
		return
	}
	e.mu.Lock()
	i := int(id - 1)
	if i >= len(e.hostJobs) || e.hostJobs[i].empty() {
		e.mu.Unlock()
		return
	}
	j := e.hostJobs[i]
	e.hostJobs[i] = execJob{}
	e.hostFree = append(e.hostFree, i)
	e.mu.Unlock()
	e.runTaken(l, &j)
}

// dropHostJobs forgets the jobs the host has not started (Close: the host
// withdrew them first), as closeFiles drops the core's queued ones.
func (e *executor) dropHostJobs() {
	e.mu.Lock()
	n := 0
	for i := range e.hostJobs {
		if !e.hostJobs[i].empty() {
			e.hostJobs[i] = execJob{}
			n++
		}
	}
	e.hostJobs, e.hostFree = nil, nil
	e.pending.Add(-int64(n))
	e.mu.Unlock()
}
