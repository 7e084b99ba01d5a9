// SPDX-License-Identifier: MIT

//go:build linux && !amd64

package libloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// readNonblock reads from a non-blocking fd (see writeOnce on Raw; amd64
// has a one-frame version, rawsyscall_linux_amd64.go).
func readNonblock(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// epollWaitNB is epoll_wait(2) with timeout 0 into n records at buf.
func epollWaitNB(epfd int, buf *unix.EpollEvent, n int) (int, unix.Errno) {
	r, _, e := unix.RawSyscall6(sysEpollWait, uintptr(epfd), uintptr(unsafe.Pointer(buf)), uintptr(n), 0, 0, 0)
	return int(r), e
}
