// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include "capi.h"
*/
import "C"

import (
	"sync"

	"github.com/libloop/libloop/libloop"
)

// cstrings caches the C copies of the static strings we hand out, so
// ll_strerror and friends return storage that lives as long as the process.
var cstrings sync.Map // string -> *C.char

func staticCString(s string) *C.char {
	if p, ok := cstrings.Load(s); ok {
		return p.(*C.char)
	}
	p, loaded := cstrings.LoadOrStore(s, C.CString(s))
	if loaded {
		// Lost a race: keep the stored copy (the extra one is a few bytes, once).
		return p.(*C.char)
	}
	return p.(*C.char)
}

// ll__strerror and ll__err_name describe -errno and unknown codes for
// capi/strings.c, which answers the library's own codes from LL_ERRNO_MAP.
//
//export ll__strerror
func ll__strerror(code C.int) *C.char { return staticCString(libloop.Errno(code).Message()) }

//export ll__err_name
func ll__err_name(code C.int) *C.char { return staticCString(libloop.Errno(code).Name()) }

// errCode turns a core error into a C return code.
func errCode(err error) C.int { return C.int(libloop.Code(err)) }
