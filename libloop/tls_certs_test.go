// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// testPKI is a throwaway CA and leaf certificates made for one test run.
type testPKI struct {
	caPEM      []byte
	ca         *x509.Certificate
	caKey      *ecdsa.PrivateKey
	serverCert []byte // "localhost" and 127.0.0.1
	serverKey  []byte
	clientCert []byte
	clientKey  []byte
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{}
	var err error
	p.caKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "libloop test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	p.serverCert, p.serverKey = p.leaf(t, 2, "localhost", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = p.leaf(t, 3, "client", x509.ExtKeyUsageClientAuth)
	return p
}

func (p *testPKI) leaf(t *testing.T, serial int64, name string, usage x509.ExtKeyUsage) ([]byte, []byte) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{name}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// serverConfig trusts the CA and serves the server certificate.
func (p *testPKI) serverConfig(t *testing.T) *TLSConfig {
	c := NewTLSConfig()
	if err := c.SetCertificatePEM(p.serverCert, p.serverKey); err != nil {
		t.Fatal(err)
	}
	if err := c.AddCAPEM(p.caPEM); err != nil {
		t.Fatal(err)
	}
	return c
}

// clientConfig trusts the CA.
func (p *testPKI) clientConfig(t *testing.T) *TLSConfig {
	c := NewTLSConfig()
	if err := c.AddCAPEM(p.caPEM); err != nil {
		t.Fatal(err)
	}
	return c
}
