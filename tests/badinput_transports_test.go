// SPDX-License-Identifier: MIT

package tests

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	ll "github.com/libloop/libloop/bindings/go"
	"golang.org/x/sys/unix"
)

// The network functions' bad-input table: every call returns its code, and
// the loop (and a live connection on it) goes on working afterwards.
func TestBadInputNet(t *testing.T) {
	l := newLoop(t)
	loop := l.ID()
	srv, port := listenEcho(t, l, nil)

	// A stale transport id: one whose ConnectionLost has been delivered.
	a, _ := socketpair(t)
	fd, err := unix.Dup(a)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := l.OpenTransport(fd, ll.KindStream, &ll.BaseProtocol{})
	if err != nil {
		t.Fatal(err)
	}
	stale.Abort()
	for i := 0; i < 5 && !stale.Lost(); i++ {
		l.RunOnce(true)
	}
	if !stale.Lost() {
		t.Fatal("aborted transport never lost")
	}
	staleSrv, err := l.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return &echoProto{} })
	if err != nil {
		t.Fatal(err)
	}
	staleSrvID := staleSrv.ID()
	staleSrv.Release()

	out := newOut(t)
	cbuf, _ := ll.NewCBuf(256)
	defer cbuf.Free()
	p, buf := ll.ProtocolFnPtr(), cbuf.Ptr()
	host, _ := ll.NewCString("127.0.0.1")
	defer host.Free()
	h := host.Ptr()

	badTransports := map[string]uint64{
		"id 0":             0,
		"stale":            stale.ID(),
		"wrong kind: loop": loop,
		"wrong kind: srv":  srv.ID(),
		"forged":           0xdead00000000beef,
		"stale server":     staleSrvID,
	}
	// Evaluated per id, so a call that a kind accepts is never made with it.
	calls := map[string]func(id uint64) int32{
		"write":              func(id uint64) int32 { return raw.TransportWrite(id, buf, 1) },
		"write_eof":          func(id uint64) int32 { return raw.TransportWriteEOF(id) },
		"can_write_eof":      func(id uint64) int32 { return raw.TransportCanWriteEOF(id) },
		"close":              func(id uint64) int32 { return raw.TransportClose(id) },
		"abort":              func(id uint64) int32 { return raw.TransportAbort(id) },
		"pause_reading":      func(id uint64) int32 { return raw.TransportPauseReading(id) },
		"resume_reading":     func(id uint64) int32 { return raw.TransportResumeReading(id) },
		"is_reading":         func(id uint64) int32 { return raw.TransportIsReading(id) },
		"is_closing":         func(id uint64) int32 { return raw.TransportIsClosing(id) },
		"set_limits":         func(id uint64) int32 { return raw.TransportSetWriteBufferLimits(id, 0, 0) },
		"get_buffer_size":    func(id uint64) int32 { return raw.TransportGetWriteBufferSize(id, out.Ptr()) },
		"fd":                 func(id uint64) int32 { return raw.TransportFD(id) },
		"sockname":           func(id uint64) int32 { return raw.TransportSockname(id, buf, out.Ptr()) },
		"peername":           func(id uint64) int32 { return raw.TransportPeername(id, buf, out.Ptr()) },
		"sendfile":           func(id uint64) int32 { return raw.TransportSendfile(id, 0, 0, 0, out.Ptr()) },
		"sendto":             func(id uint64) int32 { return raw.TransportSendto(id, buf, 1, nil, 0) },
		"set_protocol":       func(id uint64) int32 { return raw.TransportSetProtocol(id, 0, 0) },
		"server_close":       func(id uint64) int32 { return raw.ServerClose(id) },
		"server_port":        func(id uint64) int32 { return raw.ServerPort(id, out.Ptr()) },
		"server_num_socks":   func(id uint64) int32 { return raw.ServerNumSockets(id) },
		"server_sockname":    func(id uint64) int32 { return raw.ServerSockname(id, 0, buf, out.Ptr()) },
		"set_event_batch":    func(id uint64) int32 { return raw.SetEventBatch(id, 0, 0) },
		"tcp_connect (loop)": func(id uint64) int32 { return raw.TCPConnect(id, h, 80, 0, 0, out.Ptr()) },
	}
	for name, id := range badTransports {
		for fn, call := range calls {
			want := cEBADHANDLE
			switch {
			case name == "wrong kind: loop" && (fn == "set_event_batch" || fn == "tcp_connect (loop)"):
				continue // a loop id is right for these
			case name == "wrong kind: srv" && len(fn) > 7 && fn[:7] == "server_":
				continue // a server id is right for these
			}
			expect(t, name+" "+fn, call(id), want)
		}
	}
	// The idiomatic layer returns the same codes for a lost transport.
	expectErr(t, "Transport.Write after lost", stale.Write([]byte("x")), cEBADHANDLE)
	expectErr(t, "released Server.Close", staleSrv.Close(), cEBADHANDLE)

	// Bad values on a good loop.
	for _, c := range []struct {
		what string
		rc   int32
		want int
	}{
		{"tcp_connect port -1", raw.TCPConnect(loop, h, -1, 0, 0, out.Ptr()), cEINVAL},
		{"tcp_connect port 70000", raw.TCPConnect(loop, h, 70000, 0, 0, out.Ptr()), cEINVAL},
		{"tcp_connect NULL host", raw.TCPConnect(loop, nil, 80, 0, 0, out.Ptr()), cEINVAL},
		{"tcp_connect NULL out", raw.TCPConnect(loop, h, 80, 0, 0, nil), cEINVAL},
		{"tcp_listen port -1", raw.TCPListen(loop, h, -1, 0, 0, p, 0, out.Ptr()), cEINVAL},
		{"tcp_listen port 70000", raw.TCPListen(loop, h, 70000, 0, 0, p, 0, out.Ptr()), cEINVAL},
		{"tcp_listen backlog -1", raw.TCPListen(loop, h, 0, -1, 0, p, 0, out.Ptr()), cEINVAL},
		{"tcp_listen flags 2", raw.TCPListen(loop, h, 0, 0, 2, p, 0, out.Ptr()), cEINVAL},
		{"tcp_listen backlog -1", raw.TCPListen(loop, h, 0, -1, 0, p, 0, out.Ptr()), cEINVAL},
		{"tcp_listen NULL out", raw.TCPListen(loop, h, 0, 0, 0, p, 0, nil), cEINVAL},
		{"unix_connect NULL path", raw.UnixConnect(loop, nil, 0, 0, out.Ptr()), cEINVAL},
		{"unix_listen NULL path", raw.UnixListen(loop, nil, 0, p, 0, out.Ptr()), cEINVAL},
		{"transport_open fd -1", raw.TransportOpen(loop, -1, cStream, 0, 0, out.Ptr()), eBADF},
		{"transport_open kind 0", openDup(t, loop, a, 0, out.Ptr()), cEINVAL},
		{"transport_open kind 5", openDup(t, loop, a, 5, out.Ptr()), cEINVAL},
		{"transport_open NULL out", openDup(t, loop, a, cStream, nil), cEINVAL},
		{"udp_open port -1", raw.UDPOpen(loop, h, -1, nil, 0, 0, 0, 0, out.Ptr()), cEINVAL},
		{"udp_open port 70000", raw.UDPOpen(loop, nil, 0, h, 70000, 0, 0, 0, out.Ptr()), cEINVAL},
		{"udp_open no side", raw.UDPOpen(loop, nil, 0, nil, 0, 0, 0, 0, out.Ptr()), cEINVAL},
		{"getaddrinfo NULL host and service", raw.GetAddrInfo(loop, nil, nil, 0, 0, 0, out.Ptr()), cEINVAL},
		{"getaddrinfo NULL out", raw.GetAddrInfo(loop, h, nil, 0, 0, 0, nil), cEINVAL},
	} {
		expect(t, c.what, c.rc, c.want)
	}
	// A regular file cannot be polled.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o600)
	rf, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	expect(t, "transport_open regular file", raw.TransportOpen(loop, int32(rf.Fd()), cStream, 0, 0, out.Ptr()), ePERM)

	// Bad values on a live transport and server.
	var live *ll.Transport
	c := &collector{}
	c.onMade = func(tr *ll.Transport) {
		live = tr
		id := tr.ID()
		expect(t, "write NULL data", raw.TransportWrite(id, nil, 5), cEINVAL)
		expect(t, "limits low > high", raw.TransportSetWriteBufferLimits(id, 10, 20), cEINVAL)
		expect(t, "get_buffer_size NULL out", raw.TransportGetWriteBufferSize(id, nil), cEINVAL)
		expect(t, "sockname NULL len", raw.TransportSockname(id, buf, nil), cEINVAL)
		expect(t, "sendto address on a stream", raw.TransportSendto(id, buf, 1, buf, 16), cEINVAL)
		expect(t, "sendfile offset -1", raw.TransportSendfile(id, 0, -1, 0, out.Ptr()), cEINVAL)
		expect(t, "sendfile count -1", raw.TransportSendfile(id, 0, 0, -1, out.Ptr()), cEINVAL)
		expect(t, "sendfile fd -1", raw.TransportSendfile(id, -1, 0, 0, out.Ptr()), eBADF)
		expect(t, "server_sockname index 99", raw.ServerSockname(srv.ID(), 99, buf, out.Ptr()), cEINVAL)
		expect(t, "server_port NULL", raw.ServerPort(srv.ID(), nil), cEINVAL)
		// After all that, the connection still echoes.
		tr.Write([]byte("alive"))
		tr.WriteEOF()
	}
	c.onLost = func(*ll.Transport) { l.Stop() }
	dial(t, l, port, c)
	runNet(t, l, 10*time.Second)
	if string(c.data) != "alive" || live == nil {
		t.Fatalf("after bad calls the echo gave %q", c.data)
	}
	// The idiomatic layer refuses out-of-range values before the call.
	_, err = l.DialTCP("127.0.0.1", 1<<40, c)
	expectErr(t, "DialTCP port 2^40", err, cEINVAL)
	_, err = l.ListenTCP("127.0.0.1", 70000, func() ll.Protocol { return nil })
	expectErr(t, "ListenTCP port 70000", err, cEINVAL)
	_, err = l.ListenTCP("127.0.0.1", 0, nil)
	expectErr(t, "ListenTCP nil factory", err, cEINVAL)
	_, err = l.OpenTransport(-1, ll.KindStream, c)
	expectErr(t, "OpenTransport fd -1", err, eBADF)

	// A closed loop refuses new transports.
	l2 := newLoop(t)
	l2.Close()
	_, err = l2.DialTCP("127.0.0.1", port, c)
	expectErr(t, "DialTCP on a closed loop", err, cECLOSED)
	_, err = l2.ListenTCP("127.0.0.1", 0, func() ll.Protocol { return nil })
	expectErr(t, "ListenTCP on a closed loop", err, cECLOSED)
	_, err = l2.OpenUDP("127.0.0.1", 0, "", 0, c)
	expectErr(t, "OpenUDP on a closed loop", err, cECLOSED)
}

// openDup calls ll_transport_open on a duplicate of fd, which it closes
// unless the call adopted it.
func openDup(t *testing.T, loop uint64, fd int, kind int32, out unsafe.Pointer) int32 {
	t.Helper()
	d, err := unix.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	rc := raw.TransportOpen(loop, int32(d), kind, 0, 0, out)
	if rc < 0 {
		unix.Close(d)
	}
	return rc
}
