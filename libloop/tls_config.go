// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// TLSClientAuth says what a TLS server asks of its clients.
type TLSClientAuth int

// Client-certificate policies of a server (LL_TLS_CLIENT_*).
const (
	ClientAuthNone    TLSClientAuth = 0 // ask for none
	ClientAuthRequest TLSClientAuth = 1 // ask; one that is sent must verify
	ClientAuthRequire TLSClientAuth = 2 // require one that verifies
)

// TLS versions, as on the wire (LL_TLS_1_2, LL_TLS_1_3).
const (
	TLS12 = tls.VersionTLS12
	TLS13 = tls.VersionTLS13
)

// asyncio's defaults: ssl_handshake_timeout 60 s, ssl_shutdown_timeout 30 s.
const (
	DefaultHandshakeTimeout = 60 * time.Second
	DefaultShutdownTimeout  = 30 * time.Second
	defaultSessionCache     = 64
)

// TLSConfig is what TLS connections are set up from: certificates, trust,
// verification, ALPN, versions, resumption and timeouts. It is safe to use
// from any thread and to share between loops; a change applies to the
// connections that start after it.
type TLSConfig struct {
	mu         sync.Mutex
	certs      []tls.Certificate
	roots      *x509.CertPool // nil: the system pool
	verify     bool
	serverName string
	clientAuth TLSClientAuth
	alpn       []string
	minVersion uint16
	maxVersion uint16
	cacheSize  int // client session cache entries; 0: no resumption
	handshake  time.Duration
	shutdown   time.Duration

	built    *tls.Config // rebuilt after a change
	sessions tls.ClientSessionCache
	ticket   [32]byte // the server's session-ticket key, shared by every connection
}

// NewTLSConfig returns a configuration with the defaults: verify the peer
// against the system CAs, TLS 1.2 minimum, resumption on, asyncio's timeouts.
func NewTLSConfig() *TLSConfig {
	c := &TLSConfig{verify: true, minVersion: TLS12, cacheSize: defaultSessionCache,
		handshake: DefaultHandshakeTimeout, shutdown: DefaultShutdownTimeout}
	rand.Read(c.ticket[:])
	return c
}

// change runs fn under the lock and drops the built config.
func (c *TLSConfig) change(fn func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := fn(); err != nil {
		return err
	}
	c.built = nil
	return nil
}

// SetCertificatePEM sets the certificate chain (leaf first) and its private
// key, both PEM; it replaces an earlier one.
func (c *TLSConfig) SetCertificatePEM(certPEM, keyPEM []byte) error {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return EINVAL
	}
	return c.change(func() error { c.certs = []tls.Certificate{cert}; return nil })
}

// LoadCertificateFiles reads the chain and key from PEM files.
func (c *TLSConfig) LoadCertificateFiles(certFile, keyFile string) error {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	return c.SetCertificatePEM(certPEM, keyPEM)
}

// AddCAPEM trusts the PEM certificates given (in addition to those added
// before; the system pool is no longer used unless UseSystemCAs follows).
func (c *TLSConfig) AddCAPEM(pem []byte) error {
	return c.change(func() error {
		pool := c.roots
		if pool == nil {
			pool = x509.NewCertPool()
		} else {
			pool = pool.Clone()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return EINVAL
		}
		c.roots = pool
		return nil
	})
}

// LoadCAFile trusts the PEM certificates of a file.
func (c *TLSConfig) LoadCAFile(path string) error {
	pem, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return c.AddCAPEM(pem)
}

// LoadCADir trusts every PEM certificate in the files of a directory (an
// OpenSSL hashed directory, or any directory of PEM files); files that hold
// none are skipped, a directory with none at all is EINVAL.
func (c *TLSConfig) LoadCADir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var all []byte
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
			all = append(append(all, b...), '\n')
		}
	}
	return c.AddCAPEM(all)
}

// UseSystemCAs trusts the system's CAs again (the default), dropping the
// ones added.
func (c *TLSConfig) UseSystemCAs() error {
	return c.change(func() error { c.roots = nil; return nil })
}

// SetVerify turns verification of the server's certificate (on a client)
// on or off. Off, the handshake goes on whatever the certificate; the
// result is still known (Transport.TLSVerifyResult).
func (c *TLSConfig) SetVerify(on bool) error {
	return c.change(func() error { c.verify = on; return nil })
}

// SetServerName sets the name a client sends (SNI) and checks the server's
// certificate against when the connect call names none.
func (c *TLSConfig) SetServerName(name string) error {
	return c.change(func() error { c.serverName = name; return nil })
}

// SetClientAuth sets what a server asks of clients.
func (c *TLSConfig) SetClientAuth(mode TLSClientAuth) error {
	if mode < ClientAuthNone || mode > ClientAuthRequire {
		return EINVAL
	}
	return c.change(func() error { c.clientAuth = mode; return nil })
}

// SetALPN sets the protocols offered (client) or accepted (server), in
// order of preference; none disables ALPN.
func (c *TLSConfig) SetALPN(protos []string) error {
	for _, p := range protos {
		if len(p) == 0 || len(p) > 255 {
			return EINVAL
		}
	}
	return c.change(func() error { c.alpn = append([]string(nil), protos...); return nil })
}

