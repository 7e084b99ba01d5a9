// SPDX-License-Identifier: MIT

package libloop

import "net/netip"

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

// syncLookup is a synchronous call's lookup of host: "" is every
// interface (both wildcards); an address or "localhost" needs no lookup;
// a name is looked up in place only while the loop is not running (the
// caller then blocks itself, not a loop: asyncio's run_until_complete of
// create_server), and is ENEEDASYNC while it runs.
func (l *Loop) syncLookup(host string) ([]netip.Addr, error) {
	if host == "" {
		return []netip.Addr{netip.IPv4Unspecified(), netip.IPv6Unspecified()}, nil
	}
	if ips, ok := parseNumeric(host); ok {
		return ips, nil
	}
	if l.IsRunning() {
		return nil, ENEEDASYNC
	}
	return lookupHostHook(host)
}

// lookupThen runs then(addrs, err) on the loop thread in a later callback,
// addrs[i] being hosts[i]'s addresses (nil for ""): at once (the next
// iteration) when every host is "", an address or "localhost"; else after
// the resolver pool looked the names up, all in one job.
func (l *Loop) lookupThen(hosts []string, then func([][]netip.Addr, error)) error {
	addrs := make([][]netip.Addr, len(hosts))
	names := false
	for i, h := range hosts {
		if h == "" {
			continue
		}
		if ips, ok := parseNumeric(h); ok {
			addrs[i] = ips
		} else {
			names = true
		}
	}
	if !names {
		_, err := l.CallSoon(func() { then(addrs, nil) })
		return err
	}
	var lookupErr error
	f, err := l.RunInResolver(func() (uintptr, int) {
		for i, h := range hosts {
			if h != "" && addrs[i] == nil && lookupErr == nil {
				addrs[i], lookupErr = lookupHostHook(h)
			}
		}
		return 0, 0
	})
	if err != nil {
		return err
	}
	f.AddDoneCallback(func(*Future) { then(addrs, lookupErr) })
	f.Release() // the job's and the callback's holds keep it until it has run
	return nil
}

// lookupHostHook is lookupHost; tests replace it to make a lookup slow or
// to see which goroutine makes it.
var lookupHostHook = lookupHost
