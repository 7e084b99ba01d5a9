// SPDX-License-Identifier: MIT

package libloop

import "golang.org/x/sys/unix"

// A host's file read or write with a completion callback instead of a
// future (libuv's uv_fs_read/uv_fs_write with their uv_fs_cb): the call
// is described by value in its job (no closure, no future, no flight
// record), and its outcome comes back as one HostIO call whose FD is the
// byte count or the error code. From C this is one crossing into Go per
// read, where a future costs four (the call, a done-callback
// registration, reading its result, releasing it; ~600 instructions each
// on the loop thread, callgrind).

// fileOp says which system call a fileIO job makes.
type fileOp uint8

const (
	fileNone fileOp = iota // not a file I/O job
	fileRead
	fileWrite
)

// fileIO is a host's read or write: fd, the caller's buffer (lent until
// the callback runs) and the offset (-1: the file position).
type fileIO struct {
	buf []byte
	off int64
	fd  int32
	op  fileOp
}

// run makes the system call on a worker (FSRead's and FSWrite's too).
func (io *fileIO) run() (uintptr, int) {
	return fsResult(retryEINTR(func() (int, error) {
		switch {
		case io.op == fileWrite && io.off < 0:
			return unix.Write(int(io.fd), io.buf)
		case io.op == fileWrite:
			return unix.Pwrite(int(io.fd), io.buf, io.off)
		case io.off < 0:
			return unix.Read(int(io.fd), io.buf)
		}
		return unix.Pread(int(io.fd), io.buf, io.off)
	}))
}

// outcome is the callback to post: done with FD the byte count, or the
// (negative) error code. Both fit: a count is at most MaxFSIO.
func (io *fileIO) outcome(done HostCall, value uintptr, code int) HostCall {
	if code != 0 {
		done.FD = int32(code)
	} else {
		done.FD = int32(value)
	}
	return done
}

// FSReadHost is FSRead for a host that wants a callback rather than a
// future: done (a HostIO call; ID 0 is the loop's Tag) runs on the loop
// thread once the read is done, with FD the byte count (0 at the end of
// the file) or -errno. buf is the worker's until then. The call cannot be
// cancelled; Close withdraws it if no worker has started it (done never
// runs then) and otherwise waits for it, as for FSRead.
func (l *Loop) FSReadHost(fd int, buf []byte, off int64, done HostCall) error {
	return l.submitFileIO(fileIO{buf: buf, off: off, fd: fdArg(fd), op: fileRead}, done)
}

// FSWriteHost is FSReadHost for a write (FSWrite): FD is the byte count
// written, or -errno.
func (l *Loop) FSWriteHost(fd int, buf []byte, off int64, done HostCall) error {
	return l.submitFileIO(fileIO{buf: buf, off: off, fd: fdArg(fd), op: fileWrite}, done)
}

// submitFileIO checks and queues a host's read or write on the file pool.
func (l *Loop) submitFileIO(io fileIO, done HostCall) error {
	if done.Fn == 0 || done.Kind != HostIO {
		return EINVAL
	}
	if err := checkIO(len(io.buf), io.off); err != nil {
		return err
	}
	if l.closed.Load() {
		return ECLOSED
	}
	return l.queueFile(execJob{io: io, after: done})
}

// fdArg narrows an fd for a fileIO; one outside int32's range (no fd is)
// becomes -1, so the system call answers EBADF, through the callback as
// for any bad fd.
func fdArg(fd int) int32 {
	if fd < 0 || fd > 1<<31-1 {
		return -1
	}
	return int32(fd)
}
