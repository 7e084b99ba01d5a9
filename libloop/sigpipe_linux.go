// SPDX-License-Identifier: MIT

//go:build linux

package libloop

import "golang.org/x/sys/unix"

// writeNoSigpipe writes to a pipe (or any non-socket fd), where
// MSG_NOSIGNAL does not apply. The SIGPIPE such a write raises arrives
// while Go code runs on the thread, and the Go runtime of a c-shared
// library drops a SIGPIPE raised by Go code, so the write just fails with
// EPIPE even when the host left SIGPIPE at its default (checked from C:
// a pipe whose reader is gone ends the transport with -EPIPE).
func writeNoSigpipe(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

func writevNoSigpipe(fd int, bufs [][]byte) (int, error) { return unix.Writev(fd, bufs) }
