// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// epollSelector watches fds with epoll (level-triggered) and uses an eventfd
// for thread-safe wakeups.
type epollSelector struct {
	epfd   int
	wakefd int
	events []unix.EpollEvent
}

func newSelector() (selector, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(wfd)
		return nil, err
	}
	return &epollSelector{epfd: epfd, wakefd: wfd, events: make([]unix.EpollEvent, pollBuffer)}, nil
}

func epollMask(m uint8) uint32 {
	var e uint32
	if m&evRead != 0 {
		e |= unix.EPOLLIN
	}
	if m&evWrite != 0 {
		e |= unix.EPOLLOUT
	}
	if m&evOnce != 0 {
		e |= unix.EPOLLONESHOT
	}
	return e
}

func (s *epollSelector) control(fd int, old, new uint8) error {
	if fd == s.wakefd || fd == s.epfd {
		return unix.EBADF // the loop's own fds are not the host's to watch
	}
	ev := unix.EpollEvent{Events: epollMask(new), Fd: int32(fd)}
	switch {
	case new == 0:
		err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		if err == unix.ENOENT || err == unix.EBADF {
			err = nil // closed (and so dropped by the kernel) before removal
		}
		return err
	case old == 0:
		err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
		if err == unix.EEXIST {
			err = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
		}
		return err
	default:
		err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
		if err == unix.ENOENT {
			// The fd was closed and its number reused: register afresh.
			err = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
		}
		return err
	}
}

func (s *epollSelector) poll(timeoutNs int64, evs []ioEvent, noTry bool) ([]ioEvent, bool, error) {
	// A poll that cannot block skips the scheduler hand-off of a normal
	// system call; it is the loop's most frequent syscall. A poll that may
	// block tries it first too (unless told not to, noTry): under load (a
	// ping-pong, a busy server) the answer is usually there already, and a
	// blocking system call would wake the Go runtime's monitor thread on
	// every iteration.
	n, errno := 0, unix.Errno(0)
	if timeoutNs == 0 || !noTry {
		n, errno = epollWaitNB(s.epfd, &s.events[0], len(s.events))
	}
	if timeoutNs != 0 && n == 0 && errno == 0 {
		r, _, e := unix.Syscall6(sysEpollWait, uintptr(s.epfd),
			uintptr(unsafe.Pointer(&s.events[0])), uintptr(len(s.events)),
			uintptr(msTimeout(timeoutNs)), 0, 0)
		n, errno = int(r), e
	}
	if errno != 0 {
		if errno == unix.EINTR {
			return evs, false, nil
		}
		return evs, false, errno
	}
	evs, woke := s.decode(n, evs)
	return evs, woke, nil
}

func (s *epollSelector) triesFirst() bool { return true }

// pollTarget lets a ChainRunner make the poll: the epoll fd and the buffer
// poll reads into (no Go pointers in it; it lives as long as the selector).
func (s *epollSelector) pollTarget() PollTarget {
	return PollTarget{Fd: s.epfd, Buf: unsafe.Pointer(&s.events[0]), Max: len(s.events)}
}

// decode appends the readiness of the first n records of the buffer to evs
// and reports whether the wakeup fd was among them (its counter is reset).
func (s *epollSelector) decode(n int, evs []ioEvent) ([]ioEvent, bool) {
	woke := false
	n = min(n, len(s.events)) // a ChainRunner's count is trusted no further
	for i := 0; i < n; i++ {
		e := &s.events[i]
		if int(e.Fd) == s.wakefd {
			var buf [8]byte
			readNonblock(s.wakefd, buf[:]) // raw: the eventfd is non-blocking
			woke = true
			continue
		}
		var m uint8
		// As Python's selectors: an error or hang-up wakes both directions.
		if e.Events&^unix.EPOLLOUT != 0 {
			m |= evRead
		}
		if e.Events&^unix.EPOLLIN != 0 {
			m |= evWrite
		}
		evs = append(evs, ioEvent{fd: e.Fd, mask: m})
	}
	return evs, woke
}

func (s *epollSelector) fd() int { return s.epfd }

func (s *epollSelector) wakeFD() int { return s.wakefd }

func (s *epollSelector) wake() error {
	// A raw write: an eventfd write blocks only when the counter would
	// overflow, and the fd is non-blocking (EAGAIN then); a pool worker
	// posting a completion is spared the scheduler's entersyscall and
	// exitsyscall.
	one := uint64(1)
	_, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(s.wakefd), uintptr(unsafe.Pointer(&one)), 8)
	if e == 0 || e == unix.EAGAIN {
		return nil // EAGAIN: the counter is saturated, a wakeup is pending anyway
	}
	return e
}

func (s *epollSelector) close() error {
	unix.Close(s.wakefd)
	return unix.Close(s.epfd)
}
