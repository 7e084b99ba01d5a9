// SPDX-License-Identifier: MIT

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package libloop

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newSocket makes a non-blocking, close-on-exec socket that never raises
// SIGPIPE (SO_NOSIGPIPE: darwin has no MSG_NOSIGNAL). ForkLock keeps a
// concurrent fork from inheriting it before CLOEXEC is set.
func newSocket(family, typ int) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(family, typ, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	return fd, prepareSocket(fd)
}

func prepareSocket(fd int) error {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
	return nil
}

// acceptConn takes one pending connection, non-blocking and close-on-exec.
func acceptConn(fd int) (int, error) {
	syscall.ForkLock.RLock()
	nfd, _, err := unix.Accept(fd)
	if err == nil {
		unix.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	return nfd, prepareSocket(nfd)
}

func writeOnce(fd int, p []byte, socket bool) (int, error) { return unix.Write(fd, p) }

// readNonblock reads from a non-blocking fd.
func readNonblock(fd int, p []byte) (int, error) { return unix.Read(fd, p) }

// writeVec writes the first buffer (x/sys has no writev on darwin); the
// rest goes on the next writable event.
func writeVec(fd int, bufs [][]byte, socket bool) (int, error) { return unix.Write(fd, bufs[0]) }

func sendTo(fd int, p, addr []byte) error {
	var ap unsafe.Pointer
	if len(addr) > 0 {
		ap = unsafe.Pointer(&addr[0])
	}
	_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))),
		uintptr(len(p)), 0, uintptr(ap), uintptr(len(addr)))
	if e != 0 {
		return e
	}
	return nil
}

// cloexecPipe makes a pipe whose ends are close-on-exec; ForkLock keeps a
// concurrent ForkExec from inheriting them in between.
func cloexecPipe(p []int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p); err != nil {
		return err
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return nil
}
