// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"net/netip"
	"testing"
)

func TestLookupHost(t *testing.T) {
	l := newTestLoop(t)
	tf, err := l.LookupHost(context.Background(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Release()
	ips, err := Run(context.Background(), tf)
	if err != nil || len(ips) != 1 || ips[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("LookupHost = %v, %v", ips, err)
	}
	bad, _ := l.LookupHost(context.Background(), "no-such-host.invalid")
	defer bad.Release()
	if _, err := Run(context.Background(), bad); err == nil {
		t.Fatal("a .invalid name resolved")
	} else if code, _, _, _ := bad.Future().Exception(); code != int(ENONAME) {
		t.Fatalf("code %d (%v), want ENONAME", code, err)
	}
}
