// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// TLS versions and client-certificate policies (include/libloop/tls.h).
const (
	TLS12 = 771 // LL_TLS_1_2 (0x0303, as on the wire)
	TLS13 = 772 // LL_TLS_1_3 (0x0304)

	TLSClientNone    = 0 // LL_TLS_CLIENT_NONE: ask clients for no certificate
	TLSClientRequest = 1 // LL_TLS_CLIENT_REQUEST: ask; one that is sent must verify
	TLSClientRequire = 2 // LL_TLS_CLIENT_REQUIRE: require one that verifies
)

// TLSConfig is an ll_tls_config: certificates, trust, verification, ALPN,
// versions, resumption and timeouts for TLS connections. Safe to use from
// any goroutine; Release it when no new connection needs it.
type TLSConfig struct {
	lib *Lib
	id  uint64
}

// NewTLSConfig makes a config with the library's defaults (verify against
// the system CAs, TLS 1.2 and 1.3, resumption on, timeouts 60 s / 30 s).
func (lib *Lib) NewTLSConfig() (*TLSConfig, error) {
	id, err := outCall(func(out unsafe.Pointer) int32 { return lib.Raw.TLSConfigNew(out) })
	if err != nil {
		return nil, err
	}
	return &TLSConfig{lib: lib, id: id}, nil
}

// ID returns the ll_tls_config id (0 after Release).
func (c *TLSConfig) ID() uint64 { return c.id }

// Release ends the config's id; connections made with it are not affected.
func (c *TLSConfig) Release() error {
	err := check(c.lib.Raw.Release(c.id))
	c.id = 0
	return err
}

// withBytes passes b to fn as C memory.
func withBytes(b []byte, fn func(p unsafe.Pointer, n uintptr) int32) error {
	if len(b) == 0 {
		return check(fn(nil, 0))
	}
	cb, err := cCopy(b)
	if err != nil {
		return err
	}
	defer cb.Free()
	return check(fn(cb.Ptr(), uintptr(len(b))))
}

// withStrings passes strs to fn as C strings (a nil pointer for "" when
// nullEmpty).
func withStrings(strs []string, nullEmpty bool, fn func(ps []unsafe.Pointer) int32) error {
	ps := make([]unsafe.Pointer, len(strs))
	for i, s := range strs {
		if s == "" && nullEmpty {
			continue
		}
		cs, err := NewCString(s)
		if err != nil {
			return err
		}
		defer cs.Free()
		ps[i] = cs.Ptr()
	}
	return check(fn(ps))
}

// SetCertificatePEM sets our certificate chain (leaf first) and key, PEM.
func (c *TLSConfig) SetCertificatePEM(cert, key []byte) error {
	if len(cert) == 0 || len(key) == 0 {
		return EINVAL
	}
	cb, err := cCopy(cert)
	if err != nil {
		return err
	}
	defer cb.Free()
	kb, err := cCopy(key)
	if err != nil {
		return err
	}
	defer kb.Free()
	return check(c.lib.Raw.TLSConfigSetCertPEM(c.id, cb.Ptr(), cb.Len(), kb.Ptr(), kb.Len()))
}

// cCopy copies b (not empty) into C memory.
func cCopy(b []byte) (*CBuf, error) {
	cb, err := NewCBuf(uintptr(len(b)))
	if err != nil {
		return nil, err
	}
	copy(unsafe.Slice((*byte)(cb.Ptr()), len(b)), b)
	return cb, nil
}

// LoadCertificateFiles reads our chain and key from PEM files.
func (c *TLSConfig) LoadCertificateFiles(cert, key string) error {
	return withStrings([]string{cert, key}, true, func(ps []unsafe.Pointer) int32 {
		return c.lib.Raw.TLSConfigLoadCertFile(c.id, ps[0], ps[1])
	})
}

// AddCAPEM trusts the PEM certificates given (the system CAs no longer are).
func (c *TLSConfig) AddCAPEM(pem []byte) error {
	return withBytes(pem, func(p unsafe.Pointer, n uintptr) int32 { return c.lib.Raw.TLSConfigAddCAPEM(c.id, p, n) })
}

