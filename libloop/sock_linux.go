// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// newSocket makes a non-blocking, close-on-exec socket in one call.
func newSocket(family, typ int) (int, error) {
	return unix.Socket(family, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

// acceptConn takes one pending connection, non-blocking and close-on-exec
// (accept4), without decoding the peer's address.
func acceptConn(fd int) (int, error) {
	r, _, e := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0,
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// writeOnce writes p; on a socket with MSG_NOSIGNAL, so a vanished peer is
// EPIPE, never a SIGPIPE that kills the host.
func writeOnce(fd int, p []byte, socket bool) (int, error) {
	if !socket {
		return writeNoSigpipe(fd, p)
	}
	// Raw: the fd is non-blocking, so this never blocks, and a normal
	// system call's scheduler hand-off would cost more than the send.
	r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))),
		uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// writeVec writes several buffers in one system call.
func writeVec(fd int, bufs [][]byte, socket bool) (int, error) {
	if !socket {
		return writevNoSigpipe(fd, bufs)
	}
	return unix.SendmsgBuffers(fd, bufs, nil, nil, unix.MSG_NOSIGNAL)
}

// sendTo sends one datagram to a raw sockaddr (nil: the connected peer).
func sendTo(fd int, p, addr []byte) error {
	var ap unsafe.Pointer
	if len(addr) > 0 {
		ap = unsafe.Pointer(&addr[0])
	}
	_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))),
		uintptr(len(p)), unix.MSG_NOSIGNAL, uintptr(ap), uintptr(len(addr)))
	if e != 0 {
		return e
	}
	return nil
}

// cloexecPipe makes a pipe whose ends are close-on-exec.
func cloexecPipe(p []int) error { return unix.Pipe2(p, unix.O_CLOEXEC) }
