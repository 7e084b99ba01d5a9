// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// setSockaddr6Len: Linux's sockaddr has no length byte.
func setSockaddr6Len(*unix.RawSockaddrInet6) {}
