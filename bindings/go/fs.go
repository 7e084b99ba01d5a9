// SPDX-License-Identifier: MIT

package libloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// RawFS holds the raw calls of include/libloop/fs.h, embedded in Raw. The
// conventions are Raw's: paths, buffers and struct stat are C memory
// (CBuf.Ptr()), size_t is uintptr.
type RawFS struct {
	LoopSetFSWorkers func(loop uint64, n int32) int32                                                                // ll_loop_set_fs_workers
	FSOpen           func(loop uint64, path unsafe.Pointer, flags, mode int32, out unsafe.Pointer) int32             // ll_fs_open
	FSClose          func(loop uint64, fd int32, out unsafe.Pointer) int32                                           // ll_fs_close
	FSRead           func(loop uint64, fd int32, buf unsafe.Pointer, n uintptr, off int64, out unsafe.Pointer) int32 // ll_fs_read
	FSWrite          func(loop uint64, fd int32, buf unsafe.Pointer, n uintptr, off int64, out unsafe.Pointer) int32 // ll_fs_write
	FSReadCB         func(loop uint64, fd int32, buf unsafe.Pointer, n uintptr, off int64, cb, arg uintptr) int32    // ll_fs_read_cb
	FSWriteCB        func(loop uint64, fd int32, buf unsafe.Pointer, n uintptr, off int64, cb, arg uintptr) int32    // ll_fs_write_cb
	FSStat           func(loop uint64, path, st, out unsafe.Pointer) int32                                           // ll_fs_stat
	FSLstat          func(loop uint64, path, st, out unsafe.Pointer) int32                                           // ll_fs_lstat
	FSFstat          func(loop uint64, fd int32, st, out unsafe.Pointer) int32                                       // ll_fs_fstat
	FSRename         func(loop uint64, from, to, out unsafe.Pointer) int32                                           // ll_fs_rename
	FSUnlink         func(loop uint64, path, out unsafe.Pointer) int32                                               // ll_fs_unlink
	FSMkdir          func(loop uint64, path unsafe.Pointer, mode int32, out unsafe.Pointer) int32                    // ll_fs_mkdir
	FSRmdir          func(loop uint64, path, out unsafe.Pointer) int32                                               // ll_fs_rmdir
	FSScandir        func(loop uint64, path, out unsafe.Pointer) int32                                               // ll_fs_scandir
	FSFsync          func(loop uint64, fd int32, out unsafe.Pointer) int32                                           // ll_fs_fsync
	FSFtruncate      func(loop uint64, fd int32, n int64, out unsafe.Pointer) int32                                  // ll_fs_ftruncate
	FSCopyfile       func(loop uint64, from, to unsafe.Pointer, flags int32, out unsafe.Pointer) int32               // ll_fs_copyfile
	FSSendfile       func(loop uint64, outFD, inFD int32, off int64, n uintptr, out unsafe.Pointer) int32            // ll_fs_sendfile
}

func (r *RawFS) symbols() []struct {
	name string
	fptr any
} {
	return []struct {
		name string
		fptr any
	}{
		{"ll_loop_set_fs_workers", &r.LoopSetFSWorkers},
		{"ll_fs_open", &r.FSOpen},
		{"ll_fs_close", &r.FSClose},
		{"ll_fs_read", &r.FSRead},
		{"ll_fs_write", &r.FSWrite},
		{"ll_fs_read_cb", &r.FSReadCB},
		{"ll_fs_write_cb", &r.FSWriteCB},
		{"ll_fs_stat", &r.FSStat},
		{"ll_fs_lstat", &r.FSLstat},
		{"ll_fs_fstat", &r.FSFstat},
		{"ll_fs_rename", &r.FSRename},
		{"ll_fs_unlink", &r.FSUnlink},
		{"ll_fs_mkdir", &r.FSMkdir},
		{"ll_fs_rmdir", &r.FSRmdir},
		{"ll_fs_scandir", &r.FSScandir},
		{"ll_fs_fsync", &r.FSFsync},
		{"ll_fs_ftruncate", &r.FSFtruncate},
		{"ll_fs_copyfile", &r.FSCopyfile},
		{"ll_fs_sendfile", &r.FSSendfile},
	}
}

// File calls (include/libloop/fs.h): each runs one system call on the
// loop's file pool and returns a future whose Result is the call's value
// (an fd, a byte count, 0) or whose error is the -errno it failed with (a
// FutureError whose Code is a syscall errno's negative). Buffers are CBufs:
// the library reads or writes them in place, so a buffer must stay
// allocated and untouched until the future is done (Free it after). No Go
// memory crosses.

// Constants of include/libloop/fs.h.
const (
	FSDefaultWorkers       = 4          // LL_FS_DEFAULT_WORKERS
	FSMaxIO                = 2147479552 // LL_FS_MAX_IO (0x7ffff000)
	FSCopyfileExcl         = 1          // LL_FS_COPYFILE_EXCL
	FSCopyfileFiclone      = 2          // LL_FS_COPYFILE_FICLONE
	FSCopyfileFicloneForce = 4          // LL_FS_COPYFILE_FICLONE_FORCE
)

