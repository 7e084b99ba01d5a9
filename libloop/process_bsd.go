// SPDX-License-Identifier: MIT

//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package libloop

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// setPidFD: no pidfd on the BSDs.
func setPidFD(sys *syscall.SysProcAttr, fd *int) {}

// childFiles lists the child's stdio. The BSD ForkExec cannot close the
// parent's other fds; fds the host opened without CLOEXEC are inherited.
func childFiles(stdio [3]int) []uintptr {
	return []uintptr{uintptr(stdio[0]), uintptr(stdio[1]), uintptr(stdio[2])}
}

// watchExit has kqueue report the exit (EVFILT_PROC); a goroutine waits
// only if that fails.
func (p *Process) watchExit() {
	if !p.watchExitBySelector() {
		waitInBackground(p)
	}
}

func (p *Process) signal(sig int) error { return unix.Kill(p.pid, unix.Signal(sig)) }
