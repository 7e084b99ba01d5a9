// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// goClientConfig is a crypto/tls client trusting p's CA.
func goClientConfig(p *testPKI) *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	return &tls.Config{RootCAs: pool, ServerName: "localhost"}
}

// A libloop TLS server echoes to a crypto/tls client, then the client's
// close gets the server's close_notify back.
func TestTLSServerEchoGoClient(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	var made, lost int
	srv, err := l.ListenTLS("127.0.0.1", 0, 0, 0, p.serverConfig(t), func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			made++
			if st, err := ev.T.TLSState(); err != nil || st.Version != tls.VersionTLS13 {
				t.Errorf("state %v %v", st.Version, err)
			}
		case DataReceived:
			ev.T.Write(ev.Data)
		case ConnectionLost:
			lost++
			if ev.Code != 0 {
				t.Errorf("lost code %d", ev.Code)
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	port, _ := srv.Port()
	res := make(chan error, 1)
	go func() {
		c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), goClientConfig(p))
		if err != nil {
			res <- err
			return
		}
		msg := bytes.Repeat([]byte("hello tls "), 10000)
		go c.Write(msg)
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil {
			res <- err
			return
		}
		if !bytes.Equal(got, msg) {
			res <- io.ErrShortBuffer
			return
		}
		c.CloseWrite()
		_, err = c.Read(got) // the server's close_notify: io.EOF
		res <- err
	}()
	var out error
	runUntil(t, l, 30*time.Second, func() bool {
		select {
		case out = <-res:
			return true
		default:
			return false
		}
	})
	if out != io.EOF {
		t.Fatalf("client: %v", out)
	}
	runUntil(t, l, 10*time.Second, func() bool { return lost == 1 })
	if made != 1 {
		t.Fatalf("made %d", made)
	}
	srv.Close()
}

// DialTLS to a crypto/tls server: 4 MiB each way with a checksum, ALPN.
func TestTLSDialGoServer(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	cert, _ := tls.X509KeyPair(p.serverCert, p.serverKey)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const total = 4 << 20
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(c, io.LimitReader(c, total))
		c.Close()
	}()
	cfg := p.clientConfig(t)
	cfg.SetALPN([]string{"x"})
	port := ln.Addr().(*net.TCPAddr).Port
	hs, hr := sha256.New(), sha256.New()
	recvd, lostCode, lost := 0, 0, false
	var tr *Transport
	var dialErr error
	dialed := false
	src := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	err = l.DialTLS("127.0.0.1", port, cfg, "localhost", func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			for sent := 0; sent < total; sent += len(src) {
				ev.T.Write(src)
				hs.Write(src)
			}
		case DataReceived:
			hr.Write(ev.Data)
			recvd += len(ev.Data)
		case ConnectionLost:
			lost, lostCode = true, ev.Code
		}
		return false
	}, func(t2 *Transport, err error) { tr, dialErr, dialed = t2, err, true })
	if err != nil {
		t.Fatal(err)
	}
	runUntil(t, l, 60*time.Second, func() bool { return dialed && (dialErr != nil || lost) })
	if dialErr != nil {
		t.Fatal(dialErr)
	}
	if recvd != total || !bytes.Equal(hs.Sum(nil), hr.Sum(nil)) || lostCode != 0 {
		t.Fatalf("recvd %d code %d", recvd, lostCode)
	}
	_ = tr
}

// A wrong host name fails the connect with ETLSHOST, leaving no goroutine.
func TestTLSDialWrongHost(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	srv, err := l.ListenTLS("127.0.0.1", 0, 0, 0, p.serverConfig(t), func(ev *Event) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	port, _ := srv.Port()
	before := runtime.NumGoroutine()
	var got error
	done := false
	l.DialTLS("127.0.0.1", port, p.clientConfig(t), "otherhost", nil, func(_ *Transport, err error) { got, done = err, true })
	runUntil(t, l, 30*time.Second, func() bool { return done })
	if got != ETLSHOST {
		t.Fatalf("got %v", got)
	}
	srv.Close()
	runUntil(t, l, 5*time.Second, func() bool { return runtime.NumGoroutine() <= before })
}

// Server-side handshake failures (garbage, a vanished client, a silent one
// past the timeout) each end one connection with its code, and a loop
// closed while handshakes wait ends their goroutines: none is left.
func TestTLSFailuresLeaveNoGoroutine(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	cfg := p.serverConfig(t)
	cfg.SetTimeouts(300*time.Millisecond, 0)
	var codes []int
	made := 0
	srv, err := l.ListenTLS("127.0.0.1", 0, 0, 0, cfg, func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			made++
		case ConnectionLost:
			codes = append(codes, ev.Code)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	port, _ := srv.Port()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	garbage, _ := net.Dial("tcp", addr)
	garbage.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	runUntil(t, l, 10*time.Second, func() bool { return len(codes) == 1 })
	gone, _ := net.Dial("tcp", addr)
	gone.Close()
	runUntil(t, l, 10*time.Second, func() bool { return len(codes) == 2 })
	silent, _ := net.Dial("tcp", addr)
	runUntil(t, l, 10*time.Second, func() bool { return len(codes) == 3 })
	want := []int{int(ETLSPROTO), int(ETLSEOF), int(ETIMEDOUT)}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("codes %v, want %v", codes, want)
		}
	}
	if made != 0 {
		t.Fatalf("%d made", made)
	}
	garbage.Close()
	silent.Close()
	// Handshakes that wait when the loop closes: their goroutines end too.
	for range 3 {
		c, _ := net.Dial("tcp", addr)
		defer c.Close()
	}
	// A client handshake against a server that never answers (the fourth
	// waiting connection, from this loop).
	plain, _ := l.ListenTCP("127.0.0.1", 0, 0, 0, func(*Event) bool { return false })
	pport, _ := plain.Port()
	l.DialTLS("127.0.0.1", pport, p.clientConfig(t), "localhost", nil, func(*Transport, error) {
		t.Error("the dial reported, but the loop closed first")
	})
	runUntil(t, l, 20*time.Second, func() bool { return handshakeGoroutines() == 4 })
	l.Close()
	deadline := time.Now().Add(10 * time.Second)
	for handshakeGoroutines() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := handshakeGoroutines(); n > 0 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d handshake goroutines left:\n%s", n, buf[:runtime.Stack(buf, true)])
	}
}

