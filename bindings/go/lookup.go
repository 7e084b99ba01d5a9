// SPDX-License-Identifier: MIT

package libloop

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/libloop/libloop/internal/streamconn"
)

// LookupHost resolves host to its IP addresses on the loop's resolver
// pool (GetAddrInfo: the C library's getaddrinfo), never on the loop
// thread, and returns a typed future for them, as the core's LookupHost:
// in the resolver's order, each once, IPv4-mapped addresses unmapped;
// "localhost" and IP literals need no lookup. A name that does not
// resolve fails the future with a *net.DNSError (IsNotFound, and
// errors.Is(err, ENONAME)); another resolver failure is a *net.DNSError
// wrapping its Error. A ctx that is done first fails the future with
// ctx.Err() (a cancellation cancels it) and cancels the lookup's future:
// the future ends at once, though a getaddrinfo call under way runs to
// its end on its worker (the C call cannot be interrupted) and its answer
// is dropped. Call it on the loop thread; wait with Wait from anywhere
// else.
func (l *Loop) LookupHost(ctx context.Context, host string) (*TypedFuture[[]netip.Addr], error) {
	if ctx == nil || l == nil {
		return nil, EINVAL
	}
	tf, err := NewTypedFuture[[]netip.Addr](l)
	if err != nil {
		return nil, err
	}
	if ips, ok := streamconn.NumericHost(host); ok {
		if err := tf.SetResult(ips); err != nil {
			tf.Release()
			return nil, err
		}
		return tf, nil
	}
	af, err := l.GetAddrInfo(host, "", 0, syscall.SOCK_STREAM, 0)
	if err != nil {
		tf.Release()
		return nil, &net.DNSError{Err: err.Error(), Name: host, UnwrapErr: err}
	}
	answered := false // loop thread only
	if _, err := af.AddDoneCallback(func(*Future) {
		answered = true
		defer af.Release()
		if tf.Done() {
			return // cancelled, or ctx ended: the answer is dropped
		}
		infos, err := af.Addrs()
		if err != nil {
			tf.SetError(lookupError(host, err))
			return
		}
		tf.SetResult(lookupAddrs(infos))
	}); err != nil {
		af.Release()
		tf.Release()
		return nil, err
	}
	abandon := func() {
		if !answered {
			af.Cancel("lookup abandoned")
		}
	}
	if err := bindContext(ctx, tf, abandon); err != nil {
		abandon()
		tf.Release()
		return nil, err
	}
	return tf, nil
}

// lookupAddrs takes the addresses of a getaddrinfo answer, each once.
func lookupAddrs(infos []AddrInfo) []netip.Addr {
	ips := make([]netip.Addr, 0, len(infos))
	seen := make(map[netip.Addr]bool, len(infos))
	for _, ai := range infos {
		if !ai.Addr.AddrPort.IsValid() {
			continue
		}
		ip := ai.Addr.AddrPort.Addr().Unmap()
		if !seen[ip] {
			seen[ip] = true
			ips = append(ips, ip)
		}
	}
	return ips
}

// lookupError is a failed lookup as the net package reports one: a
// *net.DNSError that unwraps to the library's code.
func lookupError(host string, err error) error {
	de := &net.DNSError{Err: err.Error(), Name: host, UnwrapErr: err}
	if errors.Is(err, ENONAME) {
		de.Err, de.IsNotFound = "no such host", true
	}
	return de
}
