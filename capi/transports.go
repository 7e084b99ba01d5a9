// SPDX-License-Identifier: MIT

package main

/*
#include <stdlib.h>
#include <string.h>
#include "capi.h"
*/
import "C"

import (
	"time"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// getTransport resolves a transport id for a call on its loop's thread.
func getTransport(id C.uint64_t) (*libloop.Transport, *loopState, C.int) {
	obj, ok := ids.get(uint64(id), kindTransport)
	if !ok {
		return nil, nil, C.int(libloop.EBADHANDLE)
	}
	t := obj.(*libloop.Transport)
	s := t.Loop().Data.(*loopState)
	if rc := s.enter(s.debugCheck()); rc != 0 {
		return nil, nil, rc
	}
	return t, s, 0
}

// withTransport runs op on a resolved transport and returns its error code
// (the write fast path's flag follows the transport's state by itself:
// loopState.DirectChanged, events.go).
func withTransport(id C.uint64_t, op func(*libloop.Transport) error) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	return errCode(op(t))
}

// failFuture fails f with err's code and its ll_strerror text.
func failFuture(f *libloop.Future, err error) {
	code := libloop.Code(err)
	if !f.Done() {
		f.SetException(code, libloop.Errno(code).Message(), 0, nil)
	}
}

// pendingFuture makes a future for an operation that completes later. It
// holds an extra reference until finish runs, so a host may release its
// id early without the outcome landing in a disposed future.
func pendingFuture(loop C.uint64_t, out *C.uint64_t, start func(s *loopState, f *libloop.Future, finish func()) error) C.int {
	return makeFuture(loop, out, func(s *loopState) (*libloop.Future, error) {
		f, err := s.loop.NewFuture()
		if err != nil {
			return nil, err
		}
		f.Retain()
		if err := start(s, f, f.Release); err != nil {
			f.Release()
			f.Release()
			return nil, err
		}
		return f, nil
	})
}

// dialFuture is ll_tcp_connect and ll_unix_connect: the future's value is
// the new transport's id, given with the host's protocol. The connect
// belongs to the future (the core's DialTCPFor): cancelling it aborts the
// connect, which then makes no transport.
func dialFuture(loop C.uint64_t, out *C.uint64_t, fn C.ll_protocol_fn, arg unsafe.Pointer,
	dial func(s *loopState, f *libloop.Future, done libloop.DialFunc) error) C.int {
	fnAddr, argAddr := uintptr(unsafe.Pointer(fn)), uintptr(arg)
	return pendingFuture(loop, out, func(s *loopState, f *libloop.Future, finish func()) error {
		return dial(s, f, func(t *libloop.Transport, err error) {
			defer finish()
			if err != nil {
				failFuture(f, err)
				return
			}
			if s.registerTransport(t, fnAddr, argAddr) == nil {
				t.Refuse()
				failFuture(f, libloop.ENOMEM)
				return
			}
			if !f.Done() {
				f.SetResult(uintptr(t.Tag), nil)
			}
		})
	})
}

//export ll_tcp_connect
func ll_tcp_connect(loop C.uint64_t, host *C.ll__cchar, port C.int, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if host == nil {
		return C.int(libloop.EINVAL)
	}
	h := goString(host)
	return dialFuture(loop, out, fn, arg, func(s *loopState, f *libloop.Future, done libloop.DialFunc) error {
		return s.loop.DialTCPFor(f, h, int(port), libloop.DialOptions{}, nil, done)
	})
}

//export ll_unix_connect
func ll_unix_connect(loop C.uint64_t, path *C.ll__cchar, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if path == nil {
		return C.int(libloop.EINVAL)
	}
	p := goString(path)
	return dialFuture(loop, out, fn, arg, func(s *loopState, f *libloop.Future, done libloop.DialFunc) error {
		return s.loop.DialUnixFor(f, p, nil, done)
	})
}

//export ll_transport_open
func ll_transport_open(loop C.uint64_t, fd C.int, kind C.int, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	s, rc := getLoop(loop)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	if kind < C.LL_STREAM || kind > C.LL_DATAGRAM {
		return C.int(libloop.EINVAL)
	}
	return openOut(s, fn, arg, out, func() (*libloop.Transport, error) {
		return s.loop.OpenTransport(int(fd), libloop.TransportKind(kind), nil)
	})
}