// SetVersions sets the lowest and highest TLS version (TLS12, TLS13; 0:
// the default, 1.2 and 1.3).
func (c *TLSConfig) SetVersions(lo, hi int) error {
	if lo == 0 {
		lo = TLS12
	}
	if hi == 0 {
		hi = TLS13
	}
	ok := func(v int) bool { return v == TLS12 || v == TLS13 }
	if !ok(lo) || !ok(hi) || lo > hi {
		return EINVAL
	}
	return c.change(func() error { c.minVersion, c.maxVersion = uint16(lo), uint16(hi); return nil })
}

// SetSessionCache sets how many sessions a client keeps for resumption;
// 0 turns resumption off on both sides (no cache, no server tickets).
func (c *TLSConfig) SetSessionCache(n int) error {
	if n < 0 || n > 1<<20 {
		return EINVAL
	}
	return c.change(func() error { c.cacheSize, c.sessions = n, nil; return nil })
}

// SetTimeouts sets the handshake and shutdown timeouts (0: the default;
// asyncio's 60 s and 30 s).
func (c *TLSConfig) SetTimeouts(handshake, shutdown time.Duration) error {
	if handshake < 0 || shutdown < 0 {
		return EINVAL
	}
	if handshake == 0 {
		handshake = DefaultHandshakeTimeout
	}
	if shutdown == 0 {
		shutdown = DefaultShutdownTimeout
	}
	return c.change(func() error { c.handshake, c.shutdown = handshake, shutdown; return nil })
}

// base returns the shared part of every connection's crypto/tls config.
// Peer verification is always ours (VerifyConnection in tls_verify.go), so
// its outcome is known even when it is off.
func (c *TLSConfig) base() (*tls.Config, time.Duration, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built == nil {
		b := &tls.Config{
			Certificates:       c.certs,
			RootCAs:            c.roots,
			ClientCAs:          c.roots,
			InsecureSkipVerify: true,
			NextProtos:         c.alpn,
			MinVersion:         c.minVersion,
			MaxVersion:         c.maxVersion,
		}
		if c.maxVersion == 0 {
			b.MaxVersion = TLS13
		}
		switch c.clientAuth {
		case ClientAuthRequest:
			b.ClientAuth = tls.RequestClientCert
		case ClientAuthRequire:
			b.ClientAuth = tls.RequireAnyClientCert
		}
		if c.cacheSize > 0 {
			if c.sessions == nil {
				c.sessions = tls.NewLRUClientSessionCache(c.cacheSize)
			}
			b.ClientSessionCache = c.sessions
			// Clones share explicit keys; without them each clone would
			// make its own and no ticket would resume.
			b.SetSessionTicketKeys([][32]byte{c.ticket})
		} else {
			b.SessionTicketsDisabled = true
		}
		c.built = b
	}
	return c.built, c.handshake, c.shutdown
}

// connConfig is one connection's crypto/tls config: the shared one with
// the name to check and the verification hook bound to st.
func (c *TLSConfig) connConfig(st *tlsState, serverName string) (*tls.Config, time.Duration, time.Duration) {
	b, hs, sd := c.base()
	cc := b.Clone()
	c.mu.Lock()
	verify, auth := c.verify, c.clientAuth
	if serverName == "" {
		serverName = c.serverName
	}
	c.mu.Unlock()
	cc.ServerName = serverName
	cc.VerifyConnection = func(cs tls.ConnectionState) error {
		return st.verifyPeer(cs, b.RootCAs, serverName, verify, auth)
	}
	if st.server && len(cc.NextProtos) > 0 {
		cc.GetConfigForClient = strictALPN(cc)
	}
	return cc, hs, sd
}

// strictALPN makes a server with an ALPN list refuse every client that
// offers only other protocols (tls.h's promise, LL_ETLSNEGOTIATE).
// crypto/tls refuses them with no_application_protocol, except an
// http/1.1-only client of a server that lists h2, which it serves as if it
// had offered no ALPN. For that client the handshake gets a list without
// h2 that matches none of its offers, so crypto/tls's own refusal (the
// same alert, which the client reads as LL_ETLSNEGOTIATE) applies. The
// list is never sent: the handshake fails on it.
func strictALPN(cc *tls.Config) func(*tls.ClientHelloInfo) (*tls.Config, error) {
	ours := cc.NextProtos
	return func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		offered := hello.SupportedProtos
		if len(offered) == 0 || !slices.Contains(ours, "h2") || !slices.Contains(offered, "http/1.1") {
			return nil, nil // crypto/tls decides as tls.h says
		}
		for _, p := range ours {
			if slices.Contains(offered, p) {
				return nil, nil
			}
		}
		refuse := "\x00"
		for slices.Contains(offered, refuse) {
			refuse += "\x00"
		}
		x := cc.Clone()
		x.GetConfigForClient = nil
		x.NextProtos = []string{refuse}
		return x, nil
	}
}
