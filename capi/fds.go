package main

/*
#include "hotpath.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

func ioCall(s *loopState, fd C.int, cb C.ll_io_callback, arg unsafe.Pointer) libloop.ForeignCall {
	return libloop.ForeignCall{Fn: uintptr(unsafe.Pointer(cb)), Arg: uintptr(arg), ID: s.id,
		FD: int32(fd), Kind: libloop.ForeignIO}
}

//export ll_add_reader
func ll_add_reader(id C.uint64_t, fd C.int, cb C.ll_io_callback, arg unsafe.Pointer) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	return errCode(s.loop.AddReaderForeign(int(fd), ioCall(s, fd, cb, arg)))
}

//export ll_add_writer
func ll_add_writer(id C.uint64_t, fd C.int, cb C.ll_io_callback, arg unsafe.Pointer) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	return errCode(s.loop.AddWriterForeign(int(fd), ioCall(s, fd, cb, arg)))
}

func removed(ok bool, err error) C.int {
	if err != nil && !ok {
		return errCode(err)
	}
	return boolInt(ok)
}

//export ll_remove_reader
func ll_remove_reader(id C.uint64_t, fd C.int) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	return removed(s.loop.RemoveReader(int(fd)))
}

//export ll_remove_writer
func ll_remove_writer(id C.uint64_t, fd C.int) C.int {
	s, rc := getLoop(id)
	if rc != 0 {
		return rc
	}
	return removed(s.loop.RemoveWriter(int(fd)))
}
