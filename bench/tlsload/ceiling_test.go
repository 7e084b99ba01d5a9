package main

// The ceiling of W11: crypto/tls alone, no event loop, no sockets (an
// in-memory net.Pipe). go test -bench . ./bench/tlsload/
//   BenchmarkHandshakeTLS13: one full TLS 1.3 handshake (ECDSA P-256
//     certificate, X25519), client and server sides together.
//   BenchmarkEcho1KiB: one 1 KiB message encrypted and decrypted twice
//     (there and back), as an echo round trip costs in TLS.

import (
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
	cli := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS13}
	return cli, srv
}

func pair(b *testing.B, cli, srv *tls.Config) (*tls.Conn, *tls.Conn) {
	a, z := net.Pipe()
	c, s := tls.Client(a, cli), tls.Server(z, srv)
	done := make(chan error, 1)
	go func() { done <- s.Handshake() }()
	if err := c.Handshake(); err != nil {
		b.Fatal(err)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return c, s
}

func BenchmarkHandshakeTLS13(b *testing.B) {
	cli, srv := benchConfigs(b)
	for i := 0; i < b.N; i++ {
		c, s := pair(b, cli, srv)
		c.Close()
		s.Close()
	}
}

func BenchmarkEcho1KiB(b *testing.B) {
	cli, srv := benchConfigs(b)
	c, s := pair(b, cli, srv)
	go io.Copy(s, s) // the echo
	msg := make([]byte, 1024)
	buf := make([]byte, 1024)
	b.SetBytes(1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Write(msg)
		io.ReadFull(c, buf)
	}
}
