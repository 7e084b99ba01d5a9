// SPDX-License-Identifier: MIT

package libloop

// RunUntilComplete runs the loop until f is done, as asyncio's
// run_until_complete: a done callback stops the loop, so the iteration in
// which f completes finishes first. ESTOPPED if the loop stopped before f
// was done.
func (l *Loop) RunUntilComplete(f *Future) error { return l.runUntil(f, nil) }

// runUntil is RunUntilComplete; arm, if not nil, is called once the run
// owns the loop and returns what to call when it ends
// (RunUntilCompleteContext's cancel on a done context).
func (l *Loop) runUntil(f *Future, arm func() (stop func())) error {
	if f == nil || f.loop != l {
		return EINVAL
	}
	if err := l.enterRun(); err != nil {
		return err
	}
	token := f.AddDoneCallback(func(*Future) { l.stopping = true })
	defer l.leaveRun()
	if arm != nil {
		defer arm()()
	}
	l.startRunClock()
	defer l.stopRunClock()
	defer f.RemoveDoneCallbackToken(token)
	defer l.allowChain()()
	defer l.allowGate()()
	if err := l.run(false, false); err != nil {
		return err
	}
	if !f.Done() {
		return ESTOPPED
	}
	return nil
}

// CancelAllTasks cancels every pending task and runs the loop until they
// are all done, as asyncio.run does before closing. A task that ends with
// an exception other than cancellation is reported to the exception handler.
func (l *Loop) CancelAllTasks() {
	tasks := l.AllTasks()
	if len(tasks) == 0 {
		return
	}
	futs := make([]*Future, len(tasks))
	for i, t := range tasks {
		t.Cancel("")
		futs[i] = &t.Future
	}
	g, err := l.Gather(futs, true)
	if err != nil {
		return
	}
	l.RunUntilComplete(g)
	g.Release()
	for _, t := range tasks {
		if t.state == Finished && t.excCode != 0 {
			t.retrieved = true
			l.CallExceptionHandler(&ErrorContext{
				Message: "unhandled exception during shutdown: " + t.excMsg,
				Code:    t.excCode, Future: &t.Future,
			})
		}
	}
}
