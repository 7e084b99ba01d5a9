// SPDX-License-Identifier: MIT

package libloop_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	libloop "github.com/libloop/libloop/bindings/go"
)

// testCerts makes a throwaway CA and a "localhost" server certificate.
func testCerts(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "binding test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// A TLS echo server and client through the binding: the handshake's
// outcome is readable, the bytes come back, a wrong name fails ETLSHOST.
func TestTLSEchoThroughBinding(t *testing.T) {
	lib := libloop.MustOpen()
	caPEM, certPEM, keyPEM := testCerts(t)
	srvCfg, err := lib.NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	defer srvCfg.Release()
	if err := srvCfg.SetCertificatePEM(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	if err := srvCfg.SetALPN("echo/1", "h2"); err != nil {
		t.Fatal(err)
	}
	cliCfg, _ := lib.NewTLSConfig()
	defer cliCfg.Release()
	if err := cliCfg.AddCAPEM(caPEM); err != nil {
		t.Fatal(err)
	}
	cliCfg.SetALPN("echo/1")
	if err := cliCfg.SetVersions(libloop.TLS13, 5); !errors.Is(err, libloop.EINVAL) {
		t.Fatalf("bad version: %v", err)
	}
	loop, err := lib.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Release()
	srv, err := loop.ListenTLS("127.0.0.1", 0, srvCfg, func() libloop.Protocol { return echo{} })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Release()
	port, _ := srv.Port()

	var got []byte
	var lostErr error
	var version int
	var alpn string
	var der []byte
	var verr error
	client := &libloop.ProtocolFuncs{
		Made: func(tr *libloop.Transport) {
			version, _ = tr.TLSVersion()
			alpn, _ = tr.TLSALPN()
			der, _ = tr.TLSPeerCertificate(0)
			verr = tr.TLSVerifyResult()
			tr.Write([]byte("hello over tls"))
		},
		Data: func(tr *libloop.Transport, data []byte) {
			got = append(got, data...)
			if len(got) == len("hello over tls") {
				tr.Close()
			}
		},
		Lost: func(tr *libloop.Transport, err error) { lostErr = err; loop.Stop() },
	}
	dial, err := loop.DialTLS("127.0.0.1", port, cliCfg, "localhost", client)
	if err != nil {
		t.Fatal(err)
	}
	defer dial.Release()
	stop, _ := loop.CallLater(30*time.Second, func() { loop.Stop() })
	defer stop.Cancel()
	if err := loop.RunForever(); err != nil {
		t.Fatal(err)
	}
	if string(got) != "hello over tls" || lostErr != nil {
		t.Fatalf("got %q, lost %v", got, lostErr)
	}
	if version != libloop.TLS13 || alpn != "echo/1" || verr != nil {
		t.Fatalf("version %x alpn %q verify %v", version, alpn, verr)
	}
	block, _ := pem.Decode(certPEM)
	if !bytes.Equal(der, block.Bytes) {
		t.Fatalf("peer certificate: %d bytes, want the server's %d", len(der), len(block.Bytes))
	}

	bad, err := loop.DialTLS("127.0.0.1", port, cliCfg, "elsewhere", &libloop.ProtocolFuncs{})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Release()
	if err := loop.RunUntilComplete(&bad.Future); err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Result(); !errors.Is(err, libloop.ETLSHOST) {
		t.Fatalf("wrong name: %v", err)
	}
}
