// SPDX-License-Identifier: MIT

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package libloop

import (
	"golang.org/x/sys/unix"
)

// kqueueSelector watches fds with kqueue; read and write are separate
// filters. Thread-safe wakeups use an EVFILT_USER event with ident 0.
type kqueueSelector struct {
	kq     int
	events []unix.Kevent_t
}

const wakeIdent = 0

func newSelector() (selector, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, wakeIdent, unix.EVFILT_USER, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		return nil, err
	}
	return &kqueueSelector{kq: kq, events: make([]unix.Kevent_t, pollBuffer)}, nil
}

func (s *kqueueSelector) control(fd int, old, new uint8) error {
	if fd == s.kq {
		return unix.EBADF
	}
	var changes []unix.Kevent_t
	add := func(filter, flags int) {
		var ev unix.Kevent_t
		unix.SetKevent(&ev, fd, filter, flags)
		changes = append(changes, ev)
	}
	if new&evRead != 0 && old&evRead == 0 {
		add(unix.EVFILT_READ, unix.EV_ADD)
	}
	if new&evRead == 0 && old&evRead != 0 {
		add(unix.EVFILT_READ, unix.EV_DELETE)
	}
	if new&evWrite != 0 && old&evWrite == 0 {
		add(unix.EVFILT_WRITE, unix.EV_ADD)
	}
	if new&evWrite == 0 && old&evWrite != 0 {
		add(unix.EVFILT_WRITE, unix.EV_DELETE)
	}
	if len(changes) == 0 {
		return nil
	}
	_, err := unix.Kevent(s.kq, changes, nil, nil)
	if new == 0 && (err == unix.ENOENT || err == unix.EBADF) {
		err = nil // closed (and so dropped by the kernel) before removal
	}
	return err
}

func (s *kqueueSelector) poll(timeoutNs int64, evs []ioEvent, _ bool) ([]ioEvent, bool, error) {
	var ts *unix.Timespec
	if timeoutNs >= 0 {
		t := unix.NsecToTimespec(timeoutNs)
		ts = &t
	}
	n, err := unix.Kevent(s.kq, nil, s.events, ts)
	if err != nil {
		if err == unix.EINTR {
			return evs, false, nil
		}
		return evs, false, err
	}
	woke := false
	for i := 0; i < n; i++ {
		e := &s.events[i]
		switch int(e.Filter) {
		case unix.EVFILT_USER:
			woke = true
		case unix.EVFILT_READ:
			evs = append(evs, ioEvent{fd: int32(e.Ident), mask: evRead})
		case unix.EVFILT_WRITE:
			evs = append(evs, ioEvent{fd: int32(e.Ident), mask: evWrite})
		case unix.EVFILT_PROC:
			evs = append(evs, ioEvent{fd: int32(e.Ident), mask: evExit})
		case unix.EVFILT_VNODE:
			m := evVnode
			if e.Fflags&(unix.NOTE_DELETE|unix.NOTE_REVOKE) != 0 {
				m |= evVnodeGone
			}
			if e.Fflags&unix.NOTE_RENAME != 0 {
				m |= evVnodeRenamed
			}
			evs = append(evs, ioEvent{fd: int32(e.Ident), mask: m})
		}
	}
	return evs, woke, nil
}

// triesFirst: kevent blocks at once (no non-blocking try to make early).
func (s *kqueueSelector) triesFirst() bool { return false }

// watchExit reports pid's exit once, as an evExit event (EVFILT_PROC).
func (s *kqueueSelector) watchExit(pid int) error {
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	_, err := unix.Kevent(s.kq, []unix.Kevent_t{ev}, nil, nil)
	return err
}

// watchVnode reports changes of the file open as fd (EVFILT_VNODE) as
// evVnode events, until fd is closed.
func (s *kqueueSelector) watchVnode(fd int) error {
	var ev unix.Kevent_t
	unix.SetKevent(&ev, fd, unix.EVFILT_VNODE, unix.EV_ADD|unix.EV_CLEAR)
	ev.Fflags = unix.NOTE_WRITE | unix.NOTE_EXTEND | unix.NOTE_ATTRIB | unix.NOTE_LINK |
		unix.NOTE_DELETE | unix.NOTE_RENAME | unix.NOTE_REVOKE
	_, err := unix.Kevent(s.kq, []unix.Kevent_t{ev}, nil, nil)
	return err
}

func (s *kqueueSelector) fd() int { return s.kq }

func (s *kqueueSelector) wakeFD() int { return -1 }

func (s *kqueueSelector) wake() error {
	var ev unix.Kevent_t
	unix.SetKevent(&ev, wakeIdent, unix.EVFILT_USER, 0)
	ev.Fflags = unix.NOTE_TRIGGER
	_, err := unix.Kevent(s.kq, []unix.Kevent_t{ev}, nil, nil)
	return err
}

func (s *kqueueSelector) close() error { return unix.Close(s.kq) }
