// SPDX-License-Identifier: MIT

//go:build unix

package libloop

import (
	"errors"

	"golang.org/x/sys/unix"
)

// sysErrno extracts the errno from a system-call error.
func sysErrno(err error) (int, bool) {
	var en unix.Errno
	if errors.As(err, &en) {
		return int(en), true
	}
	return 0, false
}

func sysErrName(n int) string {
	if name := unix.ErrnoName(unix.Errno(n)); name != "" {
		return name
	}
	return "UNKNOWN"
}

func sysErrMessage(n int) string { return unix.Errno(n).Error() }

// sysEBADF is the error for a negative or absurd fd.
var sysEBADF error = unix.EBADF

// sysEBUSY refuses add_reader on an fd a transport owns, and a second owner.
var sysEBUSY error = unix.EBUSY
