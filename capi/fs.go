// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/stat.h>
#include "capi.h"

// Where struct stat keeps what the checks below compare with Go's layout.
enum {
    ll__st_ino = offsetof(struct stat, st_ino),
    ll__st_mode = offsetof(struct stat, st_mode),
    ll__st_size = offsetof(struct stat, st_size),
    ll__st_mtim = offsetof(struct stat, st_mtim),
};

static void ll__free_block(uintptr_t p) { free((void *)p); }
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/libloop/libloop/libloop"
	"golang.org/x/sys/unix"
)

// The core's stat calls fill a unix.Stat_t in place, which here is the
// caller's struct stat: the C library's layout must be the kernel's (it is
// on glibc and musl for 64-bit Linux, and on the BSDs), checked when capi
// compiles (a negative array length otherwise).
var (
	_ [unsafe.Sizeof(unix.Stat_t{}) - C.sizeof_struct_stat]struct{}
	_ [C.sizeof_struct_stat - unsafe.Sizeof(unix.Stat_t{})]struct{}
	_ [unsafe.Offsetof(unix.Stat_t{}.Ino) - C.ll__st_ino]struct{}
	_ [C.ll__st_ino - unsafe.Offsetof(unix.Stat_t{}.Ino)]struct{}
	_ [unsafe.Offsetof(unix.Stat_t{}.Mode) - C.ll__st_mode]struct{}
	_ [C.ll__st_mode - unsafe.Offsetof(unix.Stat_t{}.Mode)]struct{}
	_ [unsafe.Offsetof(unix.Stat_t{}.Size) - C.ll__st_size]struct{}
	_ [C.ll__st_size - unsafe.Offsetof(unix.Stat_t{}.Size)]struct{}
	_ [unsafe.Offsetof(unix.Stat_t{}.Mtim) - C.ll__st_mtim]struct{}
	_ [C.ll__st_mtim - unsafe.Offsetof(unix.Stat_t{}.Mtim)]struct{}
)

// fsCall is makeFuture for a file call: a path is copied (C.GoString)
// once the loop id is good.
func fsCall(loop C.uint64_t, out *C.uint64_t, build func(l *libloop.Loop) (*libloop.Future, error)) C.int {
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) { return build(s.loop) })
}

//export ll_loop_set_fs_workers
func ll_loop_set_fs_workers(loop C.uint64_t, n C.int) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if err := s.loop.SetFSWorkers(int(n)); err != nil {
		return errCode(err)
	}
	if s.pending != nil {
		C.ll__fspool_set_max(s.pending, n) // the C pool's bound is the core's
	}
	return 0
}

//export ll_fs_open
func ll_fs_open(loop C.uint64_t, path *C.ll__cchar, flags, mode C.int, out *C.uint64_t) C.int {
	if path == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSOpen(goPath(path), int(flags), uint32(mode))
	})
}

//export ll_fs_close
func ll_fs_close(loop C.uint64_t, fd C.int, out *C.uint64_t) C.int {
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) { return l.FSClose(int(fd)) })
}

// ioSlice is the caller's buffer as a slice, not copied: C memory, which
// the worker may use until the future is done (the header's contract).
func ioSlice(buf unsafe.Pointer, n C.size_t) ([]byte, bool) {
	if buf == nil || n > libloop.MaxFSIO {
		return nil, false
	}
	return unsafe.Slice((*byte)(buf), int(n)), true
}

//export ll_fs_read
func ll_fs_read(loop C.uint64_t, fd C.int, buf unsafe.Pointer, n C.size_t, offset C.int64_t, out *C.uint64_t) C.int {
	b, ok := ioSlice(buf, n)
	if !ok {
		return C.int(libloop.EINVAL)
	}
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		if f, ok, err := s.fsFutureIO(fd, buf, n, offset, 0); ok {
			return f, err
		}
		return s.loop.FSRead(int(fd), b, int64(offset))
	})
}

