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

// listen gives a new server an id; each accepted connection gets an id
// and the server's protocol before its LL_CONNECTION_MADE is queued.
func listen(loop C.uint64_t, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t,
	open func(*loopState) (*libloop.Server, error)) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	// The id first: a listen refused for want of ids has bound nothing.
	id := ids.reserveID()
	if id == 0 {
		return C.int(libloop.ENOMEM)
	}
	srv, err := open(s)
	if err != nil {
		ids.remove(id)
		return errCode(err)
	}
	publishServer(s, id, srv, fn, arg)
	*out = C.uint64_t(id)
	return 0
}

// publishServer fills a reserved id with srv and gives its accepted
// connections ids and the host's protocol.
func publishServer(s *loopState, id uint64, srv *libloop.Server, fn C.ll_protocol_fn, arg unsafe.Pointer) {
	fnAddr, argAddr := uintptr(unsafe.Pointer(fn)), uintptr(arg)
	srv.OnAccept = func(t *libloop.Transport) {
		if s.registerTransport(t, fnAddr, argAddr) == nil {
			t.Refuse()
		}
	}
	ids.fill(id, kindServer, srv)
	srv.Tag = id
	s.netInit().live[id] = nil
}

// ll_tcp_listen_ex is ll_tcp_listen / ll_tls_listen as a future (value: the
// server id), so a host name is resolved on the resolver pool. A future
// the host cancelled or released before the listen completed closes the
// server it would have carried.
//
//export ll_tcp_listen_ex
func ll_tcp_listen_ex(loop C.uint64_t, opts *C.ll__clisten_options, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if opts == nil || !sizedStruct(unsafe.Pointer(opts), uintptr(opts.size), unsafe.Sizeof(*opts)) {
		return C.int(libloop.EINVAL)
	}
	o := libloop.ListenOptions{Backlog: int(opts.backlog), Flags: int(opts.flags)}
	if opts.tls != 0 {
		cfg, rc := getTLSConfig(opts.tls)
		if rc != 0 {
			return rc
		}
		o.TLS = cfg
	}
	h, port := goString(opts.host), int(opts.port)
	return pendingFuture(loop, out, func(s *loopState, f *libloop.Future, finish func()) error {
		return s.loop.ListenTCPWith(h, port, o, nil, func(srv *libloop.Server, err error) {
			defer finish()
			if err != nil {
				failFuture(f, err)
				return
			}
			if f.Done() { // cancelled meanwhile: nobody will release it
				srv.Close()
				return
			}
			id := ids.reserveID()
			if id == 0 {
				srv.Close()
				failFuture(f, libloop.ENOMEM)
				return
			}
			publishServer(s, id, srv, fn, arg)
			f.SetResult(uintptr(id), nil)
		})
	})
}

//export ll_tcp_listen
func ll_tcp_listen(loop C.uint64_t, host *C.ll__cchar, port, backlog, flags C.int, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	h := ""
	if host != nil {
		h = goString(host)
	}
	return listen(loop, fn, arg, out, func(s *loopState) (*libloop.Server, error) {
		return s.loop.ListenTCP(h, int(port), int(backlog), int(flags), nil)
	})
}

//export ll_unix_listen
func ll_unix_listen(loop C.uint64_t, path *C.ll__cchar, backlog C.int, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if path == nil {
		return C.int(libloop.EINVAL)
	}
	p := goString(path)
	return listen(loop, fn, arg, out, func(s *loopState) (*libloop.Server, error) {
		return s.loop.ListenUnix(p, int(backlog), nil)
	})
}

//export ll_server_open
func ll_server_open(loop C.uint64_t, fd C.int, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	return listen(loop, fn, arg, out, func(s *loopState) (*libloop.Server, error) {
		return s.loop.ServeFD(int(fd), nil)
	})
}

// getServer resolves a server id for a call on its loop's thread.
func getServer(id C.uint64_t) (*libloop.Server, *loopState, C.int) {
	obj, ok := ids.get(uint64(id), kindServer)
	if !ok {
		return nil, nil, C.int(libloop.EBADHANDLE)
	}
	srv := obj.(*libloop.Server)
	s := srv.Loop().Data.(*loopState)
	if rc := s.enter(s.debugCheck()); rc != 0 {
		return nil, nil, rc
	}
	return srv, s, 0
}

//export ll_server_close
func ll_server_close(id C.uint64_t) C.int {
	srv, _, rc := getServer(id)
	if rc != 0 {
		return rc
	}
	srv.Close()
	return 0
}

// releaseServer is ll_release for a server: close it and end its id.
func releaseServer(id C.uint64_t) C.int {
	srv, s, rc := getServer(id)
	if rc != 0 {
		return rc
	}
	srv.Close()
	if ids.remove(uint64(id)) && s.net != nil {
		delete(s.net.live, uint64(id))
	}
	return 0
}

//export ll_server_port
func ll_server_port(id C.uint64_t, port *C.int) C.int {
	srv, _, rc := getServer(id)
	if rc != 0 {
		return rc
	}
	if port == nil {
		return C.int(libloop.EINVAL)
	}
	p, err := srv.Port()
	if err != nil {
		return errCode(err)
	}
	*port = C.int(p)
	return 0
}

//export ll_server_num_sockets
func ll_server_num_sockets(id C.uint64_t) C.int {
	srv, _, rc := getServer(id)
	if rc != 0 {
		return rc
	}
	return C.int(srv.NumSockets())
}

//export ll_server_sockname
func ll_server_sockname(id C.uint64_t, i C.size_t, addr unsafe.Pointer, n *C.uint32_t) C.int {
	srv, _, rc := getServer(id)
	if rc != 0 {
		return rc
	}
	if n == nil || i > 1<<20 {
		return C.int(libloop.EINVAL)
	}
	raw, err := srv.SockName(int(i))
	return copySockaddr(raw, err, addr, n)
}
