// SPDX-License-Identifier: MIT

//go:build linux || darwin || freebsd

package libloop

import (
	"net/netip"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Source-specific membership's structs differ by system: Linux's struct
// ip_mreq_source is group, interface, source, the BSDs' group, source,
// interface; RFC 3678's struct group_source_req is the interface index
// then two sockaddr_storage, 8-aligned on 64-bit Linux and FreeBSD (4
// bytes of padding after the index) and packed to 4 on macOS.

// setSourceMembership4 joins or leaves an IPv4 source-specific group.
func setSourceMembership4(fd int, group, iface, source [4]byte, join bool) error {
	var req [12]byte
	copy(req[0:], group[:])
	if runtime.GOOS == "linux" {
		copy(req[4:], iface[:])
		copy(req[8:], source[:])
	} else {
		copy(req[4:], source[:])
		copy(req[8:], iface[:])
	}
	opt := unix.IP_ADD_SOURCE_MEMBERSHIP
	if !join {
		opt = unix.IP_DROP_SOURCE_MEMBERSHIP
	}
	return setsockoptBytes(fd, unix.IPPROTO_IP, opt, req[:])
}

// setSourceMembership6 joins or leaves an IPv6 source-specific group.
func setSourceMembership6(fd int, group, source netip.Addr, ifindex int, join bool) error {
	off := 4
	if runtime.GOOS != "darwin" && unsafe.Sizeof(uintptr(0)) == 8 {
		off = 8
	}
	req := make([]byte, off+2*128)
	*(*uint32)(unsafe.Pointer(&req[0])) = uint32(ifindex)
	putSockaddr6(req[off:], group)
	putSockaddr6(req[off+128:], source)
	opt := unix.MCAST_JOIN_SOURCE_GROUP
	if !join {
		opt = unix.MCAST_LEAVE_SOURCE_GROUP
	}
	return setsockoptBytes(fd, unix.IPPROTO_IPV6, opt, req)
}

// putSockaddr6 writes a struct sockaddr_in6 for a (port 0) into b.
func putSockaddr6(b []byte, a netip.Addr) {
	sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&b[0]))
	setSockaddr6Len(sa)
	sa.Family = unix.AF_INET6
	sa.Addr = a.As16()
}