// SetFSWorkers sets how many file calls may run at once (ll_loop_set_fs_workers).
func (l *Loop) SetFSWorkers(n int) error {
	if !fitsInt32(n) {
		return EINVAL
	}
	return check(l.raw().LoopSetFSWorkers(l.id, int32(n)))
}

// fsPath calls fn with path as a C string (copied by the library).
func (l *Loop) fsPath(path string, fn func(p, out unsafe.Pointer) int32) (*Future, error) {
	c, err := NewCString(path)
	if err != nil {
		return nil, err
	}
	defer c.Free()
	return l.newFuture(func(out unsafe.Pointer) int32 { return fn(c.Ptr(), out) })
}

// FSOpen opens path (ll_fs_open; O_CLOEXEC is always added); the value is the fd.
func (l *Loop) FSOpen(path string, flags, mode int) (*Future, error) {
	if !fitsInt32(flags) || !fitsInt32(mode) {
		return nil, EINVAL
	}
	return l.fsPath(path, func(p, out unsafe.Pointer) int32 {
		return l.raw().FSOpen(l.id, p, int32(flags), int32(mode), out)
	})
}

// FSClose closes fd (ll_fs_close).
func (l *Loop) FSClose(fd int) (*Future, error) {
	if !fitsInt32(fd) {
		return nil, EINVAL
	}
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().FSClose(l.id, int32(fd), out) })
}

// bufPtr is a CBuf's address and length (NULL for nil: the library refuses it).
func bufPtr(b *CBuf) (unsafe.Pointer, uintptr) {
	if b == nil {
		return nil, 0
	}
	return b.Ptr(), b.Len()
}

// FSRead reads up to buf.Len() bytes of fd into buf at off (-1: at the
// file position) (ll_fs_read); the value is the byte count. buf is the
// library's until the future is done.
func (l *Loop) FSRead(fd int, buf *CBuf, off int64) (*Future, error) {
	if !fitsInt32(fd) {
		return nil, EINVAL
	}
	p, n := bufPtr(buf)
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().FSRead(l.id, int32(fd), p, n, off, out) })
}

// FSWrite writes buf to fd at off (-1: at the file position) (ll_fs_write);
// the value is the byte count. buf is the library's until the future is done.
func (l *Loop) FSWrite(fd int, buf *CBuf, off int64) (*Future, error) {
	if !fitsInt32(fd) {
		return nil, EINVAL
	}
	p, n := bufPtr(buf)
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().FSWrite(l.id, int32(fd), p, n, off, out) })
}

// StatBuf is a struct stat in C memory for FSStat, FSLstat and FSFstat.
// Free it when done.
type StatBuf struct{ b *CBuf }

// FSReadCB reads as FSRead does, with no future (ll_fs_read_cb): fn runs
// on the loop thread once the read is done, with the byte count (0 at the
// end of the file) or -errno. buf is the library's until then. A read the
// loop withdraws when it closes never calls fn.
func (l *Loop) FSReadCB(fd int, buf *CBuf, off int64, fn func(result int)) error {
	return l.fsIOCB(fd, buf, off, fn, l.raw().FSReadCB)
}

// FSWriteCB is FSReadCB for a write (ll_fs_write_cb): fn gets the byte
// count written or -errno.
func (l *Loop) FSWriteCB(fd int, buf *CBuf, off int64, fn func(result int)) error {
	return l.fsIOCB(fd, buf, off, fn, l.raw().FSWriteCB)
}

// fsIOCB makes a callback call through the ll_io_callback trampoline (an
// ll_fs_callback has its type), its entry dropped when called or when the
// loop closes.
func (l *Loop) fsIOCB(fd int, buf *CBuf, off int64, fn func(int), call func(uint64, int32, unsafe.Pointer, uintptr, int64, uintptr, uintptr) int32) error {
	if !fitsInt32(fd) || fn == nil {
		return EINVAL
	}
	p, n := bufPtr(buf)
	key := addEntry(&cbEntry{kind: kindIO, once: true, owner: l.id,
		io: func(_ uint64, result int) { fn(result) }})
	if err := check(call(l.id, int32(fd), p, n, off, IOCallbackPtr(), key)); err != nil {
		removeEntry(key)
		return err
	}
	return nil
}

// NewStatBuf allocates a zeroed struct stat.
func NewStatBuf() (*StatBuf, error) {
	b, err := NewCBuf(unsafe.Sizeof(unix.Stat_t{}))
	if err != nil {
		return nil, err
	}
	return &StatBuf{b}, nil
}

// Stat copies the struct stat out (the C library's layout is the
// kernel's, which unix.Stat_t is; libloop.so checks that when it builds).
func (s *StatBuf) Stat() unix.Stat_t { return *(*unix.Stat_t)(s.b.Ptr()) }

// Free returns the memory; not while a call that fills it is pending.
func (s *StatBuf) Free() { s.b.Free() }

func (s *StatBuf) ptr() unsafe.Pointer {
	if s == nil {
		return nil
	}
	return s.b.Ptr()
}

