// SPDX-License-Identifier: MIT

package libloop

import (
	"os"
	"sort"

	"golang.org/x/sys/unix"
)

// File calls (libuv's uv_fs_*) run on a pool of their own, never on the
// loop thread, the default executor or the resolver: a slow disk then
// holds at most the file pool's threads, and run_in_executor work and
// name lookups are not starved behind it. The pool is the executor's
// machinery (a FIFO, workers started on demand, outcomes posted back as
// records and taken in one batch per loop wake-up) with its own bound.
//
// Each call returns a future whose value is the system call's result (an
// fd, a byte count, 0) or that fails with -errno. A buffer or stat record
// passed in stays the caller's responsibility: the worker uses it until
// the future is done, so the caller must neither free nor reuse it before
// then. Cancelling the future of a call no worker has started withdraws
// the call (it never runs; libuv's uv_cancel); a started one cannot be
// cancelled (Cancel reports false) and completes. Close withdraws the
// queued calls and waits for the started ones, so no worker touches a
// caller's buffer once Close has returned.

// DefaultFSWorkers is the file pool's bound unless SetFSWorkers changes
// it: libuv's default thread pool size. A file call blocks its thread for
// the call's whole time, so this is also the most threads file calls hold.
const DefaultFSWorkers = 4

// MaxFSIO bounds one read or write: Linux's own limit for one call
// (MAX_RW_COUNT); a larger length is refused with EINVAL rather than cut
// short, so a negative length cast to an unsigned one is caught.
const MaxFSIO = 0x7ffff000

// FSCopyfile flags (libuv's UV_FS_COPYFILE_*).
const (
	FSCopyfileExcl         = 1 // fail with EEXIST when the destination exists
	FSCopyfileFiclone      = 2 // try a copy-on-write clone first, else copy
	FSCopyfileFicloneForce = 4 // a copy-on-write clone or the clone's error
)

func (l *Loop) files() *executor {
	if l.fsPool == nil {
		e := &executor{max: DefaultFSWorkers, wakeEach: true}
		e.park.init(&e.mu, true)
		l.fsPool = e
	}
	return l.fsPool
}

// SetFSWorkers sets how many file calls may run at once
// (1..MaxExecutorWorkers); more wait in FIFO order.
func (l *Loop) SetFSWorkers(n int) error {
	if n < 1 || n > MaxExecutorWorkers {
		return EINVAL
	}
	if l.closed.Load() {
		return ECLOSED
	}
	e := l.files()
	e.mu.Lock()
	e.max = n
	e.park.broadcast() // workers above a lowered bound leave when they wake
	e.mu.Unlock()
	return nil
}

// FSWorkers is the file pool's bound (SetFSWorkers; DefaultFSWorkers
// until set). A host that runs file calls on threads of its own (capi's
// callback form) takes its bound from here.
func (l *Loop) FSWorkers() int {
	e := l.files()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.max
}

// WakeFD is an fd whose 8-byte write of the integer 1 wakes the loop's
// poll (its eventfd), or -1 where the loop has none (kqueue): for a host
// whose own threads post to its PostSource and that stops them before
// Close, which closes the fd. Other threads wake the loop with Wake.
func (l *Loop) WakeFD() int { return l.sel.wakeFD() }

// RunInFS runs fn, a file operation, on the loop's file pool and returns a
// future resolved with its outcome on the loop thread. Unlike
// RunInExecutor, cancelling the future before a worker starts fn withdraws
// it; once started, Cancel reports false and the outcome is delivered.
func (l *Loop) RunInFS(fn WorkFunc) (*Future, error) {
	if fn == nil {
		return nil, EINVAL
	}
	return l.submitFS(fn, "file call failed")
}

// submitFS queues fn on the file pool with a withdrawable future; msg is
// the failure's message.
func (l *Loop) submitFS(fn WorkFunc, msg string) (*Future, error) {
	if l.closed.Load() {
		return nil, ECLOSED
	}
	e := l.files()
	fut, err := l.NewFuture()
	if err != nil {
		return nil, err
	}
	// Tracked before it is queued: a worker may take the job at once and
	// reads the record's start state.
	r := e.track(fut)
	r.withdrawable, r.msg = true, msg
	if err := l.queueFile(execJob{fn: fn, fut: fut, flight: r}); err != nil {
		e.untrack(r)
		fut.Release()
		return nil, err
	}
	fut.hold() // by the job until its outcome is delivered
	return fut, nil
}