// handshakeGoroutines counts the goroutines running a handshake over a
// tlsPipe (other tests' goroutines do not count).
func handshakeGoroutines() int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "crypto/tls.(*Conn).Handshake") && strings.Contains(g, "libloop.(*Transport).startTLS") {
			n++
		}
	}
	return n
}

// Close sends close_notify and flushes; a peer that stops reading cannot
// hold the transport past the shutdown timeout (LL_ETIMEDOUT then).
func TestTLSShutdownTimeout(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	cfg := p.serverConfig(t)
	cfg.SetTimeouts(0, 300*time.Millisecond)
	lost, code := false, 0
	var closedAt time.Time
	srv, err := l.ListenTLS("127.0.0.1", 0, 0, 0, cfg, func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			ev.T.Write(make([]byte, 32<<20)) // more than the socket buffers take
			ev.T.Close()
			closedAt = time.Now()
		case ConnectionLost:
			lost, code = true, ev.Code
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	port, _ := srv.Port()
	conns := make(chan *tls.Conn, 1)
	go func() { // dialed beside the loop, which must run for the handshake
		c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), goClientConfig(p))
		if err != nil {
			t.Error(err)
		}
		conns <- c
	}()
	runUntil(t, l, 20*time.Second, func() bool { return lost })
	if c := <-conns; c != nil {
		c.Close() // it never read
	}
	if code != int(ETIMEDOUT) || time.Since(closedAt) < 250*time.Millisecond {
		t.Fatalf("code %d after %v", code, time.Since(closedAt))
	}
}

// A server with an ALPN list refuses a crypto/tls client that offers only
// other protocols, http/1.1 to an h2 server included (crypto/tls alone
// would serve that one without ALPN): the server's connection ends with
// ETLSNEGOTIATE and no ConnectionMade.
func TestTLSServerALPNRefusesOthers(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	cfg := p.serverConfig(t)
	cfg.SetALPN([]string{"h2"})
	var made int
	var codes []int
	srv, err := l.ListenTLS("127.0.0.1", 0, 0, 0, cfg, func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			made++
		case ConnectionLost:
			codes = append(codes, ev.Code)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port, _ := srv.Port()
	res := make(chan error, 1)
	go func() {
		cc := goClientConfig(p)
		cc.NextProtos = []string{"http/1.1"}
		c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), cc)
		if err == nil {
			c.Close()
		}
		res <- err
	}()
	// The client's result and the server's ConnectionLost arrive in either
	// order: keep the result once read and wait for both.
	var out error
	var gotOut bool
	runUntil(t, l, 30*time.Second, func() bool {
		if !gotOut {
			select {
			case out = <-res:
				gotOut = true
			default:
			}
		}
		return gotOut && len(codes) == 1
	})
	if out == nil || !strings.Contains(out.Error(), "no application protocol") {
		t.Fatalf("client: %v", out)
	}
	if made != 0 || codes[0] != int(ETLSNEGOTIATE) {
		t.Fatalf("made %d, lost %v", made, codes)
	}
}

// ServeFDTLS serves a socket the host bound: a crypto/tls client is echoed
// after the handshake, and a client that speaks no TLS ends with one
// ConnectionLost (LL_ETLSPROTO) and no ConnectionMade; the server goes on.
func TestTLSServeFD(t *testing.T) {
	l := newTestLoop(t)
	p := newTestPKI(t)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	if err == nil {
		err = unix.Listen(fd, 16)
	}
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	port := sa.(*unix.SockaddrInet4).Port
	if _, err := l.ServeFDTLS(fd, nil, nil); err != EINVAL {
		t.Fatalf("nil config: %v", err)
	}
	var made, lost int
	var codes []int
	srv, err := l.ServeFDTLS(fd, p.serverConfig(t), func(ev *Event) bool {
		switch ev.Kind {
		case ConnectionMade:
			made++
		case DataReceived:
			ev.T.Write(ev.Data)
		case ConnectionLost:
			lost++
			codes = append(codes, ev.Code)
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res := make(chan error, 1)
	go func() {
		plain, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			res <- err
			return
		}
		plain.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		io.Copy(io.Discard, plain) // until the server gives up on it
		plain.Close()
		c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), goClientConfig(p))
		if err != nil {
			res <- err
			return
		}
		defer c.Close()
		c.Write([]byte("ping"))
		got := make([]byte, 4)
		if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
			res <- fmt.Errorf("echo %q %v", got, err)
			return
		}
		res <- nil
	}()
	var out error
	runUntil(t, l, 30*time.Second, func() bool {
		select {
		case out = <-res:
			return true
		default:
			return false
		}
	})
	if out != nil {
		t.Fatalf("client: %v", out)
	}
	runUntil(t, l, 10*time.Second, func() bool { return lost == 2 })
	if made != 1 || codes[0] != int(ETLSPROTO) || codes[1] != 0 {
		t.Fatalf("made %d, lost codes %v", made, codes)
	}
}
