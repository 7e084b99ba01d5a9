// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"time"
)

// verifyError is our verification's verdict, returned from VerifyConnection
// so the handshake fails with a code that says why.
type verifyError struct{ code Errno }

func (e verifyError) Error() string { return e.code.Message() }

// verifyPeer checks the peer's chain against roots (nil: the system pool)
// and, on a client, the host name; it runs on the handshake goroutine.
// The verdict is kept for TLSVerifyResult; it fails the handshake when
// verification is on (a client with verify, a server that asks for
// certificates and got one, or requires one).
func (st *tlsState) verifyPeer(cs tls.ConnectionState, roots *x509.CertPool, name string, verify bool, auth TLSClientAuth) error {
	code := verifyChain(cs.PeerCertificates, roots, name, st.server)
	st.verifyCode = code
	enforce := verify
	if st.server {
		enforce = auth == ClientAuthRequire || (auth == ClientAuthRequest && code != ETLSNOCERT)
	}
	if enforce && code != 0 {
		return verifyError{code}
	}
	return nil
}

// verifyChain is 0 when certs (leaf first) chain to roots and, for a
// server's certificate, name it; else the code that says why not.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool, name string, server bool) Errno {
	if len(certs) == 0 {
		return ETLSNOCERT
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), CurrentTime: time.Now()}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if server {
		opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		opts.DNSName = name
	}
	_, err := certs[0].Verify(opts)
	if err == nil {
		return 0
	}
	var herr x509.HostnameError
	if errors.As(err, &herr) {
		return ETLSHOST
	}
	return ETLSCERT
}

// Remote alerts that say the two sides share nothing to agree on:
// handshake_failure, protocol_version, insufficient_security,
// no_application_protocol.
var negotiateAlerts = map[uint64]bool{40: true, 70: true, 71: true, 120: true}

// Alerts we send when the peer's bytes make no sense: unexpected_message,
// bad_record_mac, record_overflow, illegal_parameter, decode_error.
var malformedAlerts = map[uint64]bool{10: true, 20: true, 22: true, 47: true, 50: true}

// tlsCode says which LL_E* code a crypto/tls failure is.
func tlsCode(err error) Errno {
	var verr verifyError
	var rh tls.RecordHeaderError
	var op *net.OpError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &verr):
		return verr.code
	case errors.As(err, &rh):
		return ETLSPROTO
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ETLSEOF
	case errors.As(err, &op) && (op.Op == "remote error" || op.Op == "local error"):
		// crypto/tls's alert type is unexported; its value is the alert number.
		if v := reflect.ValueOf(op.Err); v.Kind() == reflect.Uint8 {
			switch a := v.Uint(); {
			case negotiateAlerts[a]:
				return ETLSNEGOTIATE
			case op.Op == "remote error":
				return ETLSALERT
			case malformedAlerts[a]:
				return ETLSPROTO
			}
		}
	}
	if e, ok := err.(Errno); ok {
		return e
	}
	if n, ok := sysErrno(err); ok {
		return Errno(-n)
	}
	// The rest are crypto/tls's own texts (no typed errors for them).
	msg := err.Error()
	switch {
	case strings.Contains(msg, "didn't provide a certificate"):
		return ETLSNOCERT
	case strings.Contains(msg, "unsupported protocol version"),
		strings.Contains(msg, "only unsupported versions"),
		strings.Contains(msg, "no cipher suite supported"),
		strings.Contains(msg, "unsupported application protocols"),
		strings.Contains(msg, "no supported versions"),
		strings.Contains(msg, "no mutually supported"):
		return ETLSNEGOTIATE
	case strings.Contains(msg, "bad record MAC"),
		strings.Contains(msg, "first record does not look like"),
		strings.Contains(msg, "unexpected message"),
		strings.Contains(msg, "record overflow"),
		strings.Contains(msg, "decode"):
		return ETLSPROTO
	}
	return ETLS
}