// LoadCAFile trusts the PEM certificates of a file.
func (c *TLSConfig) LoadCAFile(path string) error {
	return withStrings([]string{path}, true, func(ps []unsafe.Pointer) int32 { return c.lib.Raw.TLSConfigLoadCAFile(c.id, ps[0]) })
}

// LoadCADir trusts the PEM certificates of every file in a directory.
func (c *TLSConfig) LoadCADir(path string) error {
	return withStrings([]string{path}, true, func(ps []unsafe.Pointer) int32 { return c.lib.Raw.TLSConfigLoadCADir(c.id, ps[0]) })
}

// UseSystemCAs trusts the system's CAs again.
func (c *TLSConfig) UseSystemCAs() error { return check(c.lib.Raw.TLSConfigUseSystemCA(c.id)) }

// SetVerify turns the client's check of the server certificate on or off.
func (c *TLSConfig) SetVerify(on bool) error {
	v := int32(0)
	if on {
		v = 1
	}
	return check(c.lib.Raw.TLSConfigSetVerify(c.id, v))
}

// SetServerName sets the name a client sends and checks by default.
func (c *TLSConfig) SetServerName(name string) error {
	return withStrings([]string{name}, true, func(ps []unsafe.Pointer) int32 { return c.lib.Raw.TLSConfigSetServerName(c.id, ps[0]) })
}

// SetClientAuth sets what a server asks of clients (TLSClientNone ...).
func (c *TLSConfig) SetClientAuth(mode int) error {
	if !fitsInt32(mode) {
		return EINVAL
	}
	return check(c.lib.Raw.TLSConfigSetClientAuth(c.id, int32(mode)))
}

// SetALPN sets the ALPN protocols, in order of preference (none: off).
func (c *TLSConfig) SetALPN(protos ...string) error {
	return withStrings(protos, false, func(ps []unsafe.Pointer) int32 {
		var p unsafe.Pointer
		if len(ps) > 0 {
			arr, err := NewCBuf(uintptr(len(ps)) * unsafe.Sizeof(uintptr(0)))
			if err != nil {
				return int32(ENOMEM)
			}
			defer arr.Free()
			copy(unsafe.Slice((*unsafe.Pointer)(arr.Ptr()), len(ps)), ps)
			p = arr.Ptr()
		}
		return c.lib.Raw.TLSConfigSetALPN(c.id, p, uintptr(len(ps)))
	})
}

// SetVersions sets the lowest and highest version (TLS12, TLS13; 0: default).
func (c *TLSConfig) SetVersions(lo, hi int) error {
	if !fitsInt32(lo) || !fitsInt32(hi) {
		return EINVAL
	}
	return check(c.lib.Raw.TLSConfigSetVersions(c.id, int32(lo), int32(hi)))
}

// SetSessionCache sets the client sessions kept; 0 turns resumption off.
func (c *TLSConfig) SetSessionCache(n int) error {
	if n < 0 {
		return EINVAL
	}
	return check(c.lib.Raw.TLSConfigSetSessionCache(c.id, uintptr(n)))
}

// SetTimeouts sets the handshake and shutdown timeouts in seconds (0: default).
func (c *TLSConfig) SetTimeouts(handshake, shutdown float64) error {
	return check(c.lib.Raw.TLSConfigSetTimeouts(c.id, handshake, shutdown))
}

// DialTLS connects and runs a TLS client handshake checking serverName
// ("": the config's, else host); p's ConnectionMade runs once it completed.
// The future fails with a connect error, an ETLS* code or ETIMEDOUT.
func (l *Loop) DialTLS(host string, port int, cfg *TLSConfig, serverName string, p Protocol) (*DialFuture, error) {
	if !fitsInt32(port) || cfg == nil {
		return nil, EINVAL
	}
	var name *CBuf
	if serverName != "" {
		var err error
		if name, err = NewCString(serverName); err != nil {
			return nil, err
		}
		defer name.Free()
	}
	return l.dial(host, p, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		var np unsafe.Pointer
		if name != nil {
			np = name.Ptr()
		}
		return l.raw().TLSConnect(l.id, h, int32(port), cfg.id, np, fn, arg, out)
	})
}

