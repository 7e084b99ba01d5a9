// SPDX-License-Identifier: MIT

package main

/*
#include <string.h>
#include "capi.h"
*/
import "C"

import (
	"crypto/tls"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

//export ll_tls_connect
func ll_tls_connect(loop C.uint64_t, host *C.ll__cchar, port C.int, cfgID C.uint64_t, serverName *C.ll__cchar,
	fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	if host == nil {
		return C.int(libloop.EINVAL)
	}
	cfg, rc := getTLSConfig(cfgID)
	if rc != 0 {
		return rc
	}
	h, name := goString(host), goString(serverName)
	return dialFuture(loop, out, fn, arg, func(s *loopState, f *libloop.Future, done libloop.DialFunc) error {
		return s.loop.DialTCPFor(f, h, int(port), libloop.DialOptions{TLS: cfg, ServerName: name}, nil, done)
	})
}

//export ll_tls_listen
func ll_tls_listen(loop C.uint64_t, host *C.ll__cchar, port, backlog, flags C.int, cfgID C.uint64_t,
	fn C.ll_protocol_fn, arg unsafe.Pointer, out *C.uint64_t) C.int {
	cfg, rc := getTLSConfig(cfgID)
	if rc != 0 {
		return rc
	}
	h := goString(host)
	return listen(loop, fn, arg, out, func(s *loopState) (*libloop.Server, error) {
		return s.loop.ListenTLS(h, int(port), int(backlog), int(flags), cfg, nil)
	})
}

//export ll_tls_server_open
func ll_tls_server_open(loop C.uint64_t, fd C.int, cfgID C.uint64_t, fn C.ll_protocol_fn, arg unsafe.Pointer,
	out *C.uint64_t) C.int {
	cfg, rc := getTLSConfig(cfgID)
	if rc != 0 {
		return rc
	}
	return listen(loop, fn, arg, out, func(s *loopState) (*libloop.Server, error) {
		return s.loop.ServeFDTLS(int(fd), cfg, nil)
	})
}

//export ll_transport_start_tls
func ll_transport_start_tls(id C.uint64_t, cfgID C.uint64_t, serverSide C.int, serverName *C.ll__cchar, out *C.uint64_t) C.int {
	t, s, rc := getTransport(id)
	if rc != 0 {
		return rc
	}
	cfg, rc := getTLSConfig(cfgID)
	if rc != 0 {
		return rc
	}
	if serverSide != 0 && serverSide != 1 {
		return C.int(libloop.EINVAL)
	}
	name := goString(serverName)
	tag := t.Tag
	rc = pendingFuture(C.uint64_t(s.id), out, func(s *loopState, f *libloop.Future, finish func()) error {
		return t.StartTLS(cfg, serverSide == 1, name, func(err error) {
			defer finish()
			if err != nil {
				failFuture(f, err)
			} else if !f.Done() {
				f.SetResult(uintptr(tag), nil)
			}
		})
	})
	return rc
}

// tlsState resolves a transport and what its handshake settled.
func tlsState(id C.uint64_t) (*libloop.Transport, tls.ConnectionState, C.int) {
	t, _, rc := getTransport(id)
	if rc != 0 {
		return nil, tls.ConnectionState{}, rc
	}
	st, err := t.TLSState()
	if err != nil {
		return nil, st, errCode(err)
	}
	return t, st, 0
}

// copyOut copies b to (buf, room) as snprintf does for a string (NUL
// ended when text, truncated to fit) and returns b's full length.
func copyOut(b []byte, buf unsafe.Pointer, room C.size_t, text bool) C.int {
	if buf != nil && room > 0 {
		n := min(int(room), len(b))
		if text {
			n = min(int(room)-1, len(b))
			*(*byte)(unsafe.Add(buf, n)) = 0
		}
		if n > 0 {
			C.memcpy(buf, unsafe.Pointer(&b[0]), C.size_t(n))
		}
	}
	return C.int(len(b))
}

//export ll_tls_version
func ll_tls_version(id C.uint64_t) C.int {
	_, st, rc := tlsState(id)
	if rc != 0 {
		return rc
	}
	return C.int(st.Version)
}

//export ll_tls_cipher
func ll_tls_cipher(id C.uint64_t, buf *C.char, room C.size_t) C.int {
	_, st, rc := tlsState(id)
	if rc != 0 {
		return rc
	}
	return copyOut([]byte(tls.CipherSuiteName(st.CipherSuite)), unsafe.Pointer(buf), room, true)
}

//export ll_tls_alpn
func ll_tls_alpn(id C.uint64_t, buf *C.char, room C.size_t) C.int {
	_, st, rc := tlsState(id)
	if rc != 0 {
		return rc
	}
	return copyOut([]byte(st.NegotiatedProtocol), unsafe.Pointer(buf), room, true)
}

//export ll_tls_peer_cert
func ll_tls_peer_cert(id C.uint64_t, index C.size_t, buf unsafe.Pointer, room C.size_t) C.int {
	_, st, rc := tlsState(id)
	if rc != 0 {
		return rc
	}
	if index >= C.size_t(len(st.PeerCertificates)) {
		return 0
	}
	return copyOut(st.PeerCertificates[index].Raw, buf, room, false)
}

//export ll_tls_verify_result
func ll_tls_verify_result(id C.uint64_t) C.int {
	t, _, rc := tlsState(id)
	if rc != 0 {
		return rc
	}
	code, err := t.TLSVerifyResult()
	if err != nil {
		return errCode(err)
	}
	return C.int(code)
}

//export ll_tls_resumed
func ll_tls_resumed(id C.uint64_t) C.int {
	_, st, rc := tlsState(id)
	if rc != 0 {
		return rc
	}
	return boolInt(st.DidResume)
}
