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

// reverse runs getnameinfo on the sockaddr in sa (salen bytes) and returns
// "host\0service\0" in one malloc'd block (NULL with the EAI_* code in
// *rc and, for EAI_SYSTEM, errno in *sys_errno).
static char *reverse(const void *sa, uint32_t salen, int flags, int *rc, int *sys_errno) {
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    *rc = getnameinfo((const struct sockaddr *)sa, (socklen_t)salen, host, sizeof host, serv, sizeof serv, flags);
    *sys_errno = *rc == EAI_SYSTEM ? errno : 0;
    if (*rc != 0)
        return NULL;
    size_t hl = strlen(host), sl = strlen(serv);
    char *out = malloc(hl + sl + 2);
    if (out == NULL) {
        *rc = EAI_MEMORY;
        return NULL;
    }
    memcpy(out, host, hl + 1);
    memcpy(out + hl + 1, serv, sl + 1);
    return out;
}

static void free_block(uintptr_t p) { free((void *)p); }
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
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		// Copies, made once the call is accepted: the host's strings are
		// only valid during this call.
		h, sv := cStringCopy(host), cStringCopy(service)
		f, err := s.loop.RunInResolver(func() (uintptr, int) {
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

// maxSockaddr is sizeof(struct sockaddr_storage), the most getnameinfo reads.
const maxSockaddr = C.sizeof_struct_sockaddr_storage

//export ll_getnameinfo
func ll_getnameinfo(loop C.uint64_t, addr *C.ll__cvoid, addrlen C.uint32_t, flags C.int, out *C.uint64_t) C.int {
	if addr == nil || addrlen == 0 || addrlen > maxSockaddr {
		return C.int(libloop.EINVAL)
	}
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		// A copy, made once the call is accepted: the host's address is
		// only valid during this call.
		sa := C.malloc(C.size_t(addrlen))
		if sa == nil {
			return nil, libloop.ENOMEM
		}
		C.memcpy(sa, unsafe.Pointer(addr), C.size_t(addrlen))
		f, err := s.loop.RunInResolver(func() (uintptr, int) {
			defer C.free(sa)
			var rc, sysErrno C.int
			names := C.reverse(sa, addrlen, flags, &rc, &sysErrno)
			if names == nil {
				return 0, eaiCode(rc, sysErrno)
			}
			return uintptr(unsafe.Pointer(names)), 0
		})
		if err != nil {
			C.free(sa)
			return nil, err
		}
		f.SetFreeFunc(func(v uintptr) { C.free_block(C.uintptr_t(v)) })
		return f, nil
	})
}

func cStringCopy(p *C.ll__cchar) *C.char {
	if p == nil {
		return nil
	}
	return C.strdup((*C.char)(unsafe.Pointer(p)))
}
