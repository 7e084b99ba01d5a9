// SPDX-License-Identifier: MIT

//go:build linux && amd64

package libloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSyscall4 is unix.RawSyscall6 in one frame, for calls of up to four
// arguments: the SYSCALL instruction and the errno test
// (rawsyscall_linux_amd64.s). x/sys/unix reaches it through three frames
// (syscall.RawSyscall6, its ABI wrapper, the runtime's Syscall6), and here
// a system call returns with the CPU's return predictions flushed (SRSO
// "Safe RET"), so each frame returned through afterwards costs a
// misprediction: 265 vs 282 ns per read(2) of an empty pipe from seven
// frames deep (go test -bench, 5 runs each). The loop's per-event calls
// use it: a stream's read and the non-blocking poll; the callers below are
// small enough to be inlined, so the call returns straight into the loop.
// Like RawSyscall it does not tell the scheduler: only for calls that do
// not block. As for any assembly function, a pointer converted to uintptr
// in the call's arguments is kept alive until it returns.
func rawSyscall4(trap, a1, a2, a3, a4 uintptr) (r, errno uintptr)

// readNonblock reads from a non-blocking fd (see writeOnce on Raw).
func readNonblock(fd int, p []byte) (int, error) {
	r, e := rawSyscall4(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0)
	if e != 0 {
		return 0, unix.Errno(e)
	}
	return int(r), nil
}

// epollWaitNB is epoll_wait(2) with timeout 0 into n records at buf.
func epollWaitNB(epfd int, buf *unix.EpollEvent, n int) (int, unix.Errno) {
	r, e := rawSyscall4(sysEpollWait, uintptr(epfd), uintptr(unsafe.Pointer(buf)), uintptr(n), 0)
	return int(r), unix.Errno(e)
}
