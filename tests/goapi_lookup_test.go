// SPDX-License-Identifier: MIT

package tests

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	ll "github.com/libloop/libloop/bindings/go"
)

// LookupHost(ctx, host): a typed, context-aware name lookup on the
// library's resolver pool, as the core's.

// lookupOnLoop calls LookupHost on the loop's thread.
func lookupOnLoop(t *testing.T, l *ll.Loop, ctx context.Context, host string) *ll.TypedFuture[[]netip.Addr] {
	t.Helper()
	var tf *ll.TypedFuture[[]netip.Addr]
	var err error
	onLoop(t, l, func() { tf, err = l.LookupHost(ctx, host) })
	if err != nil {
		t.Fatalf("LookupHost(%q): %v", host, err)
	}
	return tf
}

// Literals and "localhost" need no lookup; a name is resolved as Go's
// resolver resolves it (this machine's host name, from /etc/hosts); a
// name that does not resolve is a *net.DNSError matching ENONAME.
func TestGoAPILookupHost(t *testing.T) {
	l, _ := runningLoop(t)
	ctx := context.Background()
	base := ll.LiveTypedValues()
	cases := map[string][]netip.Addr{
		"127.0.0.1":  {netip.MustParseAddr("127.0.0.1")},
		"::1":        {netip.IPv6Loopback()},
		"fe80::1%lo": {netip.MustParseAddr("fe80::1")},
		"localhost":  {netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()},
	}
	for host, want := range cases {
		tf := lookupOnLoop(t, l, ctx, host)
		got, err := tf.Wait(ctx)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("LookupHost(%q) = %v, %v; want %v", host, got, err, want)
		}
		onLoop(t, l, func() { tf.Release() })
	}
	if name, err := os.Hostname(); err == nil {
		std, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
		if err != nil {
			t.Logf("Go's resolver cannot resolve the host name %q (%v): that check is left out", name, err)
		} else {
			tf := lookupOnLoop(t, l, ctx, name)
			got, err := tf.Wait(ctx)
			for i := range std {
				std[i] = std[i].Unmap()
			}
			slices.SortFunc(got, netip.Addr.Compare)
			slices.SortFunc(std, netip.Addr.Compare)
			if err != nil || !slices.Equal(got, slices.Compact(std)) {
				t.Errorf("LookupHost(%q) = %v, %v; Go's resolver says %v", name, got, err, std)
			}
			onLoop(t, l, func() { tf.Release() })
		}
	}
	tf := lookupOnLoop(t, l, ctx, "no-such-host.invalid")
	_, err := tf.Wait(ctx)
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound || de.Name != "no-such-host.invalid" || !errors.Is(err, ll.ENONAME) {
		t.Errorf("LookupHost of a name that does not resolve = %#v, want a *net.DNSError (not found) matching ENONAME", err)
	}
	onLoop(t, l, func() {
		tf.Release()
		//lint:ignore SA1012 a nil context is the bad input checked
		if _, err := l.LookupHost(nil, "localhost"); !errors.Is(err, ll.EINVAL) {
			t.Errorf("LookupHost(nil ctx) = %v, want EINVAL", err)
		}
	})
	liveCallbacksSettled(t, l, -1)
	checkNoTypedLeak(t, base)
}

// A context already done when the lookup starts ends it with the
// context's error, ahead of the resolver's answer (which comes from a
// worker thread after a getaddrinfo call: the context's cancel is only a
// post away, so it wins nearly always; the check allows a rare loss).
func TestGoAPILookupHostContext(t *testing.T) {
	l, _ := runningLoop(t)
	bg := context.Background()
	base := ll.LiveTypedValues()
	name := "no-such-host.invalid" // resolved or not, the context ends it
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, ecancel := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer ecancel()
	const runs = 20
	wins := 0
	for i := range runs {
		ctx, want := cancelled, context.Canceled
		if i%2 == 1 {
			ctx, want = expired, context.DeadlineExceeded
		}
		tf := lookupOnLoop(t, l, ctx, name)
		_, err := within(t, func() ([]netip.Addr, error) { return tf.Wait(bg) })
		switch {
		case errors.Is(err, want):
			wins++
		case !errors.Is(err, ll.ENONAME):
			t.Errorf("lookup %d under a done context = %v, want %v", i, err, want)
		}
		onLoop(t, l, func() { tf.Release() })
	}
	t.Logf("a done context ended %d of %d lookups first", wins, runs)
	if wins < runs*3/4 {
		t.Errorf("a done context ended only %d of %d lookups", wins, runs)
	}
	// A context that ends while its lookup waits in Wait: Wait returns
	// ctx.Err() too.
	wctx, wcancel := context.WithCancel(bg)
	wcancel()
	tf := lookupOnLoop(t, l, bg, "localhost")
	if _, err := tf.Wait(wctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a done context = %v", err)
	}
	onLoop(t, l, func() { tf.Release() })
	liveCallbacksSettled(t, l, -1)
	checkNoTypedLeak(t, base)
}