// FSStat fills st with path's status (ll_fs_stat); the value is 0.
func (l *Loop) FSStat(path string, st *StatBuf) (*Future, error) {
	return l.fsPath(path, func(p, out unsafe.Pointer) int32 { return l.raw().FSStat(l.id, p, st.ptr(), out) })
}

// FSLstat is FSStat without following a final symbolic link (ll_fs_lstat).
func (l *Loop) FSLstat(path string, st *StatBuf) (*Future, error) {
	return l.fsPath(path, func(p, out unsafe.Pointer) int32 { return l.raw().FSLstat(l.id, p, st.ptr(), out) })
}

// FSFstat is FSStat of an open fd (ll_fs_fstat).
func (l *Loop) FSFstat(fd int, st *StatBuf) (*Future, error) {
	if !fitsInt32(fd) {
		return nil, EINVAL
	}
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().FSFstat(l.id, int32(fd), st.ptr(), out) })
}

// FSRename renames from to to (ll_fs_rename).
func (l *Loop) FSRename(from, to string) (*Future, error) {
	c, err := NewCString(to)
	if err != nil {
		return nil, err
	}
	defer c.Free()
	return l.fsPath(from, func(p, out unsafe.Pointer) int32 { return l.raw().FSRename(l.id, p, c.Ptr(), out) })
}

// FSUnlink removes the file path (ll_fs_unlink).
func (l *Loop) FSUnlink(path string) (*Future, error) {
	return l.fsPath(path, func(p, out unsafe.Pointer) int32 { return l.raw().FSUnlink(l.id, p, out) })
}

// FSMkdir makes the directory path (ll_fs_mkdir).
func (l *Loop) FSMkdir(path string, mode int) (*Future, error) {
	if !fitsInt32(mode) {
		return nil, EINVAL
	}
	return l.fsPath(path, func(p, out unsafe.Pointer) int32 { return l.raw().FSMkdir(l.id, p, int32(mode), out) })
}

// FSRmdir removes the empty directory path (ll_fs_rmdir).
func (l *Loop) FSRmdir(path string) (*Future, error) {
	return l.fsPath(path, func(p, out unsafe.Pointer) int32 { return l.raw().FSRmdir(l.id, p, out) })
}

// ScandirFuture is the future of FSScandir; Names reads its value. Release
// it when done.
type ScandirFuture struct {
	Future
}

// FSScandir lists the directory path (ll_fs_scandir).
func (l *Loop) FSScandir(path string) (*ScandirFuture, error) {
	f, err := l.fsPath(path, func(p, out unsafe.Pointer) int32 { return l.raw().FSScandir(l.id, p, out) })
	if err != nil {
		return nil, err
	}
	sf := &ScandirFuture{*f}
	ownedFutures.Store(sf.id, &sf.Future)
	return sf, nil
}

// Names returns the directory's names (sorted, without "." and ".."); the
// error is the future's (ESTATE while pending).
func (f *ScandirFuture) Names() ([]string, error) {
	out, err := getSlot()
	if err != nil {
		return nil, err
	}
	defer putSlot(out)
	if err := check(f.raw().FutureResult(f.id, out)); err != nil {
		return nil, err
	}
	// "a\0b\0\0" in C memory the future owns until released.
	var names []string
	for p := *(*unsafe.Pointer)(out); *(*byte)(p) != 0; {
		n := goString(p)
		names = append(names, n)
		p = unsafe.Add(p, len(n)+1)
	}
	return names, nil
}

// FSFsync flushes fd to its device (ll_fs_fsync).
func (l *Loop) FSFsync(fd int) (*Future, error) {
	if !fitsInt32(fd) {
		return nil, EINVAL
	}
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().FSFsync(l.id, int32(fd), out) })
}

// FSFtruncate sets fd's size (ll_fs_ftruncate).
func (l *Loop) FSFtruncate(fd int, size int64) (*Future, error) {
	if !fitsInt32(fd) {
		return nil, EINVAL
	}
	return l.newFuture(func(out unsafe.Pointer) int32 { return l.raw().FSFtruncate(l.id, int32(fd), size, out) })
}

// FSCopyfile copies the file from to to (ll_fs_copyfile; flags FSCopyfile*).
func (l *Loop) FSCopyfile(from, to string, flags int) (*Future, error) {
	if !fitsInt32(flags) {
		return nil, EINVAL
	}
	c, err := NewCString(to)
	if err != nil {
		return nil, err
	}
	defer c.Free()
	return l.fsPath(from, func(p, out unsafe.Pointer) int32 {
		return l.raw().FSCopyfile(l.id, p, c.Ptr(), int32(flags), out)
	})
}

// FSSendfile copies up to n bytes of inFD at off (-1: its position) to
// outFD (ll_fs_sendfile); the value is the byte count.
func (l *Loop) FSSendfile(outFD, inFD int, off int64, n int) (*Future, error) {
	if !fitsInt32(outFD) || !fitsInt32(inFD) || n < 0 {
		return nil, EINVAL
	}
	return l.newFuture(func(out unsafe.Pointer) int32 {
		return l.raw().FSSendfile(l.id, int32(outFD), int32(inFD), off, uintptr(n), out)
	})
}
