// SPDX-License-Identifier: MIT

package libloop

import (
	"bytes"
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// readingHost is a DatagramReader as capi's C path is: it reads with
// recvfrom and delivers each datagram as it reads it (recording "r:" and
// the payload), stops at the first one its transport may not hear and
// queues it and the rest it read with QueueDatagram. Events it gets
// through Deliver are recorded with "d:". served counts the readinesses
// it served; refuse makes it decline them.
type readingHost struct {
	checkingSink
	got     []string
	served  int
	refuse  bool
	err     syscall.Errno // returned (once) by the next read
	onRead  func(tr *Transport, n int)
	perRead int // datagrams read before delivering (a recvmmsg's batch)
}

func newReadingHost() *readingHost {
	h := &readingHost{perRead: 8}
	h.buf = make([]byte, readBufferSize)
	h.deliver = func(ev *Event) {
		switch ev.Kind {
		case DatagramReceived:
			h.got = append(h.got, "d:"+string(ev.Data))
		case ErrorReceived:
			h.got = append(h.got, "e:"+unix.Errno(-ev.Code).Error())
		}
	}
	return h
}

func (h *readingHost) ReadDatagrams(tr *Transport, max int) (bool, syscall.Errno) {
	if h.refuse {
		return false, 0
	}
	h.served++
	if e := h.err; e != 0 {
		h.err = 0
		return true, e
	}
	for got := 0; got < max; {
		var batch [][]byte
		var addrs [][]byte
		for len(batch) < min(h.perRead, max-got) {
			buf := make([]byte, 65536)
			n, from, err := unix.Recvfrom(tr.FD(), buf, unix.MSG_DONTWAIT)
			if err != nil {
				break
			}
			batch = append(batch, buf[:n])
			addrs = append(addrs, sockaddrBytes(from))
		}
		got += len(batch)
		for i := range batch {
			if !tr.ReadsDelivered() {
				for k := i; k < len(batch); k++ {
					tr.QueueDatagram(batch[k], addrs[k])
				}
				return true, 0
			}
			h.got = append(h.got, "r:"+string(batch[i]))
			if h.onRead != nil {
				h.onRead(tr, len(h.got))
			}
		}
		if len(batch) < h.perRead {
			break
		}
	}
	return true, 0
}

// sockaddrBytes is from as a raw struct sockaddr_in (the test's senders
// are IPv4).
func sockaddrBytes(from unix.Sockaddr) []byte {
	a, ok := from.(*unix.SockaddrInet4)
	if !ok {
		return nil
	}
	raw := make([]byte, 16)
	raw[0], raw[1] = unix.AF_INET, 0
	raw[2], raw[3] = byte(a.Port>>8), byte(a.Port)
	copy(raw[4:8], a.Addr[:])
	return raw
}

// hostReadRig is a host-protocol UDP transport on a loop whose host is h,
// and a plain socket sending to it.
func hostReadRig(t *testing.T, h *readingHost) (*Loop, *Transport, *net.UDPConn) {
	l := newTestLoop(t)
	l.SetHost(h)
	tr, err := l.OpenUDP("127.0.0.1", 0, "", 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Abort() })
	raw, _ := tr.SockName()
	c, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: SockaddrPort(raw)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return l, tr, c
}