// openOut is the shape of a synchronous transport constructor: the id and
// protocol slot are claimed first, so a refusal for want of them (LL_ENOMEM)
// has opened nothing, and an fd the host passed stays the host's.
func openOut(s *loopState, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t,
	open func() (*libloop.Transport, error)) C.int {
	c, ok := s.claimSlot()
	if !ok {
		return C.int(libloop.ENOMEM)
	}
	t, err := open()
	if err != nil {
		s.unclaim(c)
		return errCode(err)
	}
	bindTransport(c, t, uintptr(unsafe.Pointer(fn)), uintptr(arg))
	*out = C.uint64_t(t.Tag)
	return 0
}

//export ll_transport_set_protocol
func ll_transport_set_protocol(id C.uint64_t, fn C.ll_protocol_fn, arg unsafe.Pointer) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	slot := protoOf(t)
	slot.fn, slot.arg = C.uintptr_t(uintptr(unsafe.Pointer(fn))), C.uintptr_t(uintptr(arg))
	return 0
}

// cBytes views C memory as a byte slice for the duration of a call.
func cBytes(p unsafe.Pointer, n C.size_t) ([]byte, C.int) {
	if n == 0 {
		return nil, 0
	}
	if p == nil || n > 1<<40 {
		return nil, C.int(libloop.EINVAL)
	}
	return unsafe.Slice((*byte)(p), int(n)), 0
}

// ll_transport_write is in cloop/send.c (its fast path sends from C); its Go
// side keeps SPEC's contract: 0 or an error, LL_ECLOSED once close or abort
// was called; once the transport was lost otherwise (the peer, an I/O
// error) the core drops the bytes and it is 0.
//
//export ll__transport_write_go
func ll__transport_write_go(id C.uint64_t, data unsafe.Pointer, n C.size_t) C.int {
	b, rc := cBytes(data, n)
	if rc != 0 {
		return rc
	}
	return withTransport(id, func(t *libloop.Transport) error {
		if t.IsClosing() && !t.Lost() {
			return libloop.ECLOSED
		}
		return t.Write(b)
	})
}

// ll_transport_write_async is asyncio's transport.write for bindings: a
// write while close() flushes joins the buffer (asyncio's transports take
// it; sslproto sends close_notify that way), and the result is 1 when the
// buffer is now over the high-water mark, so pause_writing can run inside
// write() as asyncio's does (LL_PAUSE_WRITING only comes after the call).
//
//export ll_transport_write_async
func ll_transport_write_async(id C.uint64_t, data *C.ll__cvoid, n C.size_t) C.int {
	rc, _ := writeAsync(id, data, n)
	return rc
}

// ll_transport_write_async_size is in cloop/send.c (its fast path sends from
// C during the batch sink's call); its Go side is ll_transport_write_async
// that also stores the write buffer's size after the call in *buffered
// (when not NULL): 0 says the kernel holds every byte written so far, so a
// binding that gathers a batch's small writes knows the buffer is empty
// without a second call.
//
//export ll__transport_write_async_size_go
func ll__transport_write_async_size_go(id C.uint64_t, data *C.ll__cvoid, n C.size_t, buffered *C.size_t) C.int {
	rc, t := writeAsync(id, data, n)
	if buffered != nil {
		*buffered = 0
		if t != nil {
			*buffered = C.size_t(t.WriteBufferSize())
		}
	}
	return rc
}

// writeAsync is asyncio's write: the result code, and the transport when
// the call reached it (nil for LL_EINVAL and LL_EBADHANDLE). A lost
// transport's write is LL_ECLOSED here, not 0 as ll_transport_write's: the
// binding drops it and counts it itself (asyncio's write warns after a few
// and its is_closing turns true), which it can only do if told.
func writeAsync(id C.uint64_t, data *C.ll__cvoid, n C.size_t) (C.int, *libloop.Transport) {
	b, rc := cBytes(unsafe.Pointer(data), n)
	if rc != 0 {
		return rc, nil
	}
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc, nil
	}
	if t.Lost() {
		return C.int(libloop.ECLOSED), t
	}
	err := t.Write(b)
	if err != nil {
		return errCode(err), t
	}
	return boolInt(t.WritePaused()), t
}

//export ll_transport_write_eof
func ll_transport_write_eof(id C.uint64_t) C.int {
	return withTransport(id, (*libloop.Transport).WriteEOF)
}

//export ll_transport_can_write_eof
func ll_transport_can_write_eof(id C.uint64_t) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	return boolInt(t.CanWriteEOF())
}

//export ll_transport_close
func ll_transport_close(id C.uint64_t) C.int {
	return withTransport(id, (*libloop.Transport).Close)
}

//export ll_transport_abort
func ll_transport_abort(id C.uint64_t) C.int {
	return withTransport(id, (*libloop.Transport).Abort)
}

//export ll_transport_pause_reading
func ll_transport_pause_reading(id C.uint64_t) C.int {
	return withTransport(id, (*libloop.Transport).PauseReading)
}

