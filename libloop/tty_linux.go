// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The termios ioctls: TCSETSW lets written output drain first (tcsetattr's
// TCSADRAIN), so a mode change never garbles what is being printed.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETSW
)

// reopenTTY opens the terminal fd refers to by its name (/proc tells it),
// else duplicates fd.
func reopenTTY(fd int) (int, error) {
	if name, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil && strings.HasPrefix(name, "/dev/") {
		if own, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
			if isTerminal(own) {
				return own, nil
			}
			unix.Close(own)
		}
	}
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}
