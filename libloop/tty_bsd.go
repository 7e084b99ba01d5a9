// SPDX-License-Identifier: MIT

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package libloop

import "golang.org/x/sys/unix"

// The termios ioctls: TIOCSETAW lets written output drain first
// (tcsetattr's TCSADRAIN).
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETAW
)

// reopenTTY duplicates fd: the BSDs have no /proc to name the terminal, so
// the transport shares fd's open file (and its non-blocking flag).
func reopenTTY(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}
