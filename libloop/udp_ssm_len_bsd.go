// SPDX-License-Identifier: MIT

//go:build darwin || freebsd

package libloop

import "golang.org/x/sys/unix"

// setSockaddr6Len sets the BSDs' sockaddr length byte.
func setSockaddr6Len(sa *unix.RawSockaddrInet6) { sa.Len = unix.SizeofSockaddrInet6 }