// ListenTLS listens as ListenTCP; each connection handshakes with cfg
// before its protocol's ConnectionMade. Connections whose handshake fails
// never reach a protocol.
func (l *Loop) ListenTLS(host string, port int, cfg *TLSConfig, factory func() Protocol, opts ...ListenOption) (*Server, error) {
	c := listenOptions(opts)
	if !fitsInt32(port) || !fitsInt32(c.backlog) || cfg == nil {
		return nil, EINVAL
	}
	return l.listen(host, host == "", factory, func(h unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 {
		return l.raw().TLSListen(l.id, h, int32(port), int32(c.backlog), int32(c.flags), cfg.id, fn, arg, out)
	})
}

// StartTLS upgrades the transport to TLS (asyncio's start_tls). The
// future's value is the transport's id once the handshake completed; on
// failure it fails with the code and the transport is lost with it.
func (t *Transport) StartTLS(cfg *TLSConfig, serverSide bool, serverName string) (*Future, error) {
	if cfg == nil {
		return nil, EINVAL
	}
	side := int32(0)
	if serverSide {
		side = 1
	}
	var fut *Future
	err := withStrings([]string{serverName}, true, func(ps []unsafe.Pointer) int32 {
		var err error
		fut, err = t.loop.newFuture(func(out unsafe.Pointer) int32 {
			return t.raw().TransportStartTLS(t.id, cfg.id, side, ps[0], out)
		})
		if e, ok := err.(Error); ok {
			return int32(e)
		}
		return 0
	})
	return fut, err
}

// TLSVersion is the negotiated version (TLS12, TLS13).
func (t *Transport) TLSVersion() (int, error) {
	rc := t.raw().TLSVersion(t.id)
	if rc < 0 {
		return 0, Error(rc)
	}
	return int(rc), nil
}

// tlsString reads a string accessor.
func (t *Transport) tlsString(fn func(id uint64, buf unsafe.Pointer, n uintptr) int32) (string, error) {
	cb, err := NewCBuf(256)
	if err != nil {
		return "", err
	}
	defer cb.Free()
	rc := fn(t.id, cb.Ptr(), cb.Len())
	if rc < 0 {
		return "", Error(rc)
	}
	return string(unsafe.Slice((*byte)(cb.Ptr()), min(int(rc), 255))), nil
}

// TLSCipher is the cipher suite's IANA name.
func (t *Transport) TLSCipher() (string, error) { return t.tlsString(t.raw().TLSCipher) }

// TLSALPN is the ALPN protocol agreed ("" for none).
func (t *Transport) TLSALPN() (string, error) { return t.tlsString(t.raw().TLSALPN) }

// TLSPeerCertificate is the peer's certificate number i in DER (nil when
// the peer sent none at i).
func (t *Transport) TLSPeerCertificate(i int) ([]byte, error) {
	if i < 0 {
		return nil, EINVAL
	}
	rc := t.raw().TLSPeerCert(t.id, uintptr(i), nil, 0)
	if rc <= 0 {
		if rc < 0 {
			return nil, Error(rc)
		}
		return nil, nil
	}
	cb, err := NewCBuf(uintptr(rc))
	if err != nil {
		return nil, err
	}
	defer cb.Free()
	if rc = t.raw().TLSPeerCert(t.id, uintptr(i), cb.Ptr(), cb.Len()); rc < 0 {
		return nil, Error(rc)
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cb.Ptr()), int(rc))...), nil
}

// TLSVerifyResult is nil when the peer's certificate verified, else why
// not (ETLSCERT, ETLSHOST, ETLSNOCERT), or the call's error.
func (t *Transport) TLSVerifyResult() error { return check(t.raw().TLSVerifyResult(t.id)) }

// TLSResumed reports whether the session was resumed.
func (t *Transport) TLSResumed() (bool, error) { return boolRC(t.raw().TLSResumed(t.id)) }
