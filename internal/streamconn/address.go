// SPDX-License-Identifier: MIT

package streamconn

import (
	"net"
	"net/netip"
	"strconv"
)

// SplitPort splits a "host:port" address, resolving a service name.
func SplitPort(network, address string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		if port, err = net.LookupPort(network, portStr); err != nil {
			return "", 0, err
		}
	}
	return host, port, nil
}

// SplitAddress splits a "tcp", "tcp4" or "tcp6" address into host and
// port ("unix" has neither: the address is the path), or says why as
// net's errors do (a *net.OpError with Op op).
func SplitAddress(op, network, address string) (host string, port int, err error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
		if host, port, err = SplitPort(network, address); err != nil {
			return "", 0, &net.OpError{Op: op, Net: network, Err: err}
		}
	case "unix":
	default:
		return "", 0, &net.OpError{Op: op, Net: network, Err: net.UnknownNetworkError(network)}
	}
	return host, port, nil
}

// NumericHost returns host's addresses when it needs no lookup: an IP
// literal (its zone dropped), or "localhost" (IPv4 first, as most
// resolvers answer). The core's and the binding's LookupHost and the
// core's connects take these without asking a resolver.
func NumericHost(host string) ([]netip.Addr, bool) {
	if host == "localhost" {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.WithZone("")}, true
	}
	return nil, false
}