//export ll_fs_write
func ll_fs_write(loop C.uint64_t, fd C.int, buf *C.ll__cvoid, n C.size_t, offset C.int64_t, out *C.uint64_t) C.int {
	b, ok := ioSlice(unsafe.Pointer(buf), n)
	if !ok {
		return C.int(libloop.EINVAL)
	}
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		if f, ok, err := s.fsFutureIO(fd, unsafe.Pointer(buf), n, offset, 1); ok {
			return f, err
		}
		return s.loop.FSWrite(int(fd), b, int64(offset))
	})
}

// fsDone is a completion callback as the core posts it: a HostIO call,
// whose fd argument carries the outcome (ll_fs_callback's type is
// ll_io_callback's).
func fsDone(cb C.ll_fs_callback, arg unsafe.Pointer) libloop.HostCall {
	return libloop.HostCall{Fn: uintptr(unsafe.Pointer(cb)), Arg: uintptr(arg), Kind: libloop.HostIO}
}

// ll__fs_io_go is ll_fs_read_cb's and ll_fs_write_cb's Go path (their C
// path is cloop/fspool.c's, taken on the running loop's thread once the
// loop's C pool is open): the checks, then the job on the C pool, opened
// here with the core's bound; where it cannot open (no memory), the
// core's own file pool.
//
//export ll__fs_io_go
func ll__fs_io_go(loop C.uint64_t, fd C.int, buf unsafe.Pointer, n C.size_t, offset C.int64_t, cb C.ll_fs_callback, arg unsafe.Pointer, write C.int) C.int {
	b, ok := ioSlice(buf, n)
	if !ok || cb == nil || offset < -1 {
		return C.int(libloop.EINVAL)
	}
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if s.loop.IsClosed() {
		return C.int(libloop.ECLOSED)
	}
	if p := s.openFSPool(); p != nil {
		return C.ll__fspool_submit(p, fd, buf, n, offset, cb, arg, write)
	}
	if write != 0 {
		return errCode(s.loop.FSWriteHost(int(fd), b, int64(offset), fsDone(cb, arg)))
	}
	return errCode(s.loop.FSReadHost(int(fd), b, int64(offset), fsDone(cb, arg)))
}

// openFSPool is the loop's C file pool, opened at its first use with the
// core's bound, or nil where it cannot open (no memory, no post queue).
// Loop's thread.
func (s *loopState) openFSPool() *C.ll__fspool {
	p := s.pending
	if p == nil {
		return nil
	}
	if p.fspool != nil && atomic.LoadUint64((*uint64)(unsafe.Pointer(&p.fspool.loop))) == uint64(s.id) {
		return p.fspool
	}
	if C.ll__fspool_open(p, C.uint64_t(s.id), C.int(s.loop.FSWorkers()), C.int(s.loop.WakeFD())) != 0 {
		return nil
	}
	return p.fspool
}

// QueueFS makes loopState the core's FSThreads: the core's file calls
// (the future form, open, stat ...) queue on the C pool behind the
// callback form's, so the loop's one bound holds for both forms.
func (s *loopState) QueueFS(id uint64) bool {
	p := s.openFSPool()
	return p != nil && C.ll__fspool_submit_go(p, C.uint64_t(id)) == 0
}

// ll__fs_run_go runs the core's file job on a C pool worker
// (FSThreads). The loop's close waits for the workers before its id goes.
//
//export ll__fs_run_go
func ll__fs_run_go(loop, job C.uint64_t) {
	if obj, ok := ids.get(uint64(loop), kindLoop); ok {
		obj.(*loopState).loop.RunFSJob(uint64(job))
	}
}

// Outstanding makes loopState the core's HostJobs: the C pool's jobs
// whose outcome is not posted yet keep the loop alive.
func (s *loopState) Outstanding() bool {
	if s.pending == nil || s.pending.fspool == nil {
		return false
	}
	return atomic.LoadInt64((*int64)(unsafe.Pointer(&s.pending.fspool.outstanding))) > 0
}

//export ll_fs_stat
func ll_fs_stat(loop C.uint64_t, path *C.ll__cchar, st *C.struct_stat, out *C.uint64_t) C.int {
	if path == nil || st == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSStat(goPath(path), (*unix.Stat_t)(unsafe.Pointer(st)))
	})
}

