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

//export ll_tty_open
func ll_tty_open(loop C.uint64_t, fd C.int, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	return openOut(s, fn, arg, out, func() (*libloop.Transport, error) { return s.loop.OpenTTY(int(fd), nil) })
}

//export ll_tty_set_mode
func ll_tty_set_mode(id C.uint64_t, mode C.int) C.int {
	return withTransport(id, func(t *libloop.Transport) error { return t.SetTTYMode(int(mode)) })
}

//export ll_tty_get_winsize
func ll_tty_get_winsize(id C.uint64_t, cols, rows *C.int) C.int {
	if cols == nil || rows == nil {
		return C.int(libloop.EINVAL)
	}
	return withTransport(id, func(t *libloop.Transport) error {
		c, r, err := t.WindowSize()
		if err == nil {
			*cols, *rows = C.int(c), C.int(r)
		}
		return err
	})
}

//export ll_tty_reset_mode
func ll_tty_reset_mode() C.int {
	return errCode(libloop.ResetTTYModes())
}