// closeFiles is Close's part for the file pool: queued calls are withdrawn
// and started ones waited for, so no caller's buffer is used afterwards.
func (e *executor) closeFiles() {
	hostCalls := 0
	for _, r := range e.inflight {
		r.start.CompareAndSwap(flightQueued, flightWithdrawn)
		if r.hostToken != 0 {
			hostCalls++ // the host closed its threads first: no outcome comes
		}
	}
	e.pending.Add(-int64(hostCalls))
	// Queued calls are dropped, not run: a host's read or write has no
	// flight record to withdraw it, and its callback could not run now.
	e.mu.Lock()
	for i := e.head; i < len(e.jobs); i++ {
		e.jobs[i] = execJob{}
	}
	e.pending.Add(-int64(len(e.jobs) - e.head))
	e.jobs, e.head = e.jobs[:0], 0
	e.mu.Unlock()
	e.dropHostJobs()
	e.stop()
	e.dropInflight()
	e.running.Wait()
}

// fsResult turns a system call's outcome into a job's.
func fsResult(v int, err error) (uintptr, int) {
	if err != nil {
		return 0, Code(err)
	}
	return uintptr(v), 0
}

// retryEINTR repeats call while it fails with EINTR (a signal landed on
// the worker; regular files rarely see it, pipes and FUSE may).
func retryEINTR(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// FSOpen opens path (open(2) flags, always with O_CLOEXEC, as libuv does:
// a child the loop spawns inherits no fd it did not name); the value is
// the fd.
func (l *Loop) FSOpen(path string, flags int, mode uint32) (*Future, error) {
	return l.submitFS(func() (uintptr, int) {
		return fsResult(retryEINTR(func() (int, error) { return unix.Open(path, flags|unix.O_CLOEXEC, mode) }))
	}, "open failed")
}

// FSClose closes fd; the value is 0. Not retried on EINTR: the fd is gone
// either way on Linux.
func (l *Loop) FSClose(fd int) (*Future, error) {
	if fd < 0 {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Close(fd)) }, "close failed")
}

// checkIO refuses an offset below -1 and a length over MaxFSIO.
func checkIO(n int, off int64) error {
	if n > MaxFSIO || off < -1 {
		return EINVAL
	}
	return nil
}

// FSRead reads into buf from fd at off (-1: at the file position, which
// advances); the value is the byte count, 0 at the end of the file. buf
// is the worker's until the future is done.
func (l *Loop) FSRead(fd int, buf []byte, off int64) (*Future, error) {
	if err := checkIO(len(buf), off); err != nil {
		return nil, err
	}
	io := fileIO{buf: buf, off: off, fd: fdArg(fd), op: fileRead}
	return l.submitFS(io.run, "read failed")
}

// FSWrite writes buf to fd at off (-1: at the file position); the value
// is the byte count. buf is the worker's until the future is done.
func (l *Loop) FSWrite(fd int, buf []byte, off int64) (*Future, error) {
	if err := checkIO(len(buf), off); err != nil {
		return nil, err
	}
	io := fileIO{buf: buf, off: off, fd: fdArg(fd), op: fileWrite}
	return l.submitFS(io.run, "write failed")
}

// FSStat fills st with path's status (stat(2)); the value is 0. st is the
// worker's until the future is done.
func (l *Loop) FSStat(path string, st *unix.Stat_t) (*Future, error) {
	if st == nil {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Stat(path, st)) }, "stat failed")
}

// FSLstat is FSStat without following a final symbolic link (lstat(2)).
func (l *Loop) FSLstat(path string, st *unix.Stat_t) (*Future, error) {
	if st == nil {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Lstat(path, st)) }, "lstat failed")
}

// FSFstat is FSStat of an open fd (fstat(2)).
func (l *Loop) FSFstat(fd int, st *unix.Stat_t) (*Future, error) {
	if st == nil {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Fstat(fd, st)) }, "fstat failed")
}

// FSRename renames from to to (rename(2)); the value is 0.
func (l *Loop) FSRename(from, to string) (*Future, error) {
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Rename(from, to)) }, "rename failed")
}

// FSUnlink removes the file path (unlink(2)); the value is 0.
func (l *Loop) FSUnlink(path string) (*Future, error) {
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Unlink(path)) }, "unlink failed")
}

// FSMkdir makes the directory path (mkdir(2), mode less the umask); the
// value is 0.
func (l *Loop) FSMkdir(path string, mode uint32) (*Future, error) {
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Mkdir(path, mode)) }, "mkdir failed")
}

// FSRmdir removes the empty directory path (rmdir(2)); the value is 0.
func (l *Loop) FSRmdir(path string) (*Future, error) {
	return l.submitFS(func() (uintptr, int) { return fsResult(0, unix.Rmdir(path)) }, "rmdir failed")
}

