// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"net"
	"net/netip"
)

// LookupHost resolves host to its IP addresses on the loop's resolver pool
// (resolver.go), never on the loop thread, and returns a typed future for
// them (IPv4-mapped addresses unmapped; "localhost" and IP literals need
// no lookup). ctx bounds the lookup itself and cancels the future; a name
// that does not resolve fails it with the resolver's *net.DNSError (code
// ENONAME). Call it on the loop thread; wait with Wait from anywhere.
func (l *Loop) LookupHost(ctx context.Context, host string) (*TypedFuture[[]netip.Addr], error) {
	return goOn(ctx, l, l.RunInResolver, func(ctx context.Context) ([]netip.Addr, error) {
		if ips, ok := parseNumeric(host); ok {
			return ips, nil
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		for i := range ips {
			ips[i] = ips[i].Unmap()
		}
		return ips, nil
	})
}
