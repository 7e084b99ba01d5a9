// SPDX-License-Identifier: MIT

package libloop

// Name lookups run on a pool of their own, never on the loop thread and
// never on the default executor: a slow or unreachable DNS server then
// holds at most ResolverWorkers threads, and run_in_executor work queued
// behind lookups is not starved. The pool is the executor's machinery (a
// FIFO, workers started on demand, outcomes posted back as records) with
// its own bound.

// ResolverWorkers bounds the lookups a loop runs at once; more wait in
// FIFO order. getaddrinfo blocks a thread for the lookup's whole time, so
// this is also the most threads lookups hold.
const ResolverWorkers = 4

func (l *Loop) names() *executor {
	if l.resolver == nil {
		e := &executor{max: ResolverWorkers}
		e.park.init(&e.mu, false)
		l.resolver = e
	}
	return l.resolver
}

// RunInResolver runs fn, a name lookup, on the loop's resolver pool and
// returns a future resolved with its outcome on the loop thread, as
// RunInExecutor does.
func (l *Loop) RunInResolver(fn WorkFunc) (*Future, error) {
	if fn == nil {
		return nil, EINVAL
	}
	if l.closed.Load() {
		return nil, ECLOSED
	}
	return l.submitTo(l.names(), execJob{fn: fn})
}
