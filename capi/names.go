// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <errno.h>
#include <stdint.h>
#include "capi.h"

// resolve runs getaddrinfo with the given hints; on failure it returns the
// EAI_* code and, for EAI_SYSTEM, errno in *sys_errno.
static int resolve(const char *host, const char *service, int family, int socktype, int flags,
                   struct addrinfo **res, int *sys_errno) {
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = family;
    hints.ai_socktype = socktype;
    hints.ai_flags = flags;
    int rc = getaddrinfo(host, service, &hints, res);
    *sys_errno = rc == EAI_SYSTEM ? errno : 0;
    return rc;
}

static void free_addrinfo(uintptr_t p) { freeaddrinfo((struct addrinfo *)p); }
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// eaiCode maps a getaddrinfo failure to an ABI code.
func eaiCode(rc, sysErrno C.int) int {
	switch rc {
	case C.EAI_NONAME, C.EAI_AGAIN, C.EAI_FAIL:
		return int(libloop.ENONAME)
	case C.EAI_MEMORY:
		return int(libloop.ENOMEM)
	case C.EAI_SYSTEM:
		if sysErrno != 0 {
			return -int(sysErrno)
		}
	}
	return int(libloop.EINVAL)
}

//export ll_getaddrinfo
func ll_getaddrinfo(loop C.uint64_t, host, service *C.ll__cchar, family, socktype, flags C.int, out *C.uint64_t) C.int {
	if host == nil && service == nil {
		return C.int(libloop.EINVAL)
	}
	// Copies: the host's strings are only valid during this call.
	h, sv := cStringCopy(host), cStringCopy(service)
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		f, err := s.loop.RunInExecutor(func() (uintptr, int) {
			defer C.free(unsafe.Pointer(h))
			defer C.free(unsafe.Pointer(sv))
			var res *C.struct_addrinfo
			var sysErrno C.int
			rc := C.resolve(h, sv, family, socktype, flags, &res, &sysErrno)
			if rc != 0 {
				return 0, eaiCode(rc, sysErrno)
			}
			return uintptr(unsafe.Pointer(res)), 0
		})
		if err != nil {
			C.free(unsafe.Pointer(h))
			C.free(unsafe.Pointer(sv))
			return nil, err
		}
		f.SetFreeFunc(func(v uintptr) { C.free_addrinfo(C.uintptr_t(v)) })
		return f, nil
	})
}

func cStringCopy(p *C.ll__cchar) *C.char {
	if p == nil {
		return nil
	}
	return C.strdup((*C.char)(unsafe.Pointer(p)))
}
