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

//export ll_udp_open
func ll_udp_open(loop C.uint64_t, localHost *C.ll__cchar, localPort C.int, remoteHost *C.ll__cchar, remotePort C.int,
	flags C.int, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	return openOut(s, fn, arg, out, func() (*libloop.Transport, error) {
		return s.loop.OpenUDP(goString(localHost), int(localPort), goString(remoteHost), int(remotePort), int(flags), nil)
	})
}

//export ll_transport_sendto
func ll_transport_sendto(id C.uint64_t, data *C.ll__cvoid, n C.size_t, addr *C.ll__cvoid, addrlen C.uint32_t) C.int {
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
