// SPDX-License-Identifier: MIT

package main

/*
#include "capi.h"
*/
import "C"

import (
	"math"
	"time"
	"unsafe"

	"github.com/libloop/libloop/libloop"
)

// kindTLSConfig tags ll_tls_config ids. A config belongs to no loop: its
// calls are safe from any thread (libloop.TLSConfig locks).
const kindTLSConfig kind = 19

// getTLSConfig resolves a config id.
func getTLSConfig(id C.uint64_t) (*libloop.TLSConfig, C.int) {
	obj, ok := ids.get(uint64(id), kindTLSConfig)
	if !ok {
		return nil, C.int(libloop.EBADHANDLE)
	}
	return obj.(*libloop.TLSConfig), 0
}

// withConfig runs op on a resolved config and returns its error code.
func withConfig(id C.uint64_t, op func(*libloop.TLSConfig) error) C.int {
	c, rc := getTLSConfig(id)
	if rc != 0 {
		return rc
	}
	return errCode(op(c))
}

// releaseTLSConfig is ll_release for a config: connections made with it
// keep what they took from it.
func releaseTLSConfig(id C.uint64_t) C.int {
	if _, ok := ids.take(uint64(id)); !ok {
		return C.int(libloop.EBADHANDLE)
	}
	ids.remove(uint64(id))
	return 0
}

//export ll_tls_config_new
func ll_tls_config_new(out *C.uint64_t) C.int {
	if out == nil {
		return C.int(libloop.EINVAL)
	}
	id := ids.add(kindTLSConfig, libloop.NewTLSConfig())
	if id == 0 {
		return C.int(libloop.ENOMEM)
	}
	*out = C.uint64_t(id)
	return 0
}

// pathArg copies a required C string (NULL or "": LL_EINVAL).
func pathArg(p *C.ll__cchar) (string, C.int) {
	if p == nil || *p == 0 {
		return "", C.int(libloop.EINVAL)
	}
	return goString(p), 0
}

//export ll_tls_config_set_cert_pem
func ll_tls_config_set_cert_pem(id C.uint64_t, cert *C.ll__cvoid, certLen C.size_t, key *C.ll__cvoid, keyLen C.size_t) C.int {
	cb, rc := cBytes(unsafe.Pointer(cert), certLen)
	if rc != 0 {
		return rc
	}
	kb, rc := cBytes(unsafe.Pointer(key), keyLen)
	if rc != 0 {
		return rc
	}
	if len(cb) == 0 || len(kb) == 0 {
		return C.int(libloop.EINVAL)
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetCertificatePEM(cb, kb) })
}

//export ll_tls_config_load_cert_file
func ll_tls_config_load_cert_file(id C.uint64_t, certPath, keyPath *C.ll__cchar) C.int {
	cp, rc := pathArg(certPath)
	if rc != 0 {
		return rc
	}
	kp, rc := pathArg(keyPath)
	if rc != 0 {
		return rc
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.LoadCertificateFiles(cp, kp) })
}

//export ll_tls_config_add_ca_pem
func ll_tls_config_add_ca_pem(id C.uint64_t, pem *C.ll__cvoid, n C.size_t) C.int {
	b, rc := cBytes(unsafe.Pointer(pem), n)
	if rc != 0 {
		return rc
	}
	if len(b) == 0 {
		return C.int(libloop.EINVAL)
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.AddCAPEM(b) })
}

//export ll_tls_config_load_ca_file
func ll_tls_config_load_ca_file(id C.uint64_t, path *C.ll__cchar) C.int {
	p, rc := pathArg(path)
	if rc != 0 {
		return rc
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.LoadCAFile(p) })
}

//export ll_tls_config_load_ca_dir
func ll_tls_config_load_ca_dir(id C.uint64_t, path *C.ll__cchar) C.int {
	p, rc := pathArg(path)
	if rc != 0 {
		return rc
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.LoadCADir(p) })
}

//export ll_tls_config_use_system_ca
func ll_tls_config_use_system_ca(id C.uint64_t) C.int {
	return withConfig(id, (*libloop.TLSConfig).UseSystemCAs)
}

//export ll_tls_config_set_verify
func ll_tls_config_set_verify(id C.uint64_t, on C.int) C.int {
	if on != 0 && on != 1 {
		return C.int(libloop.EINVAL)
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetVerify(on == 1) })
}

//export ll_tls_config_set_server_name
func ll_tls_config_set_server_name(id C.uint64_t, name *C.ll__cchar) C.int {
	n := goString(name)
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetServerName(n) })
}

//export ll_tls_config_set_client_auth
func ll_tls_config_set_client_auth(id C.uint64_t, mode C.int) C.int {
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetClientAuth(libloop.TLSClientAuth(mode)) })
}

//export ll_tls_config_set_alpn
func ll_tls_config_set_alpn(id C.uint64_t, protos *C.ll__cstr, n C.size_t) C.int {
	if n > 64 || (n > 0 && protos == nil) {
		return C.int(libloop.EINVAL)
	}
	list := make([]string, 0, int(n))
	for _, p := range unsafe.Slice(protos, int(n)) {
		if p == nil {
			return C.int(libloop.EINVAL)
		}
		list = append(list, C.GoString(p))
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetALPN(list) })
}

//export ll_tls_config_set_versions
func ll_tls_config_set_versions(id C.uint64_t, lo, hi C.int) C.int {
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetVersions(int(lo), int(hi)) })
}

//export ll_tls_config_set_session_cache
func ll_tls_config_set_session_cache(id C.uint64_t, n C.size_t) C.int {
	if n > 1<<20 {
		return C.int(libloop.EINVAL)
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetSessionCache(int(n)) })
}

// seconds converts a timeout in seconds (0: the default; at most a day).
func seconds(s C.double) (time.Duration, bool) {
	f := float64(s)
	if math.IsNaN(f) || f < 0 || f > 86400 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

//export ll_tls_config_set_timeouts
func ll_tls_config_set_timeouts(id C.uint64_t, handshake, shutdown C.double) C.int {
	hs, ok1 := seconds(handshake)
	sd, ok2 := seconds(shutdown)
	if !ok1 || !ok2 {
		return C.int(libloop.EINVAL)
	}
	return withConfig(id, func(c *libloop.TLSConfig) error { return c.SetTimeouts(hs, sd) })
}
