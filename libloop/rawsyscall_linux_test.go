// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The one-frame system calls (rawsyscall_linux_amd64.s on amd64) return
// what the kernel returned: a count, or 0 and the errno.
func TestRawSyscallResults(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	buf := make([]byte, 16)
	if n, err := readNonblock(p[0], buf); n != 0 || err != unix.EAGAIN {
		t.Fatalf("empty pipe: %d, %v; want 0, EAGAIN", n, err)
	}
	if _, err := unix.Write(p[1], []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if n, err := readNonblock(p[0], buf); n != 5 || err != nil || string(buf[:5]) != "hello" {
		t.Fatalf("read: %d, %v, %q", n, err, buf[:n])
	}
	unix.Close(p[0])
	if n, err := readNonblock(p[0], buf); n != 0 || err != unix.EBADF {
		t.Fatalf("closed fd: %d, %v; want 0, EBADF", n, err)
	}

	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(epfd)
	evs := make([]unix.EpollEvent, 4)
	if n, e := epollWaitNB(epfd, &evs[0], len(evs)); n != 0 || e != 0 {
		t.Fatalf("idle epoll: %d, %v", n, e)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLOUT, Fd: int32(p[1])}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, p[1], &ev); err != nil {
		t.Fatal(err)
	}
	if n, e := epollWaitNB(epfd, &evs[0], len(evs)); n != 1 || e != 0 || evs[0].Fd != int32(p[1]) {
		t.Fatalf("writable pipe: %d, %v, fd %d", n, e, evs[0].Fd)
	}
	if n, e := epollWaitNB(-1, &evs[0], len(evs)); n != -1 || e != unix.EBADF {
		t.Fatalf("bad epoll fd: %d, %v; want -1, EBADF", n, e)
	}
}
