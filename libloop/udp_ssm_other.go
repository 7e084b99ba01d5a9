// SPDX-License-Identifier: MIT

//go:build !linux && !darwin && !freebsd

package libloop

import (
	"net/netip"

	"golang.org/x/sys/unix"
)

// Source-specific multicast has no socket option on this system.
func setSourceMembership4(fd int, group, iface, source [4]byte, join bool) error {
	return unix.EOPNOTSUPP
}

func setSourceMembership6(fd int, group, source netip.Addr, ifindex int, join bool) error {
	return unix.EOPNOTSUPP
}
