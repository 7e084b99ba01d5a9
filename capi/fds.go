// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

func ioCall(s *loopState, fd C.int, cb C.ll_io_callback, arg unsafe.Pointer) libloop.HostCall {
	return libloop.HostCall{Fn: uintptr(unsafe.Pointer(cb)), Arg: uintptr(arg), ID: s.id,
		FD: int32(fd), Kind: libloop.HostIO}
}

// ll__add_reader_go is ll_add_reader's Go side; caller: see loopthread.go.
//
//export ll__add_reader_go
func ll__add_reader_go(caller, id C.uint64_t, fd C.int, cb C.ll_io_callback, arg unsafe.Pointer) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return errCode(s.loop.AddReaderHost(int(fd), ioCall(s, fd, cb, arg)))
}

// ll__add_writer_go is ll_add_writer's Go side; caller: see loopthread.go.
//
//export ll__add_writer_go
func ll__add_writer_go(caller, id C.uint64_t, fd C.int, cb C.ll_io_callback, arg unsafe.Pointer) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return errCode(s.loop.AddWriterHost(int(fd), ioCall(s, fd, cb, arg)))
}

func removed(ok bool, err error) C.int {
	if err != nil && !ok {
		return errCode(err)
	}
	return boolInt(ok)
}

// ll__remove_reader_go is ll_remove_reader's Go side; caller: see loopthread.go.
//
//export ll__remove_reader_go
func ll__remove_reader_go(caller, id C.uint64_t, fd C.int) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return removed(s.loop.RemoveReader(int(fd)))
}

// ll__remove_writer_go is ll_remove_writer's Go side; caller: see loopthread.go.
//
//export ll__remove_writer_go
func ll__remove_writer_go(caller, id C.uint64_t, fd C.int) C.int {
	s, rc := getLoopFrom(caller, id)
	if rc != 0 {
		return rc
	}
	return removed(s.loop.RemoveWriter(int(fd)))
}