//export ll_transport_resume_reading
func ll_transport_resume_reading(id C.uint64_t) C.int {
	return withTransport(id, (*libloop.Transport).ResumeReading)
}

//export ll_transport_is_reading
func ll_transport_is_reading(id C.uint64_t) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	return boolInt(t.IsReading())
}

//export ll_transport_is_closing
func ll_transport_is_closing(id C.uint64_t) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	return boolInt(t.IsClosing())
}

//export ll_transport_set_write_buffer_limits
func ll_transport_set_write_buffer_limits(id C.uint64_t, high, low C.size_t) C.int {
	if high > 1<<62 || low > 1<<62 {
		return C.int(libloop.EINVAL)
	}
	return withTransport(id, func(t *libloop.Transport) error { return t.SetWriteBufferLimits(int(high), int(low)) })
}

//export ll_transport_get_write_buffer_size
func ll_transport_get_write_buffer_size(id C.uint64_t, out *C.size_t) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	*out = C.size_t(t.WriteBufferSize())
	return 0
}

//export ll_transport_fd
func ll_transport_fd(id C.uint64_t) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	if fd := t.FD(); fd >= 0 {
		return C.int(fd)
	}
	return C.int(libloop.ECLOSED)
}

// copySockaddr copies raw to (addr, *n) as getsockname does: truncated to
// the room, *n set to the full length.
func copySockaddr(raw []byte, err error, addr unsafe.Pointer, n *C.uint32_t) C.int {
	if err != nil {
		return errCode(err)
	}
	if room := int(*n); room > 0 && addr != nil {
		C.memcpy(addr, unsafe.Pointer(&raw[0]), C.size_t(min(room, len(raw))))
	}
	*n = C.uint32_t(len(raw))
	return 0
}

//export ll_transport_sockname
func ll_transport_sockname(id C.uint64_t, addr unsafe.Pointer, n *C.uint32_t) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	if n == nil {
		return C.int(libloop.EINVAL)
	}
	raw, err := t.SockName()
	return copySockaddr(raw, err, addr, n)
}

//export ll_transport_peername
func ll_transport_peername(id C.uint64_t, addr unsafe.Pointer, n *C.uint32_t) C.int {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	if n == nil {
		return C.int(libloop.EINVAL)
	}
	raw, err := t.PeerName()
	return copySockaddr(raw, err, addr, n)
}

//export ll_transport_sendfile
func ll_transport_sendfile(id C.uint64_t, fd C.int, offset, count C.int64_t, out *C.uint64_t) C.int {
	t, s, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	return pendingFuture(C.uint64_t(s.id), out, func(s *loopState, f *libloop.Future, finish func()) error {
		return t.Sendfile(int(fd), int64(offset), int64(count), func(sent int64, err error) {
			defer finish()
			if err != nil {
				// The payload is what went out before the failure: the
				// host moves the file's offset past it (asyncio does).
				if !f.Done() {
					code := libloop.Code(err)
					f.SetException(code, libloop.Errno(code).Message(), uintptr(sent), nil)
				}
			} else if !f.Done() {
				f.SetResult(uintptr(sent), nil)
			}
		})
	})
}

//export ll_tcp_connect_ex
func ll_tcp_connect_ex(loop C.uint64_t, opts *C.ll__cconnect_options, fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if opts == nil || !sizedStruct(unsafe.Pointer(opts), uintptr(opts.size), unsafe.Sizeof(*opts)) {
		return C.int(libloop.EINVAL)
	}
	delay := float64(opts.happy_eyeballs_delay)
	if opts.host == nil || !(delay >= 0 && delay <= maxDelaySeconds) {
		return C.int(libloop.EINVAL)
	}
	o := libloop.DialOptions{
		LocalHost:          goString(opts.local_host),
		LocalPort:          int(opts.local_port),
		HappyEyeballsDelay: time.Duration(delay * float64(time.Second)),
		Interleave:         int(opts.interleave),
		ServerName:         goString(opts.server_name),
	}
	if opts.tls != 0 {
		cfg, rc := getTLSConfig(opts.tls)
		if rc != 0 {
			return rc
		}
		o.TLS = cfg
	}
	h, port := goString(opts.host), int(opts.port)
	return dialFuture(loop, out, fn, arg, func(s *loopState, f *libloop.Future, done libloop.DialFunc) error {
		return s.loop.DialTCPFor(f, h, port, o, nil, done)
	})
}

// maxDelaySeconds bounds a happy-eyeballs delay (a day): larger values
// would overflow time.Duration and mean nothing for a connect.
const maxDelaySeconds = 86400
