// SPDX-License-Identifier: MIT

package libloop

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"testing"
	"time"
)

// The design choice of tls.go, measured: after the handshake, is a record
// cheaper decrypted on the loop thread itself (synchronous pipe, what
// libloop does) or handed to a goroutine that runs tls.Conn.Read and
// hands the plaintext back (a goroutine switch each way per record)?
//
//	go test -run - -bench TLSRecord ./libloop/

// benchConn is a net.Conn for a crypto/tls pair: blocking (channels)
// during the handshake, then synchronous like tlsPipe.
type benchConn struct {
	in      chan []byte
	pending []byte
	peer    *benchConn
	sync    bool
	wire    []byte // sync: what Write produced
}

func (c *benchConn) Read(b []byte) (int, error) {
	if c.sync && len(c.pending) == 0 {
		return 0, errWouldBlock
	}
	if len(c.pending) == 0 {
		p, ok := <-c.in
		if !ok {
			return 0, io.EOF
		}
		c.pending = p
	}
	n := copy(b, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *benchConn) Write(b []byte) (int, error) {
	if c.sync {
		c.wire = append(c.wire, b...)
		return len(b), nil
	}
	c.peer.in <- append([]byte(nil), b...)
	return len(b), nil
}

func (c *benchConn) Close() error                     { return nil }
func (c *benchConn) LocalAddr() net.Addr              { return pipeAddr{} }
func (c *benchConn) RemoteAddr() net.Addr             { return pipeAddr{} }
func (c *benchConn) SetDeadline(time.Time) error      { return nil }
func (c *benchConn) SetReadDeadline(time.Time) error  { return nil }
func (c *benchConn) SetWriteDeadline(time.Time) error { return nil }

// benchPair is a TLS 1.3 client and server after their handshake, both
// connections in synchronous mode.
func benchPair(b *testing.B) (cli, srv *tls.Conn, cc, sc *benchConn) {
	p := newTestPKI(&testing.T{})
	cert, _ := tls.X509KeyPair(p.serverCert, p.serverKey)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	cc = &benchConn{in: make(chan []byte, 16)}
	sc = &benchConn{in: make(chan []byte, 16)}
	cc.peer, sc.peer = sc, cc
	cli = tls.Client(cc, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	srv = tls.Server(sc, &tls.Config{Certificates: []tls.Certificate{cert}, SessionTicketsDisabled: true})
	done := make(chan error, 1)
	go func() { done <- srv.Handshake() }()
	if err := cli.Handshake(); err != nil {
		b.Fatal(err)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	cc.sync, sc.sync = true, true
	return
}

// readRecord decrypts what sc was fed, as tlsDecrypt does.
func readRecord(srv *tls.Conn, buf []byte) int {
	got := 0
	for {
		n, err := srv.Read(buf[got:])
		got += n
		if err != nil {
			return got
		}
	}
}

func BenchmarkTLSRecordSync(b *testing.B) {
	cli, srv, cc, sc := benchPair(b)
	msg := make([]byte, 1024)
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(msg)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cli.Write(msg)
		sc.pending, cc.wire = cc.wire, cc.wire[:0]
		if readRecord(srv, buf) != len(msg) {
			b.Fatal("short record")
		}
	}
}

func BenchmarkTLSRecordGoroutine(b *testing.B) {
	cli, srv, cc, sc := benchPair(b)
	msg := make([]byte, 1024)
	in, out := make(chan []byte), make(chan int)
	go func() {
		buf := make([]byte, 64<<10)
		for ct := range in {
			sc.pending = ct
			out <- readRecord(srv, buf)
		}
	}()
	defer close(in)
	b.SetBytes(int64(len(msg)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cli.Write(msg)
		ct := cc.wire
		cc.wire = nil
		in <- ct
		if <-out != len(msg) {
			b.Fatal("short record")
		}
	}
}
