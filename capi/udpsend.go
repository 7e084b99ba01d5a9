// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"unsafe"

	"github.com/libloop/libloop/libloop"
	"golang.org/x/sys/unix"
)

// ll_transport_sendto is in cloop/udpsend.c (its fast path sends from C);
// this is its Go side, every case as before the fast path: bad input,
// another thread, a closed transport, a datagram queued behind others,
// and a would-block of the fast path's try (SendTo tries it once more and
// queues a copy).
//
//export ll__transport_sendto_go
func ll__transport_sendto_go(id C.uint64_t, data *C.ll__cvoid, n C.size_t, addr *C.ll__cvoid, addrlen C.uint32_t) C.int {
	b, rc := cBytes(unsafe.Pointer(data), n)
	if rc != 0 {
		return rc
	}
	var a []byte
	if addr != nil {
		if addrlen == 0 || addrlen > 256 {
			return C.int(libloop.EINVAL)
		}
		a = unsafe.Slice((*byte)(unsafe.Pointer(addr)), int(addrlen))
	}
	return withTransport(id, func(t *libloop.Transport) error { return t.SendTo(b, a) })
}

// ll__udp_send_failed_go reports the error errnum of a datagram the fast
// path (cloop/udpsend.c) sent on transport id while its gate was open, as
// SendTo reports its own send's error: one error_received, and 0. The
// datagram is not tried again (the error may have been a one-shot).
//
//export ll__udp_send_failed_go
func ll__udp_send_failed_go(id C.uint64_t, errnum C.int) C.int {
	return withTransport(id, func(t *libloop.Transport) error { return t.HostSendFailed(unix.Errno(errnum)) })
}
