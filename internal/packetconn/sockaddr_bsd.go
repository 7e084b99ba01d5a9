// SPDX-License-Identifier: MIT

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package packetconn

import "golang.org/x/sys/unix"

// rawInet4 is an empty sockaddr_in of this OS's layout (sin_len first).
func rawInet4() unix.RawSockaddrInet4 {
	return unix.RawSockaddrInet4{Len: unix.SizeofSockaddrInet4, Family: unix.AF_INET}
}

// rawInet6 is an empty sockaddr_in6 of this OS's layout (sin6_len first).
func rawInet6() unix.RawSockaddrInet6 {
	return unix.RawSockaddrInet6{Len: unix.SizeofSockaddrInet6, Family: unix.AF_INET6}
}