func sendAll(t *testing.T, c *net.UDPConn, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		if _, err := c.Write([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
}

func runFew(l *Loop) {
	for range 4 {
		l.RunOnce(true)
	}
}

func wantGot(t *testing.T, h *readingHost, want ...string) {
	t.Helper()
	if len(h.got) != len(want) {
		t.Fatalf("got %q, want %q", h.got, want)
	}
	for i := range want {
		if h.got[i] != want[i] {
			t.Fatalf("got %q, want %q", h.got, want)
		}
	}
}

// The host serves the readiness of its own transport: the datagrams reach
// it as it reads them, none through Deliver.
func TestHostReadDatagramsServed(t *testing.T) {
	h := newReadingHost()
	l, _, c := hostReadRig(t, h)
	runFew(l)
	sendAll(t, c, "a", "b", "c")
	runFew(l)
	wantGot(t, h, "r:a", "r:b", "r:c")
	if h.served == 0 {
		t.Fatal("the host never served a readiness")
	}
}

// The loop reads itself when the host declines, when the transport has a
// Go protocol, and in debug mode.
func TestHostReadDatagramsNotServed(t *testing.T) {
	for _, c := range []string{"declined", "go protocol", "debug"} {
		t.Run(c, func(t *testing.T) {
			h := newReadingHost()
			l, tr, conn := hostReadRig(t, h)
			var viaProto []string
			switch c {
			case "declined":
				h.refuse = true
			case "go protocol":
				tr.SetProtocol(func(ev *Event) bool {
					if ev.Kind == DatagramReceived {
						viaProto = append(viaProto, string(ev.Data))
					}
					return false
				})
			case "debug":
				l.SetDebug(true)
			}
			runFew(l)
			sendAll(t, conn, "a", "b")
			runFew(l)
			if h.served != 0 {
				t.Fatalf("the host served %d readinesses", h.served)
			}
			if c == "go protocol" {
				if len(viaProto) != 2 || viaProto[0] != "a" || viaProto[1] != "b" {
					t.Fatalf("the Go protocol got %q", viaProto)
				}
				return
			}
			wantGot(t, h, "d:a", "d:b")
		})
	}
}

// A pause made while the host delivers stops it at once; the datagrams it
// read after that are held and come, in order, after the resume, before
// anything newer.
func TestHostReadDatagramsPausedMidRead(t *testing.T) {
	h := newReadingHost()
	l, tr, c := hostReadRig(t, h)
	h.onRead = func(tr *Transport, n int) {
		if n == 2 {
			tr.PauseReading()
		}
	}
	runFew(l)
	sendAll(t, c, "1", "2", "3", "4", "5")
	runFew(l)
	wantGot(t, h, "r:1", "r:2")
	h.onRead = nil
	tr.ResumeReading()
	sendAll(t, c, "6")
	runFew(l)
	// 3..5 were read by the host and queued: they come through the loop's
	// delivery (the replay, queued by the readiness that finds 6), then 6
	// is read by the host: the events queued before a readiness the host
	// serves are delivered first, nothing it delivers overtakes them.
	wantGot(t, h, "r:1", "r:2", "d:3", "d:4", "d:5", "r:6")
}

// A close made while the host delivers stops it; what it read after is
// dropped.
func TestHostReadDatagramsClosedMidRead(t *testing.T) {
	h := newReadingHost()
	l, _, c := hostReadRig(t, h)
	h.onRead = func(tr *Transport, n int) {
		if n == 2 {
			tr.Close()
		}
	}
	runFew(l)
	sendAll(t, c, "1", "2", "3", "4")
	runFew(l)
	wantGot(t, h, "r:1", "r:2")
}

// An error that ends the host's read (an ICMP error) is reported as
// ErrorReceived, and reading goes on at the next readiness.
func TestHostReadDatagramsError(t *testing.T) {
	h := newReadingHost()
	l, _, c := hostReadRig(t, h)
	runFew(l)
	h.err = unix.ECONNREFUSED
	sendAll(t, c, "a")
	runFew(l)
	wantGot(t, h, "e:"+unix.ECONNREFUSED.Error(), "r:a")
}

// QueueDatagram keeps the bytes and the address it was given (copies: the
// caller's memory is reused).
func TestQueueDatagramCopies(t *testing.T) {
	h := newReadingHost()
	var addr []byte
	h.deliver = func(ev *Event) {
		if ev.Kind == DatagramReceived {
			h.got = append(h.got, "d:"+string(ev.Data))
			addr = bytes.Clone(ev.Addr)
		}
	}
	l, tr, _ := hostReadRig(t, h)
	runFew(l)
	data, a := []byte("xyz"), []byte{2, 0, 1, 2, 127, 0, 0, 1}
	tr.QueueDatagram(data, a)
	copy(data, "___")
	a[2] = 9
	runFew(l)
	wantGot(t, h, "d:xyz")
	if !bytes.Equal(addr, []byte{2, 0, 1, 2, 127, 0, 0, 1}) {
		t.Fatalf("address %v", addr)
	}
}
