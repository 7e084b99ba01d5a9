// SPDX-License-Identifier: MIT

//go:build linux && !amd64

package libloop

import "golang.org/x/sys/unix"

// sysEpollWait is the poll's system call: epoll_pwait with no signal mask,
// since arm64 and newer ports have no plain epoll_wait.
const sysEpollWait = unix.SYS_EPOLL_PWAIT
