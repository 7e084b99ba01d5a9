// SPDX-License-Identifier: MIT

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package libloop

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// setPidFD: no pidfd on the BSDs.
func setPidFD(sys *syscall.SysProcAttr, fd *int) {}

// canSetPipeSize: the BSDs have no F_SETPIPE_SZ; SpawnExtra.PipeSize is
// ENOTSUP there.
const canSetPipeSize = false

func setPipeSize(fd, size int) error { return unix.ENOTSUP }

// closeUpTo: none. The BSD ForkExec cannot close the parent's other fds
// cheaply; fds the host opened without CLOEXEC are inherited (as with
// SpawnExtra.InheritFDs).
func closeUpTo() int { return -1 }

// watchExit has kqueue report the exit (EVFILT_PROC); a goroutine waits
// only if that fails.
func (p *Process) watchExit() {
	if !p.watchExitBySelector() {
		waitInBackground(p)
	}
}

func (p *Process) signal(sig int) error { return unix.Kill(p.pid, unix.Signal(sig)) }
