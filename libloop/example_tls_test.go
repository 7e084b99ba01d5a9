// SPDX-License-Identifier: MIT

package libloop_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"time"

	"github.com/libloop/libloop/libloop"
)

// selfSigned makes a certificate for 127.0.0.1 and its key, in PEM.
func selfSigned() (certPEM, keyPEM []byte) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "example"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TLS through net.Conn: the listener's connections have completed their
// handshake when Accept returns them, and both sides read and write
// plaintext.
func ExampleLoop_ListenConnTLS() {
	certPEM, keyPEM := selfSigned()
	server := libloop.NewTLSConfig()
	server.SetCertificatePEM(certPEM, keyPEM)
	client := libloop.NewTLSConfig()
	client.AddCAPEM(certPEM) // trust the self-signed certificate

	loop, _ := libloop.New()
	stopped := make(chan struct{})
	go func() { loop.RunForever(); close(stopped) }()
	defer func() {
		loop.CallSoonThreadsafe(func() { loop.Stop() })
		<-stopped
		loop.Close()
	}()

	ln, err := loop.ListenConnTLS("tcp", "127.0.0.1:0", server)
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("secret over TLS"))
		c.Close()
	}()
	conn, err := loop.DialConnWith(context.Background(), "tcp", ln.Addr().String(), libloop.DialOptions{TLS: client})
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	msg, err := io.ReadAll(conn)
	fmt.Printf("%q %v\n", msg, err)
	// Output:
	// "secret over TLS" <nil>
}
