// SPDX-License-Identifier: MIT

//go:build linux

package packetconn

import "golang.org/x/sys/unix"

// rawInet4 is an empty sockaddr_in of this OS's layout (no length byte).
func rawInet4() unix.RawSockaddrInet4 { return unix.RawSockaddrInet4{Family: unix.AF_INET} }

// rawInet6 is an empty sockaddr_in6 of this OS's layout.
func rawInet6() unix.RawSockaddrInet6 { return unix.RawSockaddrInet6{Family: unix.AF_INET6} }