//export ll_fs_lstat
func ll_fs_lstat(loop C.uint64_t, path *C.ll__cchar, st *C.struct_stat, out *C.uint64_t) C.int {
	if path == nil || st == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSLstat(goPath(path), (*unix.Stat_t)(unsafe.Pointer(st)))
	})
}

//export ll_fs_fstat
func ll_fs_fstat(loop C.uint64_t, fd C.int, st *C.struct_stat, out *C.uint64_t) C.int {
	if st == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSFstat(int(fd), (*unix.Stat_t)(unsafe.Pointer(st)))
	})
}

//export ll_fs_rename
func ll_fs_rename(loop C.uint64_t, from, to *C.ll__cchar, out *C.uint64_t) C.int {
	if from == nil || to == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSRename(goPath(from), goPath(to))
	})
}

//export ll_fs_unlink
func ll_fs_unlink(loop C.uint64_t, path *C.ll__cchar, out *C.uint64_t) C.int {
	if path == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) { return l.FSUnlink(goPath(path)) })
}

//export ll_fs_mkdir
func ll_fs_mkdir(loop C.uint64_t, path *C.ll__cchar, mode C.int, out *C.uint64_t) C.int {
	if path == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSMkdir(goPath(path), uint32(mode))
	})
}

//export ll_fs_rmdir
func ll_fs_rmdir(loop C.uint64_t, path *C.ll__cchar, out *C.uint64_t) C.int {
	if path == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) { return l.FSRmdir(goPath(path)) })
}

//export ll_fs_scandir
func ll_fs_scandir(loop C.uint64_t, path *C.ll__cchar, out *C.uint64_t) C.int {
	if path == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		p := goPath(path)
		f, err := l.RunInFS(func() (uintptr, int) {
			names, err := libloop.ReadDirNames(p)
			if err != nil {
				return 0, libloop.Code(err)
			}
			return packNames(names)
		})
		if err != nil {
			return nil, err
		}
		f.SetFreeFunc(func(v uintptr) { C.ll__free_block(C.uintptr_t(v)) })
		return f, nil
	})
}

// packNames lays names out in one malloc'd block, each ending in NUL, the
// list ending in an empty name.
func packNames(names []string) (uintptr, int) {
	size := 1
	for _, n := range names {
		size += len(n) + 1
	}
	p := C.malloc(C.size_t(size))
	if p == nil {
		return 0, int(libloop.ENOMEM)
	}
	b := unsafe.Slice((*byte)(p), size)
	i := 0
	for _, n := range names {
		i += copy(b[i:], n)
		b[i] = 0
		i++
	}
	b[i] = 0
	return uintptr(p), 0
}

//export ll_fs_fsync
func ll_fs_fsync(loop C.uint64_t, fd C.int, out *C.uint64_t) C.int {
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) { return l.FSFsync(int(fd)) })
}

//export ll_fs_ftruncate
func ll_fs_ftruncate(loop C.uint64_t, fd C.int, n C.int64_t, out *C.uint64_t) C.int {
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) { return l.FSFtruncate(int(fd), int64(n)) })
}

//export ll_fs_copyfile
func ll_fs_copyfile(loop C.uint64_t, from, to *C.ll__cchar, flags C.int, out *C.uint64_t) C.int {
	if from == nil || to == nil {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSCopyfile(goPath(from), goPath(to), int(flags))
	})
}

//export ll_fs_sendfile
func ll_fs_sendfile(loop C.uint64_t, outFd, inFd C.int, offset C.int64_t, n C.size_t, out *C.uint64_t) C.int {
	if n > libloop.MaxFSIO {
		return C.int(libloop.EINVAL)
	}
	return fsCall(loop, out, func(l *libloop.Loop) (*libloop.Future, error) {
		return l.FSSendfile(int(outFd), int(inFd), int64(offset), int(n))
	})
}

// goPath copies a C path: the caller's string is only valid during the call.
func goPath(p *C.ll__cchar) string { return C.GoString((*C.char)(unsafe.Pointer(p))) }
