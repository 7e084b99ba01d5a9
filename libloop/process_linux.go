// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// setPidFD asks ForkExec for a pidfd (Linux 5.3+; -1 where unsupported).
func setPidFD(sys *syscall.SysProcAttr, fd *int) { sys.PidFD = fd }

// canSetPipeSize: F_SETPIPE_SZ exists (SpawnExtra.PipeSize).
const canSetPipeSize = true

func setPipeSize(fd, size int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, size)
	return err
}

// closeUpTo is the highest fd ForkExec closes in the child (childFiles):
// every fd open in the parent, so nothing the host opened without CLOEXEC
// leaks into it.
func closeUpTo() int { return highestOpenFD() }

// highestOpenFD lists /proc/self/fd with getdents64 into a stack buffer
// (no allocation, no sorting: os.ReadDir did both on every spawn); -1 if
// it cannot be read.
func highestOpenFD() int {
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	defer unix.Close(dir)
	high := -1
	var buf [4096]byte
	for {
		n, err := unix.Getdents(dir, buf[:])
		if err != nil || n <= 0 {
			return high
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
			reclen := int(buf[off+16]) | int(buf[off+17])<<8
			fd, ok := 0, false
			for _, c := range buf[off+19 : off+reclen] {
				if c == 0 {
					break
				}
				if c < '0' || c > '9' {
					ok = false
					break
				}
				fd, ok = fd*10+int(c-'0'), true
			}
			if ok && fd > high {
				high = fd
			}
			off += reclen
		}
	}
}

// exitWatch is a pidfd registered with the selector: readable when the
// child exits.
type exitWatch struct{ p *Process }

// watchExit watches the child's pidfd; without one (an old kernel) a
// goroutine waits for it instead.
func (p *Process) watchExit() {
	if p.pidfd >= 0 { // close-on-exec already: clone(CLONE_PIDFD) and pidfd_open set it
		if p.loop.watchOwner(p.pidfd, exitWatch{p}, evRead|evOnce) == nil {
			p.loop.setQuiet(p.pidfd, exitWatch{p}, true) // the process counts, not its pidfd (refs.go)
			return
		}
		unix.Close(p.pidfd)
		p.pidfd = -1
	}
	waitInBackground(p)
}

func (w exitWatch) ioReady(mask uint8) {
	p := w.p
	var ws unix.WaitStatus
	pid, err := unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
	if err == unix.EINTR || (err == nil && pid == 0) {
		// Not yet: the pidfd stays watched, armed again (evOnce).
		if p.loop.rearm(p.pidfd, w) != nil {
			p.loop.unwatchOwner(p.pidfd, w)
			unix.Close(p.pidfd)
			p.pidfd = -1
			waitInBackground(p)
		}
		return
	}
	// The one event has fired: no EPOLL_CTL_DEL before the close (evOnce).
	p.loop.forgetFired(p.pidfd, w)
	unix.Close(p.pidfd)
	p.pidfd = -1
	code := exitCode(ws)
	if err != nil {
		code = 255 // reaped by someone else (ECHILD): the status is lost
	}
	p.exit(code)
}

// loopClosing: the loop will not run again; a goroutine reaps the child
// when it exits, so it never lingers as a zombie.
func (w exitWatch) loopClosing() {
	unix.Close(w.p.pidfd)
	w.p.pidfd = -1
	waitInBackground(w.p) // its report to the closed loop is simply refused
}

// signal uses the pidfd when there is one, so a recycled pid is never hit.
// Where pidfd_send_signal is missing (ENOSYS: valgrind 3.19 does not know
// it) the pid is signalled: it cannot have been recycled either, since the
// child is not reaped until its pidfd reports the exit (SendSignal refuses
// an exited or reaped process first).
func (p *Process) signal(sig int) error {
	if p.pidfd >= 0 {
		err := unix.PidfdSendSignal(p.pidfd, unix.Signal(sig), nil, 0)
		if err != unix.ENOSYS {
			return err
		}
	}
	return unix.Kill(p.pid, unix.Signal(sig))
}
