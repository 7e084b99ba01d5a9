//go:build linux

package libloop

import "golang.org/x/sys/unix"

// writeNoSigpipe writes to a pipe (or any non-socket fd). A write to a
// pipe whose reader is gone returns EPIPE: the host's SIGPIPE disposition
// decides whether the signal kills it, and the Go runtime of a c-shared
// library ignores a SIGPIPE raised by its own writes, so this is safe
// from a loop thread (checked by the pipe tests).
func writeNoSigpipe(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

func writevNoSigpipe(fd int, bufs [][]byte) (int, error) { return unix.Writev(fd, bufs) }
