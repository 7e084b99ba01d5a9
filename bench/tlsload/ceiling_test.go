// SPDX-License-Identifier: MIT

package main

// The ceiling of W11: crypto/tls alone, no event loop, no sockets (an
// in-memory net.Pipe). go test -bench . ./bench/tlsload/
//   BenchmarkHandshakeTLS13: one full TLS 1.3 handshake (ECDSA P-256
//     certificate, X25519), client and server sides together (over
//     net.Pipe: a few goroutine switches included).
//   BenchmarkEcho1KiB: one 1 KiB message encrypted and decrypted twice
//     (there and back), as an echo round trip costs in TLS: client and
//     server side together, all on one goroutine (in-memory buffers).

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"testing"
	"time"
)

func benchConfigs(b *testing.B) (*tls.Config, *tls.Config) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, SessionTicketsDisabled: true}
	cli := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{tls.X25519}}
	return cli, srv
}

// memConn is a net.Pipe end for the handshake, then in-memory buffers so
// records cost no goroutine switch.
type memConn struct {
	net.Conn
	mem     bool
	in, out *bytes.Buffer
}

func (c *memConn) Read(b []byte) (int, error) {
	if c.mem {
		return c.in.Read(b)
	}
	return c.Conn.Read(b)
}

func (c *memConn) Write(b []byte) (int, error) {
	if c.mem {
		return c.out.Write(b)
	}
	return c.Conn.Write(b)
}

func pair(b *testing.B, cli, srv *tls.Config) (*tls.Conn, *tls.Conn, *memConn, *memConn) {
	a, z := net.Pipe()
	ma, mz := &memConn{Conn: a}, &memConn{Conn: z}
	c, s := tls.Client(ma, cli), tls.Server(mz, srv)
	done := make(chan error, 1)
	go func() { done <- s.Handshake() }()
	if err := c.Handshake(); err != nil {
		b.Fatal(err)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return c, s, ma, mz
}

func BenchmarkHandshakeTLS13(b *testing.B) {
	cli, srv := benchConfigs(b)
	for i := 0; i < b.N; i++ {
		_, _, ma, mz := pair(b, cli, srv)
		ma.Conn.Close() // not tls.Conn.Close: its close_notify would wait on the pipe
		mz.Conn.Close()
	}
}

func BenchmarkEcho1KiB(b *testing.B) {
	cli, srv := benchConfigs(b)
	c, s, ma, mz := pair(b, cli, srv)
	ab, za := new(bytes.Buffer), new(bytes.Buffer)
	ma.mem, ma.out, ma.in = true, ab, za
	mz.mem, mz.in, mz.out = true, ab, za
	msg := make([]byte, 1024)
	buf := make([]byte, 1024)
	b.SetBytes(1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Write(msg)
		n, _ := io.ReadFull(s, buf)
		s.Write(buf[:n])
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
	}
}
