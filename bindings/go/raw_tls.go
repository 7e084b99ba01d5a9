// SPDX-License-Identifier: MIT

package libloop

import "unsafe"

// RawTLS holds the raw calls of include/libloop/tls.h, embedded in Raw;
// conventions as RawNet's.
type RawTLS struct {
	TLSConfigNew             func(out unsafe.Pointer) int32                                                                 // ll_tls_config_new
	TLSConfigSetCertPEM      func(c uint64, cert unsafe.Pointer, certLen uintptr, key unsafe.Pointer, keyLen uintptr) int32 // ll_tls_config_set_cert_pem
	TLSConfigLoadCertFile    func(c uint64, cert, key unsafe.Pointer) int32                                                 // ll_tls_config_load_cert_file
	TLSConfigAddCAPEM        func(c uint64, pem unsafe.Pointer, n uintptr) int32                                            // ll_tls_config_add_ca_pem
	TLSConfigLoadCAFile      func(c uint64, path unsafe.Pointer) int32                                                      // ll_tls_config_load_ca_file
	TLSConfigLoadCADir       func(c uint64, path unsafe.Pointer) int32                                                      // ll_tls_config_load_ca_dir
	TLSConfigUseSystemCA     func(c uint64) int32                                                                           // ll_tls_config_use_system_ca
	TLSConfigSetVerify       func(c uint64, on int32) int32                                                                 // ll_tls_config_set_verify
	TLSConfigSetServerName   func(c uint64, name unsafe.Pointer) int32                                                      // ll_tls_config_set_server_name
	TLSConfigSetClientAuth   func(c uint64, mode int32) int32                                                               // ll_tls_config_set_client_auth
	TLSConfigSetALPN         func(c uint64, protos unsafe.Pointer, n uintptr) int32                                         // ll_tls_config_set_alpn
	TLSConfigSetVersions     func(c uint64, lo, hi int32) int32                                                             // ll_tls_config_set_versions
	TLSConfigSetSessionCache func(c uint64, n uintptr) int32                                                                // ll_tls_config_set_session_cache
	TLSConfigSetTimeouts     func(c uint64, handshake, shutdown float64) int32                                              // ll_tls_config_set_timeouts

	TLSConnect        func(loop uint64, host unsafe.Pointer, port int32, cfg uint64, name unsafe.Pointer, fn, arg uintptr, out unsafe.Pointer) int32 // ll_tls_connect
	TLSListen         func(loop uint64, host unsafe.Pointer, port, backlog, flags int32, cfg uint64, fn, arg uintptr, out unsafe.Pointer) int32      // ll_tls_listen
	TLSServerOpen     func(loop uint64, fd int32, cfg uint64, fn, arg uintptr, out unsafe.Pointer) int32                                             // ll_tls_server_open
	TransportStartTLS func(t, cfg uint64, serverSide int32, name unsafe.Pointer, out unsafe.Pointer) int32                                           // ll_transport_start_tls

	TLSVersion      func(t uint64) int32                                           // ll_tls_version
	TLSCipher       func(t uint64, buf unsafe.Pointer, n uintptr) int32            // ll_tls_cipher
	TLSALPN         func(t uint64, buf unsafe.Pointer, n uintptr) int32            // ll_tls_alpn
	TLSPeerCert     func(t uint64, i uintptr, buf unsafe.Pointer, n uintptr) int32 // ll_tls_peer_cert
	TLSVerifyResult func(t uint64) int32                                           // ll_tls_verify_result
	TLSResumed      func(t uint64) int32                                           // ll_tls_resumed
}

func (r *RawTLS) symbols() []struct {
	name string
	fptr any
} {
	return []struct {
		name string
		fptr any
	}{
		{"ll_tls_config_new", &r.TLSConfigNew},
		{"ll_tls_config_set_cert_pem", &r.TLSConfigSetCertPEM},
		{"ll_tls_config_load_cert_file", &r.TLSConfigLoadCertFile},
		{"ll_tls_config_add_ca_pem", &r.TLSConfigAddCAPEM},
		{"ll_tls_config_load_ca_file", &r.TLSConfigLoadCAFile},
		{"ll_tls_config_load_ca_dir", &r.TLSConfigLoadCADir},
		{"ll_tls_config_use_system_ca", &r.TLSConfigUseSystemCA},
		{"ll_tls_config_set_verify", &r.TLSConfigSetVerify},
		{"ll_tls_config_set_server_name", &r.TLSConfigSetServerName},
		{"ll_tls_config_set_client_auth", &r.TLSConfigSetClientAuth},
		{"ll_tls_config_set_alpn", &r.TLSConfigSetALPN},
		{"ll_tls_config_set_versions", &r.TLSConfigSetVersions},
		{"ll_tls_config_set_session_cache", &r.TLSConfigSetSessionCache},
		{"ll_tls_config_set_timeouts", &r.TLSConfigSetTimeouts},
		{"ll_tls_connect", &r.TLSConnect},
		{"ll_tls_listen", &r.TLSListen},
		{"ll_tls_server_open", &r.TLSServerOpen},
		{"ll_transport_start_tls", &r.TransportStartTLS},
		{"ll_tls_version", &r.TLSVersion},
		{"ll_tls_cipher", &r.TLSCipher},
		{"ll_tls_alpn", &r.TLSALPN},
		{"ll_tls_peer_cert", &r.TLSPeerCert},
		{"ll_tls_verify_result", &r.TLSVerifyResult},
		{"ll_tls_resumed", &r.TLSResumed},
	}
}