// FSScandir lists the directory path into *names (set by the worker before
// the future is done; sorted, without "." and "..", as libuv's scandir);
// the value is the number of names.
func (l *Loop) FSScandir(path string, names *[]string) (*Future, error) {
	if names == nil {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) {
		list, err := ReadDirNames(path)
		if err != nil {
			return 0, Code(err)
		}
		*names = list
		return uintptr(len(list)), 0
	}, "scandir failed")
}

// ReadDirNames is scandir's listing, run on the calling thread: the names
// in the directory path, sorted bytewise, without "." and "..".
func ReadDirNames(path string) ([]string, error) {
	d, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// FSFsync flushes fd's data and metadata to its device (fsync(2)); the
// value is 0.
func (l *Loop) FSFsync(fd int) (*Future, error) {
	return l.submitFS(func() (uintptr, int) {
		return fsResult(retryEINTR(func() (int, error) { return 0, unix.Fsync(fd) }))
	}, "fsync failed")
}

// FSFtruncate sets fd's size to size bytes (ftruncate(2)); the value is 0.
func (l *Loop) FSFtruncate(fd int, size int64) (*Future, error) {
	if size < 0 {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) {
		return fsResult(retryEINTR(func() (int, error) { return 0, unix.Ftruncate(fd, size) }))
	}, "ftruncate failed")
}

// FSCopyfile copies the file from to to, which gets from's permission bits
// (libuv's uv_fs_copyfile); flags are FSCopyfile*. An existing destination
// is replaced unless FSCopyfileExcl; a copy that fails once the
// destination is open removes it. The value is 0.
func (l *Loop) FSCopyfile(from, to string, flags int) (*Future, error) {
	if flags&^(FSCopyfileExcl|FSCopyfileFiclone|FSCopyfileFicloneForce) != 0 {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) { return fsResult(0, copyFile(from, to, flags)) }, "copyfile failed")
}

// FSSendfile copies up to n bytes from inFd at off (-1: at its file
// position) to outFd at its position, in the kernel where the OS allows
// (sendfile(2)), else read and written through a buffer; the value is the
// byte count, which may be short (one sendfile(2) call, as libuv).
func (l *Loop) FSSendfile(outFd, inFd int, off int64, n int) (*Future, error) {
	if err := checkIO(n, off); err != nil || n < 0 {
		return nil, EINVAL
	}
	return l.submitFS(func() (uintptr, int) { return fsResult(sendfileFiles(outFd, inFd, off, n)) }, "sendfile failed")
}

// copyFile is FSCopyfile's work, on a worker.
func copyFile(from, to string, flags int) (err error) {
	in, err := unix.Open(from, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(in)
	var src unix.Stat_t
	if err := unix.Fstat(in, &src); err != nil {
		return err
	}
	oflags := unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC
	if flags&FSCopyfileExcl != 0 {
		oflags |= unix.O_EXCL
	}
	out, err := unix.Open(to, oflags, uint32(src.Mode)&0o7777)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := unix.Close(out); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			unix.Unlink(to)
		}
	}()
	var dst unix.Stat_t
	if err := unix.Fstat(out, &dst); err != nil {
		return err
	}
	if dst.Dev == src.Dev && dst.Ino == src.Ino {
		return nil // the same file: nothing to copy (and truncating would lose it)
	}
	if err := unix.Ftruncate(out, 0); err != nil {
		return err
	}
	if err := unix.Fchmod(out, uint32(src.Mode)&0o7777); err != nil {
		return err
	}
	if flags&(FSCopyfileFiclone|FSCopyfileFicloneForce) != 0 {
		err := cloneFile(out, in)
		if err == nil || flags&FSCopyfileFicloneForce != 0 {
			return err
		}
	}
	return copyContents(out, in, src.Size)
}

// copyByBuffer copies up to n bytes (n < 0: to the end) from in at off
// (-1: its position) to out at its position through a buffer; the
// fallback where the kernel cannot copy between the two fds.
func copyByBuffer(out, in int, off int64, n int64) (int64, error) {
	buf := make([]byte, 64<<10)
	var done int64
	for n < 0 || done < n {
		chunk := buf
		if n >= 0 && n-done < int64(len(chunk)) {
			chunk = chunk[:n-done]
		}
		r, err := retryEINTR(func() (int, error) {
			if off < 0 {
				return unix.Read(in, chunk)
			}
			return unix.Pread(in, chunk, off+done)
		})
		if err != nil {
			return done, err
		}
		if r == 0 {
			break
		}
		for w := 0; w < r; {
			m, err := retryEINTR(func() (int, error) { return unix.Write(out, chunk[w:r]) })
			if err != nil {
				return done + int64(w), err
			}
			w += m
		}
		done += int64(r)
	}
	return done, nil
}
