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

// ll_udp_open_ex is ll_udp_open as a future (value: the transport id), so
// host names are resolved on the resolver pool. A future the host
// cancelled or released before the open completed closes the socket: no
// event reaches fn.
//
//export ll_udp_open_ex
func ll_udp_open_ex(loop C.uint64_t, opts *C.ll__cudp_options, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if opts == nil || !sizedStruct(unsafe.Pointer(opts), uintptr(opts.size), unsafe.Sizeof(*opts)) {
		return C.int(libloop.EINVAL)
	}
	o := libloop.UDPOptions{
		LocalHost:  goString(opts.local_host),
		LocalPort:  int(opts.local_port),
		RemoteHost: goString(opts.remote_host),
		RemotePort: int(opts.remote_port),
		Flags:      int(opts.flags),
	}
	fnAddr, argAddr := uintptr(unsafe.Pointer(fn)), uintptr(arg)
	return pendingFuture(loop, out, func(s *loopState, f *libloop.Future, finish func()) error {
		return s.loop.OpenUDPWith(o, nil, func(t *libloop.Transport, err error) {
			defer finish()
			if err != nil {
				failFuture(f, err)
				return
			}
			if f.Done() { // cancelled meanwhile: nobody would hear of it
				t.Refuse()
				return
			}
			if s.registerTransport(t, fnAddr, argAddr) == nil {
				t.Refuse()
				failFuture(f, libloop.ENOMEM)
				return
			}
			f.SetResult(uintptr(t.Tag), nil)
		})
	})
}

// ll_udp_sendmany is in cloop/udpsend.c (on Linux its fast path sends
// from C while the gate is open); this is its Go side, which reads the
// host's n ll_datagram records into the loop's scratch (C memory, not
// copied: the core copies only what it queues) and hands them to SendMany,
// so n datagrams cost one crossing: bad input, another thread, a closed
// transport, datagrams queued behind others, and what the fast path's
// sendmmsg would block on.
//
//export ll__udp_sendmany_go
func ll__udp_sendmany_go(id C.uint64_t, d *C.ll__cdatagram, n C.size_t, flags C.int) C.int {
	t, s, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	if flags != 0 || (d == nil && n > 0) || n > 1<<24 {
		return C.int(libloop.EINVAL)
	}
	if n == 0 {
		return errCode(t.SendMany(nil))
	}
	recs := unsafe.Slice(d, int(n))
	ds := s.dgrams[:0]
	for i := range recs {
		r := &recs[i]
		b, rc := cBytes(unsafe.Pointer(r.data), r.len)
		if rc != 0 {
			return rc
		}
		var a []byte
		if r.addr != nil {
			if r.addrlen == 0 || r.addrlen > 256 {
				return C.int(libloop.EINVAL)
			}
			a = unsafe.Slice((*byte)(unsafe.Pointer(r.addr)), int(r.addrlen))
		}
		ds = append(ds, libloop.OutDatagram{Data: b, Addr: a})
	}
	err := t.SendMany(ds)
	clear(ds)
	s.dgrams = ds[:0]
	return errCode(err)
}

// UDP socket options (libuv's uv_udp_set_*): each resolves the transport
// and returns the core's code (EINVAL for bad input, -errno from the
// kernel).

//export ll_udp_set_broadcast
func ll_udp_set_broadcast(id C.uint64_t, on C.int) C.int {
	return withTransport(id, func(t *libloop.Transport) error { return t.SetBroadcast(on != 0) })
}

//export ll_udp_set_ttl
func ll_udp_set_ttl(id C.uint64_t, ttl C.int) C.int {
	return withTransport(id, func(t *libloop.Transport) error { return t.SetTTL(int(ttl)) })
}

//export ll_udp_set_multicast_ttl
func ll_udp_set_multicast_ttl(id C.uint64_t, ttl C.int) C.int {
	return withTransport(id, func(t *libloop.Transport) error { return t.SetMulticastTTL(int(ttl)) })
}

//export ll_udp_set_multicast_loop
func ll_udp_set_multicast_loop(id C.uint64_t, on C.int) C.int {
	return withTransport(id, func(t *libloop.Transport) error { return t.SetMulticastLoop(on != 0) })
}

//export ll_udp_set_multicast_interface
func ll_udp_set_multicast_interface(id C.uint64_t, iface *C.ll__cchar) C.int {
	return withTransport(id, func(t *libloop.Transport) error { return t.SetMulticastInterface(goString(iface)) })
}

//export ll_udp_set_membership
func ll_udp_set_membership(id C.uint64_t, group, iface *C.ll__cchar, op C.int) C.int {
	if group == nil {
		return C.int(libloop.EINVAL)
	}
	return withTransport(id, func(t *libloop.Transport) error {
		return t.SetMembership(goString(group), goString(iface), int(op))
	})
}

//export ll_udp_set_source_membership
func ll_udp_set_source_membership(id C.uint64_t, group, iface, source *C.ll__cchar, op C.int) C.int {
	if group == nil || source == nil {
		return C.int(libloop.EINVAL)
	}
	return withTransport(id, func(t *libloop.Transport) error {
		return t.SetSourceMembership(goString(group), goString(iface), goString(source), int(op))
	})
}
